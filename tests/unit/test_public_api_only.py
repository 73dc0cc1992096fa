"""jobgate uses its dependencies through their public API, and one HTTP client library.

A private name (`_something`) of SQLAlchemy, httpx2 or httpcore2 can change in any
release; CONVENTIONS.md (the data layer, outbound HTTP) rules them out. This reads
the source of `app/` and `jobgate_client/` and fails on one: an import from a private
module, an attribute reached with a leading underscore on a name bound to one of those
libraries, or one of the internals an earlier data layer ran on. And only httpx2 is
imported as an HTTP client (the `mcp` SDK may pull httpx in; jobgate never imports it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("sqlalchemy", "httpx2", "httpcore2", "sqlmodel")
# Underscored names that are the libraries' documented public API (SQLAlchemy's Row
# keeps its methods out of the column namespace with a leading underscore).
PUBLIC_UNDERSCORED = {"_mapping", "_asdict", "_fields", "_t", "_tuple"}
INTERNALS = re.compile(
    r"_compile_w_cache|_bind_processors|_result_columns|_cached_result_processor"
    r"|_within_exec_param_key_getter|_process_parameters_for_postcompile|_group_number"
    r"|_collected_params|class_manager\.new_instance|_init_transport|_generate_cache_key"
)


def sources() -> list[Path]:
    return sorted(p for d in ("app", "jobgate_client") for p in (ROOT / d).rglob("*.py"))


def private_uses(path: Path) -> list[str]:
    """Where `path` reaches into a private name of one of LIBRARIES."""
    text = path.read_text()
    tree = ast.parse(text)
    bound: set[str] = set()  # local names bound to a library or to something imported from it
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    if any(part.startswith("_") for part in alias.name.split(".")):
                        found.append(f"import {alias.name}")
                    bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in LIBRARIES:
                if any(part.startswith("_") for part in node.module.split(".")):
                    found.append(f"from {node.module} import ...")
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"from {node.module} import {alias.name}")
                    bound.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            if node.attr.startswith("__") or node.attr in PUBLIC_UNDERSCORED:
                continue
            root = node.value
            while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and root.id in bound:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    found += [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
        for m in INTERNALS.finditer(text)
    ]
    return found


def test_no_private_name_of_sqlalchemy_httpx2_or_httpcore2() -> None:
    offenders = {str(p.relative_to(ROOT)): hits for p in sources() if (hits := private_uses(p))}
    assert offenders == {}


def test_the_check_finds_what_it_is_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import httpx2\nfrom httpcore2._utils import is_socket_readable\n"
        "from sqlalchemy import select\n"
        "x = httpx2.AsyncClient()._transport\ny = select(1)._compile_w_cache\n"
        "def f(compiled):\n    return compiled._bind_processors\n"
    )
    hits = private_uses(bad)
    assert "from httpcore2._utils import ..." in hits
    assert any("httpx2.AsyncClient()._transport" in h for h in hits)
    assert any("select(1)._compile_w_cache" in h for h in hits)
    assert any("_bind_processors" in h for h in hits)
    fine = tmp_path / "fine.py"
    fine.write_text("import httpx2\nrow = None\nv = row._mapping\nc = httpx2.AsyncClient()\n")
    assert private_uses(fine) == []


HTTPX = re.compile(r"^\s*(import httpx\b(?!2)|from httpx\b(?!2))", re.MULTILINE)


def test_only_httpx2_is_imported_as_an_http_client() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in sources() if HTTPX.search(p.read_text())]
    assert offenders == []
    assert HTTPX.search("import httpx\n") and HTTPX.search("    from httpx import Client\n")
    assert not HTTPX.search("import httpx2\nfrom httpx2 import Client\n")
