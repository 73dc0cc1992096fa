"""Outbound job webhooks of the mock provider, signed per Standard Webhooks.

Deliveries go through one queue and one background worker per event loop, so they
leave in the order they were planned (the deliberate out-of-order `webhook_duplicate`
case relies on that) and never block or fail the request that triggered them: a
receiver that is down or slow only shows up as a log line and a lower
`webhooks_sent` count.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx2
from standardwebhooks.webhooks import Webhook

from jobgate_fakes.mock.scenarios import WebhookEvent

log = logging.getLogger("jobgate.mock_provider.webhooks")

# (job_id, webhook id, body) or None to stop the worker.
_Item = tuple[str, str, str] | None


def webhook_body(job_id: str, state: str, progress: tuple[int, int]) -> str:
    """The JSON body of one `job.<state>` webhook (this exact string is what gets signed)."""
    payload: dict[str, Any] = {
        "type": f"job.{state}",
        "data": {
            "job_id": job_id,
            "state": state,
            "progress": {"completed": progress[0], "total": progress[1]},
        },
    }
    return json.dumps(payload, separators=(",", ":"))


def signed_headers(secret: str | None, msg_id: str, body: str, at: datetime) -> dict[str, str]:
    """Standard Webhooks headers for `body`; without a secret the signature is left out."""
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
    }
    if secret:
        headers["webhook-signature"] = Webhook(secret).sign(msg_id, at, body)
    return headers


class WebhookSender:
    """Queues webhooks and delivers them from a background task, one attempt each."""

    def __init__(
        self,
        url: str | None,
        secret: str | None,
        on_delivered: Callable[[str], None] | None = None,
        timeout: float = 5.0,
    ) -> None:
        self.url = url
        self.secret = secret
        self._on_delivered = on_delivered
        self._timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None
        if url and secret:
            Webhook(secret)  # fail at start on a malformed secret, not at the first delivery
        elif url:
            log.warning("JOBGATE_MOCK_WEBHOOK_SECRET is unset: webhooks go out unsigned")

    @property
    def enabled(self) -> bool:
        """Whether a webhook URL is configured."""
        return bool(self.url)

    def enqueue(self, job_id: str, events: Sequence[WebhookEvent]) -> None:
        """Plan deliveries for `events` of one job; returns at once. Must run on the loop."""
        if not self.enabled or not events:
            return
        queue = self._ensure_worker()
        msg_id = ""
        for event in events:
            # A duplicate reuses the previous message id, exactly as a retrying provider would.
            if not (event.same_id_as_previous and msg_id):
                msg_id = "msg_" + secrets.token_hex(12)
            queue.put_nowait((job_id, msg_id, webhook_body(job_id, event.state, event.progress)))

    def _ensure_worker(self) -> asyncio.Queue[_Item]:
        loop = asyncio.get_running_loop()
        # A new loop (e.g. the app served again) needs its own queue and worker.
        if self._queue is None or self._task is None or self._loop is not loop or self._task.done():
            self._loop = loop
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="mock-webhooks")
        return self._queue

    async def _run(self, queue: asyncio.Queue[_Item]) -> None:
        async with httpx2.AsyncClient(timeout=self._timeout) as client:
            while (item := await queue.get()) is not None:
                await self._deliver(client, *item)

    async def _deliver(
        self, client: httpx2.AsyncClient, job_id: str, msg_id: str, body: str
    ) -> None:
        assert self.url is not None
        # The timestamp is taken at delivery so a queued message is never "too old".
        headers = signed_headers(self.secret, msg_id, body, datetime.now(UTC))
        try:
            response = await client.post(self.url, content=body.encode(), headers=headers)
        except httpx2.HTTPError as exc:
            log.warning("webhook %s for %s not delivered: %r", msg_id, job_id, exc)
            return
        except Exception:  # never let one bad delivery stop the worker
            log.exception("webhook %s for %s failed", msg_id, job_id)
            return
        if response.status_code >= 300:
            log.warning("webhook %s for %s answered %s", msg_id, job_id, response.status_code)
        if self._on_delivered is not None:
            try:
                self._on_delivered(job_id)
            except Exception:
                log.exception("counting webhook %s failed", msg_id)

    async def aclose(self, timeout: float = 2.0) -> None:
        """Let queued deliveries finish (bounded by `timeout`), then stop the worker."""
        task, queue = self._task, self._queue
        self._task = self._queue = self._loop = None
        if task is None or queue is None or task.done():
            return
        loop = task.get_loop()
        if loop is not asyncio.get_running_loop():
            # Started on another (finished) loop: only that loop may touch the task.
            if not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)
            return
        queue.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            task.cancel()
