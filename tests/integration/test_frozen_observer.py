"""A real observer frozen (SIGSTOP) inside its transaction, the operation's row lock held
(docs/operations.md, "Bounded waits"), on PostgreSQL.

The observer process stops itself at the crash point `stop:inside_apply_observing`
(app/core/runtime/faults.py): it has written a poll's observation and not committed. The
agent's cancel, through a gateway process of its own, answers `503 database_busy`
within `JOBGATE_DB_LOCK_TIMEOUT_SECONDS`, not a hang. The server ends the frozen
session after `JOBGATE_DB_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS`, which releases the
lock; the cancel then goes through, a second observer takes the lapsed lease over and
the provider confirms the cancellation. The frozen observer is then woken (SIGCONT): its
late write is refused, nothing is sent twice, and the operation stays cancelled.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.support.processes import Process, gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_START_S, PROCESS_WORK_S, budget

pytestmark = pytest.mark.postgres_only

LOCK_TIMEOUT = 1.0  # the gateway's bound on a row lock
IDLE_TIMEOUT = budget(4.0)  # the server ends the frozen session after this


def _frozen(proc: Process) -> bool:
    assert proc.proc is not None
    stat = Path(f"/proc/{proc.proc.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def _until(check: Any, what: str, seconds: float) -> None:
    ends = time.monotonic() + budget(seconds)
    while not check():
        assert time.monotonic() < ends, what
        time.sleep(0.02)


def _history(database_url: str, op_id: str) -> list[tuple[str, str | None, str]]:
    u = make_url(database_url)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname=u.database) as c:
        rows = c.execute(
            "SELECT kind, to_state, actor FROM operation_history WHERE operation_id = %s "
            "ORDER BY id",
            (op_id,),
        ).fetchall()
    return [(k, s, a) for k, s, a in rows]


def test_a_frozen_observer_holding_a_row_lock_delays_nothing_beyond_its_bounds(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    gw_env = gateway_env(
        database_url, mock_url, tmp_path / "gw", db_lock_timeout_seconds=LOCK_TIMEOUT
    )
    frozen_env = gateway_env(
        database_url,
        mock_url,
        tmp_path / "frozen",
        observer_id="frozen",
        crash_at="stop:inside_apply_observing",
        db_idle_in_transaction_timeout_seconds=IDLE_TIMEOUT,
    )
    frozen = Process(["observe"], frozen_env, tmp_path / "frozen.log").start()
    other: Process | None = None
    try:
        with gateway_process(gw_env, tmp_path / "gw.log", observer=False) as (_, url):
            body = {
                "provider": "mock",
                "kind": "report",
                "input": {"scenario": {"name": "never_finishes"}},
                "deadlines": {"create_seconds": 120, "result_seconds": 300, "cancel_seconds": 300},
            }
            r = post_operation(url, "frozen-1", body)
            assert r is not None and r.status_code == 202, r and r.text
            op_id = r.json()["operation_id"]
            _until(lambda: _frozen(frozen), "the observer never reached its stop", PROCESS_WORK_S)

            # The row is locked by the frozen transaction: the cancel answers within the
            # lock bound, with a documented code.
            started = time.monotonic()
            cancel = httpx2.post(
                f"{url}/v1/operations/{op_id}/cancel", json={"reason": "stop"}, timeout=30
            )
            waited = time.monotonic() - started
            codes = [cancel.status_code]
            assert cancel.status_code == 503, cancel.text
            assert cancel.json()["error"]["code"] == "database_busy"
            assert cancel.headers["Retry-After"]
            assert LOCK_TIMEOUT <= waited < LOCK_TIMEOUT + budget(3.0), waited

            # The server ends the frozen session: the agent's retry goes through.
            ends = time.monotonic() + IDLE_TIMEOUT + budget(10.0)
            while cancel.status_code == 503:
                assert time.monotonic() < ends, cancel.text
                time.sleep(0.1)
                cancel = httpx2.post(
                    f"{url}/v1/operations/{op_id}/cancel", json={"reason": "stop"}, timeout=30
                )
                codes.append(cancel.status_code)
            assert cancel.status_code == 202, cancel.text
            assert _frozen(frozen)  # still frozen: the lock went with its session

            # Another observer takes the lapsed lease over and cancels at the provider.
            other_env = gateway_env(database_url, mock_url, tmp_path / "other", observer_id="other")
            other = Process(["observe"], other_env, tmp_path / "other.log").start()
            ends = time.monotonic() + budget(PROCESS_START_S + PROCESS_WORK_S)
            state = ""
            while state != "cancelled":
                assert time.monotonic() < ends, state
                time.sleep(0.05)
                state = httpx2.get(f"{url}/v1/operations/{op_id}", timeout=10).json()["state"]

            assert frozen.proc is not None
            os.kill(frozen.proc.pid, signal.SIGCONT)
            # Woken, its commit fails on the ended session; it records the failed step
            # and writes nothing else.
            _until(
                lambda: (
                    ("step_failed", "cancelled", "observer:frozen") in _history(database_url, op_id)
                ),
                "the woken observer never went on",
                PROCESS_WORK_S,
            )
            final = httpx2.get(f"{url}/v1/operations/{op_id}", timeout=10).json()
            assert (final["state"], final["outcome"]) == ("cancelled", "cancelled"), final
            jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
            assert len(jobs["jobs_by_reference"].get(op_id, [])) == 1  # one job, ever
            history = _history(database_url, op_id)
            creates = [h for h in history if h[0] == "exchange" and h[1] == "create_pending"]
            assert len(creates) == 1, history
            path = [h[1] for h in history if h[0] == "transition"]
            assert path == [
                "create_pending", "accepted", "observing", "cancel_requested", "cancelling",
                "cancelled",
            ], history  # fmt: skip
            by_frozen = [h for h in history if h[2] == "observer:frozen"]
            # Its one transition came before the freeze, written with its first status read
            # (docs/architecture.md, "What a step writes"); after it, only the failed step.
            assert by_frozen[0] == ("transition", "observing", "observer:frozen"), history
            assert by_frozen[-1] == ("step_failed", "cancelled", "observer:frozen"), history
            assert {h[:2] for h in by_frozen[1:-1]} <= {
                ("exchange", "observing"), ("observation", "observing")
            }, history  # fmt: skip
            assert codes[0] == 503 and codes[-1] == 202 and set(codes) == {503, 202}, codes
            assert frozen.alive()
    finally:
        if frozen.proc is not None and frozen.alive():
            os.kill(frozen.proc.pid, signal.SIGCONT)
        frozen.kill()
        if other is not None:
            other.kill()
