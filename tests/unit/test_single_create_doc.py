"""docs/single-create.md names exactly which transport failures are ambiguous and which
prove the request never left; both lists are checked against `NEVER_LEFT`."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2

from app.providers.calls.http_util import NEVER_LEFT, never_left

DOC = (Path(__file__).resolve().parents[2] / "docs" / "single-create.md").read_text()


def _named(text: str) -> set[str]:
    """httpx2 exception classes named in backticks in `text`."""
    names = set(re.findall(r"`([A-Z][A-Za-z]+)`", text))
    return {n for n in names if isinstance(getattr(httpx2, n, None), type)}


def _section(start: str, end: str) -> str:
    i = DOC.index(start)
    return DOC[i : DOC.index(end, i)]


def test_every_failure_the_doc_calls_ambiguous_is_not_proof() -> None:
    ambiguous = _named(_section("Exactly these are", "Nothing else is"))
    assert ambiguous >= {"WriteError", "ReadError", "RemoteProtocolError", "ReadTimeout"}
    for name in ambiguous:
        assert not never_left(getattr(httpx2, name)("x")), name


def test_the_never_sent_row_names_exactly_never_left() -> None:
    row = next(line for line in DOC.splitlines() if line.startswith("| **never sent** |"))
    assert _named(row) == {cls.__name__ for cls in NEVER_LEFT}


def test_every_transport_failure_is_either_listed_as_proof_or_as_ambiguous() -> None:
    listed = _named(_section("Exactly these are", "## What jobgate guarantees"))
    transport = {
        name
        for name in dir(httpx2)
        if isinstance(getattr(httpx2, name), type)
        and issubclass(getattr(httpx2, name), httpx2.TransportError)
        and name not in {"TransportError", "NetworkError", "TimeoutException", "ProtocolError"}
    }
    # Failures that cannot happen on a create jobgate sends (no proxy, no unsupported
    # scheme past the profile check, no local protocol misuse, no event stream) need
    # not be named.
    not_on_a_create = {"ProxyError", "UnsupportedProtocol", "LocalProtocolError", "SSEError"}
    assert transport - not_on_a_create <= listed, transport - not_on_a_create - listed
