"""A create whose TLS handshake fails is never sent: the request is written only after
the handshake, so the failure is proof that nothing was made (docs/single-create.md,
"Nothing was made"), even for a provider with neither a token nor a lookup.

The provider's address is a local server that accepts the connection and answers the
TLS ClientHello with plain bytes, so every handshake fails; it records what each
connection carried, and the test checks no request line ever reached it.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Gateway
from tests.support.single_create import PROFILES, exchanges, transitions


class NotTls:
    """Accepts connections on 127.0.0.1, keeps the first bytes of each, answers in clear."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(5)
                try:
                    self.received.append(conn.recv(65536))
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def not_tls() -> Iterator[NotTls]:
    server = NotTls()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def gateway_settings(not_tls: NotTls) -> dict[str, Any]:
    return {"profiles_dir": PROFILES, "mock_provider_url": f"https://127.0.0.1:{not_tls.port}"}


async def test_a_failed_tls_handshake_goes_again_then_fails_saying_nothing_was_sent(
    gateway: Gateway, not_tls: NotTls
) -> None:
    body = {"provider": "mock_blind", "kind": "report", "input": {"scenario": {"name": "fast"}}}
    r = await gateway.http.post(
        "/v1/operations",
        json={**body, "deadlines": {"create_seconds": 60}},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    made = r.json()
    op_id = made["operation_id"]
    assert made["guarantees"]["single_create"] == "none"
    assert (made["state"], made["done"]) == ("create_pending", False), made
    final = await gateway.run_until_done(op_id, step=5)
    assert final["state"] == "failed", final
    assert final["error"]["code"] == "create_not_sent"
    assert "nothing was sent and nothing was started" in final["error"]["message"]
    assert "NEEDS A HUMAN" not in final["message"]
    items = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    path = transitions(items)
    assert "create_unknown" not in path and "create_unconfirmed" not in path, path
    sent = exchanges(items, "create")
    assert len(sent) >= 2  # it went again after the first proof
    assert all("ConnectError" in (e["data"]["error"] or "") for e in sent)
    # What the provider's address saw: TLS ClientHellos (record type 0x16), never a request.
    assert len(not_tls.received) >= len(sent)
    assert all(first[:1] == b"\x16" for first in not_tls.received), not_tls.received
    assert not any(b"POST" in first for first in not_tls.received)
