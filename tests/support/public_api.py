"""The public-API guard: where project code reaches into a dependency's private parts.

CONVENTIONS.md rules out private names of dependencies: they change in any release. This
reads source files with `ast` and reports, for every library the project imports:

- an import of a private module or a private name (`from httpcore2._utils import x`);
- a private attribute (`x._y`) on anything but `self` or `cls`: a local variable, a
  parameter, a call's result, an item, a library name (the project's own classes keep
  their private attributes to themselves, so this rule needs no types);
- `self._y` inside a subclass of a library class, unless the class itself declares `_y`
  (in its body or by assigning it): otherwise it is the library's private attribute;
- `getattr`/`setattr`/`hasattr`/`delattr`, `operator.attrgetter` or `__dict__`/`vars()`
  with a private name as a literal;
- subclassing a library class that is not documented as a base class (`ALLOWED_BASES`);
  the deliberate exceptions are `DELIBERATE`, each with its reason and the version cap
  pyproject.toml must hold;
- monkeypatching: assigning, deleting or `setattr` on an attribute of a library module or
  class.

Underscored names that are documented public API (`PUBLIC_UNDERSCORED`: the namedtuple
methods, SQLAlchemy's `Row._mapping`) and dunders are not private.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PROJECT = ("app", "jobgate_client", "jobgate_fakes", "jobgate_adapters")
PUBLIC_UNDERSCORED = frozenset(
    {"_mapping", "_asdict", "_fields", "_replace", "_make", "_t", "_tuple"}
)

# Library classes the project subclasses, each documented by its library as a base class.
ALLOWED_BASES = frozenset(
    {
        "pydantic.BaseModel",  # models
        "pydantic.json_schema.GenerateJsonSchema",  # "Customizing the JSON Schema generation"
        "pydantic_settings.BaseSettings",
        "sqlmodel.SQLModel",
        "sqlalchemy.TypeDecorator",  # "Augmenting Existing Types"
        "sqlalchemy.types.TypeDecorator",
        "fastapi.Request",  # FastAPI, "Custom Request and APIRoute class"
        "fastapi.routing.APIRoute",
        "fastapi.Response",  # "Custom Response"
        "starlette.responses.Response",
        "sse_starlette.EventSourceResponse",
        "sse_starlette.sse.EventSourceResponse",
        "httpx2.AsyncBaseTransport",  # httpx's "Custom transports"
        "httpx2.BaseTransport",
        "opentelemetry.sdk.trace.id_generator.RandomIdGenerator",  # the SDK's IdGenerator
        "mcp.types.RequestParams",  # the SDK's request types, for an extension's params
        "mcp.server.extension.Extension",  # the SDK's pluggable extension interface
        "fastapi.responses.JSONResponse",  # FastAPI, "Custom Response"
        "starlette.responses.JSONResponse",
    }
)

# Modules a library does not document: nothing is imported from them, whatever the name.
UNDOCUMENTED_MODULES = {
    "sqlalchemy.util": "SQLAlchemy's internal utilities (its docs never list them)",
    "sqlalchemy.sql.sqltypes": "the types' implementation module (sqlalchemy.types is public)",
    "httpcore2": "httpx2's transport internals (httpx2 is the API)",
}

# Deliberate exceptions: (why, the distribution, the version cap pyproject.toml holds).
DELIBERATE = {
    "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol": (
        "the request-head timeout and size bound (app/core/http/server.py): uvicorn has no "
        "public hook for either",
        "uvicorn",
        "<0.56",
    ),
}

GETTERS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


@dataclass
class Imports:
    """Local names bound by imports, to the dotted names they stand for."""

    names: dict[str, str]

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted name an expression like `a.b.C` (or `C[...]`) stands for."""
        if isinstance(node, ast.Subscript):
            node = node.value
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.names:
            return None
        return ".".join([self.names[node.id], *reversed(parts)])


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORED


def _library(dotted: str | None) -> bool:
    if not dotted:
        return False
    top = dotted.split(".")[0]
    return top not in PROJECT and top not in sys.stdlib_module_names and top != "__future__"


def _imports(tree: ast.Module, found: list[str]) -> Imports:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _library(alias.name) and any(_private(p) for p in alias.name.split(".")):
                    found.append(f"line {node.lineno}: import {alias.name}")
                if any(
                    alias.name == m or alias.name.startswith(m + ".") for m in UNDOCUMENTED_MODULES
                ):
                    found.append(f"line {node.lineno}: import {alias.name}: undocumented")
                names[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            library = _library(node.module)
            for module, why in UNDOCUMENTED_MODULES.items():
                if node.module == module or node.module.startswith(module + "."):
                    found.append(f"line {node.lineno}: from {node.module} import ...: {why}")
            if library and any(_private(p) for p in node.module.split(".")):
                found.append(f"line {node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if library and _private(alias.name):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return Imports(names)


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _declared(cls: ast.ClassDef) -> set[str]:
    """Attributes a class declares itself: in its body, or assigned on `self`/`cls`."""
    names: set[str] = set()
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name):
                names.add(t.id)
            elif (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id in ("self", "cls")
            ):
                names.add(t.attr)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not cls:
            names.add(node.name)
    return names


def _classes(tree: ast.Module, imports: Imports, found: list[str]) -> None:
    own = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def library_based(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> bool:
        for base in cls.bases:
            name = (
                base.value.id
                if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name)
                else (base.id if isinstance(base, ast.Name) else None)
            )
            if name in own and name not in seen:
                if library_based(own[name], seen | {name}):
                    return True
            elif _library(imports.resolve(base)):
                return True
        return False

    for cls in own.values():
        for base in cls.bases:
            dotted = imports.resolve(base)
            if _library(dotted) and dotted not in ALLOWED_BASES and dotted not in DELIBERATE:
                found.append(
                    f"line {cls.lineno}: class {cls.name}({dotted}): not a documented base"
                )
        if not library_based(cls):
            continue
        declared = _declared(cls)
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
                and _private(node.attr)
                and node.attr not in declared
            ):
                found.append(
                    f"line {node.lineno}: {ast.unparse(node)} in {cls.name}, a library subclass"
                )


def private_uses(path: Path) -> list[str]:
    """Where `path` reaches into a private part of a dependency."""
    text = path.read_text()
    tree = ast.parse(text)
    found: list[str] = []
    imports = _imports(tree, found)
    _classes(tree, imports, found)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call):
            fn = node.func
            fname = (
                fn.id
                if isinstance(fn, ast.Name)
                else (fn.attr if isinstance(fn, ast.Attribute) else "")
            )
            if fname in GETTERS and len(node.args) > 1:
                name = _literal(node.args[1])
                if name is not None and _private(name):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
                if fname in ("setattr", "delattr") and _library(imports.resolve(node.args[0])):
                    found.append(
                        f"line {node.lineno}: {fname} on a library name: {ast.unparse(node)}"
                    )
            elif fname == "attrgetter" and any(_private(_literal(a) or "") for a in node.args):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Subscript):
            base = node.value
            is_dict = (isinstance(base, ast.Attribute) and base.attr == "__dict__") or (
                isinstance(base, ast.Call)
                and isinstance(base.func, ast.Name)
                and base.func.id == "vars"
            )
            if is_dict and _private(_literal(node.slice) or ""):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.Delete | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and _library(imports.resolve(t.value)):
                    found.append(f"line {node.lineno}: monkeypatches {ast.unparse(t)}")
    return sorted(set(found), key=lambda s: (int(s.split(":")[0].split()[1]), s))
