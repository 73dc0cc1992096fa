"""Run a callback once the session's transaction has committed (and never if it rolls back).

Log lines and counters about a write must not claim a transition that a later
rollback undid; hooks register here from inside the transaction instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)
_KEY = "jobgate_after_commit"


def on_commit(session: AsyncSession, fn: Callable[[], None]) -> None:
    """Call `fn` after this session's current transaction commits."""
    session.sync_session.info.setdefault(_KEY, []).append(fn)


@event.listens_for(Session, "after_commit")
def _run(session: Session) -> None:
    for fn in session.info.pop(_KEY, []):
        try:
            fn()
        except Exception:  # telemetry must never break a committed write
            log.exception("after-commit hook failed")


@event.listens_for(Session, "after_rollback")
def _drop(session: Session) -> None:
    session.info.pop(_KEY, None)
