"""Slow and bloated clients against `jobgate serve`: a request head that does not arrive
in time is answered 408 and closed, one that is too large 431, a body that stops halfway
408; normal requests are untouched (docs/operations.md, "Limits on requests").

Raw sockets against a real process; the limits are set small through settings so the
test waits half a second, not the defaults.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.support.processes import gateway_env, gateway_process
from tests.support.timing import QUICK_S, budget

HEAD_S = 0.5
BODY_S = 0.5
MAX_HEAD = 4096


@pytest.fixture(scope="module")
def served(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    tmp: Path = tmp_path_factory.mktemp("slow-gw")
    env = gateway_env(
        module_database_url,
        mock_url,
        tmp / "data",
        request_head_timeout_seconds=HEAD_S,
        request_body_timeout_seconds=BODY_S,
        max_header_bytes=MAX_HEAD,
    )
    with gateway_process(env, tmp / "gw.log") as (_, url):
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def connect(served: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(served, timeout=budget(QUICK_S))
    return sock


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a timeout fails the test)."""
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    return got


def test_a_head_that_stops_halfway_is_answered_408_and_closed(served: tuple[str, int]) -> None:
    with connect(served) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /v1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 408 "), got
    assert b'"request_timeout"' in got
    assert time.monotonic() - started < budget(QUICK_S)


def test_a_trickled_head_does_not_reset_the_clock(served: tuple[str, int]) -> None:
    with connect(served) as sock:
        sock.sendall(b"GET /v1/healthz HTTP/1.1\r\n")
        time.sleep(HEAD_S / 2)
        sock.sendall(b"Host: 127.0.0.1\r\n")  # a byte now and then keeps nothing alive
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 408 "), got


def test_a_head_over_the_limit_is_answered_431(served: tuple[str, int]) -> None:
    with connect(served) as sock:
        big = b"x" * (MAX_HEAD + 1)
        sock.sendall(b"GET /v1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + big + b"\r\n\r\n")
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 431 "), got
    assert b'"headers_too_large"' in got


def test_a_body_that_stops_halfway_is_answered_408(served: tuple[str, int]) -> None:
    with connect(served) as sock:
        sock.sendall(
            b"POST /v1/operations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nIdempotency-Key: slow-body\r\n"
            b"Content-Length: 100\r\n\r\n" + b'{"provider": "mock"'
        )
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 408 "), got
    assert b'"request_timeout"' in got and b"connection: close" in got.lower()


def test_a_kept_alive_connection_gets_the_same_bound_for_its_next_head(
    served: tuple[str, int],
) -> None:
    with connect(served) as sock:
        sock.sendall(b"GET /v1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while not first.endswith(b'"service": "jobgate"}'):
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first
        sock.sendall(b"GET /v1/healthz HTTP/1.1\r\n")  # the next one, never finished
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 408 "), got


def test_ordinary_requests_are_untouched(served: tuple[str, int]) -> None:
    with connect(served) as sock:
        sock.sendall(
            b"GET /v1/operations HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Fill: "
            + b"y" * (MAX_HEAD // 2)
            + b"\r\nConnection: close\r\n\r\n"
        )
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 200 "), got[:200]


def test_a_pipelined_request_that_holds_is_not_cut_off(served: tuple[str, int]) -> None:
    """Two requests in one write: the second (a wait longer than the head timeout) is
    already in when the first is answered, so no head timer may run for it."""
    host, port = served
    r = httpx2.post(
        f"http://{host}:{port}/v1/operations",
        json={
            "provider": "mock",
            "kind": "report",
            "input": {"scenario": {"name": "never_finishes"}},
            "deadlines": {"create_seconds": 600, "result_seconds": 600},
        },
        headers={"Idempotency-Key": f"pipelined-{time.monotonic_ns()}"},
        timeout=10,
    )
    assert r.status_code == 202, r.text
    op_id = r.json()["operation_id"]
    with connect(served) as sock:
        sock.sendall(
            b"GET /v1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            b"GET /v1/operations/"
            + op_id.encode()
            + b"/wait?timeout="
            + str(HEAD_S * 3).encode()
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        got = answer(sock)
    assert got.count(b"HTTP/1.1 200 ") == 2, got[:600]
    assert b"408" not in got.split(b"\r\n\r\n", 1)[0]
