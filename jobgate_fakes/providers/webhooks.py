"""Outbound webhooks of the fakes that have them (OpenAI, Replicate), Standard Webhooks signed.

Both providers sign the way Standard Webhooks does (`webhook-id`, `webhook-timestamp`,
`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, secret
`whsec_<base64>`), so one outbox serves both. Deliveries leave in order from one
background task per event loop and never fail the request that planned them; every
attempt is recorded for `GET /_fake/webhooks`, and `POST /_fake/webhooks/flush` waits
until the queue is empty so tests need no sleeps.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2

from jobgate_fakes.mock.webhooks import signed_headers

log = logging.getLogger("jobgate.provider_fakes.webhooks")


def new_secret() -> str:
    """A fresh Standard Webhooks secret (`whsec_` + base64 of 32 random bytes)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


@dataclass
class Delivery:
    """One planned webhook and what became of it."""

    id: str
    url: str
    type: str
    body: str
    status: int | None = None
    error: str | None = None


class WebhookOutbox:
    """Queues signed webhooks and delivers them from a background task, one attempt each."""

    def __init__(self, secret: str, timeout: float = 5.0) -> None:
        self.secret = secret
        self.deliveries: list[Delivery] = []
        self._timeout = timeout
        self._queue: asyncio.Queue[Delivery | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def send(self, url: str, event_type: str, body: str, msg_id: str | None = None) -> None:
        """Plan one delivery of `body` (already the exact signed string); returns at once."""
        delivery = Delivery(msg_id or "msg_" + secrets.token_hex(12), url, event_type, body)
        self.deliveries.append(delivery)
        self._ensure_worker().put_nowait(delivery)

    def sent(self) -> list[dict[str, Any]]:
        """Every planned delivery with its outcome, oldest first."""
        return [asdict(d) for d in self.deliveries]

    async def flush(self) -> None:
        """Wait until every planned delivery has been attempted."""
        if self._queue is not None and self._loop is asyncio.get_running_loop():
            await self._queue.join()

    def reset(self) -> None:
        """Forget the delivery log (queued deliveries still go out)."""
        self.deliveries = []

    def _ensure_worker(self) -> asyncio.Queue[Delivery | None]:
        loop = asyncio.get_running_loop()
        if self._queue is None or self._task is None or self._loop is not loop or self._task.done():
            self._loop, self._queue = loop, asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="fake-webhooks")
        return self._queue

    async def _run(self, queue: asyncio.Queue[Delivery | None]) -> None:
        async with httpx2.AsyncClient(timeout=self._timeout) as client:
            while (delivery := await queue.get()) is not None:
                try:
                    await self._deliver(client, delivery)
                finally:
                    queue.task_done()
            queue.task_done()

    async def _deliver(self, client: httpx2.AsyncClient, delivery: Delivery) -> None:
        headers = signed_headers(self.secret, delivery.id, delivery.body, datetime.now(UTC))
        try:
            response = await client.post(delivery.url, content=delivery.body, headers=headers)
        except httpx2.HTTPError as exc:
            delivery.error = repr(exc)
            log.warning("webhook %s to %s not delivered: %r", delivery.id, delivery.url, exc)
            return
        delivery.status = response.status_code

    async def aclose(self) -> None:
        """Stop the worker after what is queued (only from the loop that runs it)."""
        task, queue = self._task, self._queue
        self._task = self._queue = self._loop = None
        if task is None or queue is None or task.done():
            return
        if task.get_loop() is not asyncio.get_running_loop():
            task.get_loop().call_soon_threadsafe(task.cancel)
            return
        queue.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(task), 2.0)
        except TimeoutError:
            task.cancel()
