"""How many requests one caller holds open at once: `/wait` calls and event streams.

Each held request costs a connection, a task and a share of a database watcher for as
long as it lasts; one key opening thousands would cost every other caller. Past
`JOBGATE_MAX_HELD_PER_KEY` at once the next one is refused (429 `too_many_held`, with
`Retry-After`) before anything is held; the caller can poll, or wait for one to end.
Counted per process (each gateway process holds its own connections).
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.http.errors import ApiError

RETRY_AFTER_SECONDS = 1


class HoldLimits:
    """Per-caller counts of held requests in this process."""

    def __init__(self, per_caller: int) -> None:
        self.per_caller = per_caller
        self._held: dict[str, int] = {}

    def held(self, who: str) -> int:
        return self._held.get(who, 0)

    def total(self) -> int:
        """Held requests of every caller (tests, metrics)."""
        return sum(self._held.values())

    def acquire(self, who: str) -> Callable[[], None]:
        """Count one more held request for `who` (or 429); returns its release, which
        may be called more than once."""
        n = self._held.get(who, 0)
        if n >= self.per_caller:
            err = ApiError(
                429,
                "too_many_held",
                f"This key already holds {n} waits or event streams open, the most one key "
                "may; end one, or read the operation with GET instead.",
                {"limit": self.per_caller},
            )
            err.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            raise err
        self._held[who] = n + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._held.get(who, 1) - 1
            if left > 0:
                self._held[who] = left
            else:
                self._held.pop(who, None)

        return release
