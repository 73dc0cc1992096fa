"""Work a request starts that must outlive it, such as a provider create slower than the
create request may wait (`JOBGATE_CREATE_ANSWER_SECONDS`).

The request waits for such a task only up to its own bound and never cancels it: the
task keeps the lease it was started under and ends on its own. The process keeps a
reference to every task (an unreferenced task may be garbage collected mid-flight),
logs the failure of any, and awaits them all before it shuts down, as a server waits
for its open requests.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Background:
    """The tasks of one process that outlive the request that started them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run `work` as a task of its own: a request that stops waiting (or is cancelled)
        leaves it running."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("background task %s failed: %s: %s", task.get_name(), type(exc).__name__, exc)

    def __len__(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every task still running (at shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
