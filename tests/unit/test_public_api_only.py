"""jobgate uses its dependencies through their public API, and one HTTP client library.

The guard itself is tests/support/public_api.py (what it catches is its docstring). It
reads `app/`, `jobgate_client/` and `jobgate_fakes/`; each pattern it is for is planted
below and must be caught, and code that is fine must pass.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.support.public_api import DELIBERATE, private_uses

ROOT = Path(__file__).resolve().parents[2]


def sources() -> list[Path]:
    dirs = ("app", "jobgate_client", "jobgate_fakes")
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py"))


def test_no_private_part_of_any_dependency_is_used() -> None:
    offenders = {str(p.relative_to(ROOT)): hits for p in sources() if (hits := private_uses(p))}
    assert offenders == {}


# Each pattern the guard is for, as code that a contributor might write.
PLANTED = {
    "private module import": "from httpcore2._utils import is_socket_readable\n",
    "private name import": "from sqlalchemy.engine import _thing\n",
    "import of a private module": "import sqlalchemy.sql._typing\n",
    "undocumented module": "from sqlalchemy.util import LRUCache\n",
    "attribute on a library name": "import httpx2\nx = httpx2.AsyncClient()._transport\n",
    "attribute on a call's result": "from sqlalchemy import select\ny = select(1)._compiled\n",
    "attribute on a parameter": "def f(compiled):\n    return compiled._bind_processors\n",
    "attribute on a local variable": "def f():\n    conn = make()\n    return conn._protocol\n",
    "attribute deep in a chain": "def f(request):\n    return request.scope.app._router\n",
    "attribute on an item": "def f(rows):\n    return rows[0]._keymap\n",
    "getattr with a private literal": "def f(obj):\n    return getattr(obj, '_pool')\n",
    "hasattr with a private literal": "def f(obj):\n    return hasattr(obj, '_pool')\n",
    "setattr with a private literal": "def f(obj):\n    setattr(obj, '_pool', None)\n",
    "attrgetter": "import operator\nget = operator.attrgetter('_pool')\n",
    "__dict__ item": "def f(obj):\n    return obj.__dict__['_pool']\n",
    "vars() item": "def f(obj):\n    return vars(obj)['_pool']\n",
    "self._x in a library subclass": (
        "from fastapi import Request\n"
        "class R(Request):\n    def f(self):\n        return self._receive\n"
    ),
    "self._x through a project base": (
        "from fastapi import Request\nclass A(Request):\n    pass\n"
        "class B(A):\n    def f(self):\n        return self._send\n"
    ),
    "an undocumented base class": (
        "from uvicorn.protocols.http.h11_impl import H11Protocol\nclass P(H11Protocol):\n    pass\n"
    ),
    "monkeypatching a library": "import uvicorn\nuvicorn.Server.serve = None\n",
    "monkeypatching an imported class": "from uvicorn import Server\nServer.serve = None\n",
    "monkeypatching with setattr": "import uvicorn\nsetattr(uvicorn.Server, 'serve', None)\n",
    "deleting a library attribute": "import asyncpg\ndel asyncpg.connect\n",
    "a private name of mcp": "def f(server):\n    return server._tool_manager\n",
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_the_guard_catches_each_planted_pattern(name: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(PLANTED[name])
    assert private_uses(bad), f"missed: {name}"


FINE = """\
import collections
import httpx2
from fastapi import Request
from pydantic import BaseModel, PrivateAttr

point = collections.namedtuple("point", "x y")(1, 2)
moved = point._replace(x=3)
fields = point._fields


def read(row):
    return row._mapping["id"], row._asdict()


class Own:
    def __init__(self):
        self._cache = {}

    def get(self, key):
        return self._cache.get(key), getattr(self, "__name__", None)


class Strict(Request):
    _checked = None

    async def json(self):
        if self._checked is None:
            self._checked = await self.body()
        return self._checked


class Model(BaseModel):
    _hooks: object = PrivateAttr(default=None)

    def hooks(self):
        return self._hooks


client = httpx2.AsyncClient()
client.headers["x"] = "y"
"""


def test_what_is_fine_passes(tmp_path: Path) -> None:
    fine = tmp_path / "fine.py"
    fine.write_text(FINE)
    assert private_uses(fine) == []


def test_each_deliberate_exception_is_capped_in_pyproject() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for target, (why, distribution, cap) in DELIBERATE.items():
        spec = next((d for d in deps if re.match(rf"{distribution}\b", d)), None)
        assert spec is not None and cap in spec, f"{target} ({why}) needs {distribution}{cap}"


HTTPX = re.compile(r"^\s*(import httpx\b(?!2)|from httpx\b(?!2))", re.MULTILINE)


def test_only_httpx2_is_imported_as_an_http_client() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in sources() if HTTPX.search(p.read_text())]
    assert offenders == []
    assert HTTPX.search("import httpx\n") and HTTPX.search("    from httpx import Client\n")
    assert not HTTPX.search("import httpx2\nfrom httpx2 import Client\n")
