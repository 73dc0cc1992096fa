"""No module of `app` imports itself back through others, type-checking imports counted
(the layer contracts in pyproject.toml hold packages apart; this holds modules apart
inside a package too)."""

from __future__ import annotations

import grimp


def cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Every group of modules that import one another in a circle (Tarjan's SCCs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return found


def test_no_module_of_app_is_in_an_import_cycle() -> None:
    graph = grimp.build_graph("app", exclude_type_checking_imports=False)
    assert cycles(graph, set(graph.modules)) == []


def test_a_cycle_is_found() -> None:
    graph = grimp.ImportGraph()
    for m in ("a", "b", "c"):
        graph.add_module(m)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="a")
    graph.add_import(importer="b", imported="c")
    assert cycles(graph, {"a", "b", "c"}) == [["a", "b"]]
