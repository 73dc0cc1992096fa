"""A running gateway whose wall clock jumps an hour, either way (docs/operations.md,
"Clocks"). The clock is stepped through libfaketime's timestamp file, read again at every
call, so the process is already running (measured, claiming, holding operations) when it
moves; monotonic time and CLOCK_BOOTTIME are left alone, as a real step leaves them (the
test checks that libfaketime does, in a child run with the same environment).

Both databases take the same assertions. The jump is logged at once ("clock jump ...
+3600.000 s") and the process measures again against its reference (PostgreSQL's clock;
on SQLite this boot's clock anchor, app/core/db/host_anchor.py), which the jump did not
move: the process is then skewed and not ready, claims nothing, and nothing it wrote is
an hour off: no deadline fires early (no `result_timed_out`, no `create_unconfirmed`), no
history row is stamped an hour away; the clock stepped back, it is ready again by itself
and every operation ends succeeded with one provider job.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sqlalchemy as sa

from tests.support.faketime import child_clock_offsets, jumpable_env, step_clock
from tests.support.processes import Process, gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_WORK_S, QUICK_S, budget

OPS = 4
RESULT_SECONDS = 120  # real seconds: a clock an hour ahead taken at its word is past it
RUN_MS = 4_000  # the mock answers `running` this long (its own, unstepped clock)


def _sql(database_url: str, query: str, **args: Any) -> list[Any]:
    engine = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text(query), args).fetchall())
    finally:
        engine.dispose()


def _until(what: str, check: Any, seconds: float) -> Any:
    ends = time.monotonic() + budget(seconds)
    while time.monotonic() < ends:
        if got := check():
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {budget(seconds):.0f} s: {what}")


def _aware(at: datetime | str) -> datetime:
    """A stored UTC time as read back by plain SQL (SQLite hands back its text)."""
    t = datetime.fromisoformat(at) if isinstance(at, str) else at
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def _log_has(proc: Process, text: str) -> bool:
    return text in proc.log.read_text()


def _ready(url: str) -> httpx2.Response:
    return httpx2.get(f"{url}/v1/readyz", timeout=10)


@pytest.mark.parametrize(("shift", "words"), [("+1h", "+3600.0"), ("-1h", "-3600.0")])
def test_a_running_gateway_whose_clock_jumps_an_hour_moves_none_of_its_times(
    shift: str,
    words: str,
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
) -> None:
    stamp = tmp_path / "faketime"
    env = {
        **gateway_env(database_url, mock_url, tmp_path / "data", observer_id="jumped"),
        **jumpable_env(stamp),
    }
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "slow", "polls": 2, "run_ms": RUN_MS}},
        "deadlines": {"result_seconds": RESULT_SECONDS},
    }
    # The premise: libfaketime steps the wall clock and neither monotonic time nor
    # CLOCK_BOOTTIME (SQLite's reference counts from the latter).
    step_clock(stamp, shift)
    offsets = child_clock_offsets(env)
    assert abs(offsets["wall"]) > 3000, offsets
    assert abs(offsets["monotonic"]) < 5 and abs(offsets["boottime"]) < 5, offsets
    step_clock(stamp, "+0")
    with gateway_process(env, tmp_path / "gw.log") as (proc, url):
        _until("ready", lambda: _ready(url).status_code == 200, QUICK_S)
        before = datetime.now(UTC)
        ops = []
        for i in range(OPS):
            r = post_operation(url, f"jump-{i}", body)
            assert r is not None and r.status_code in (200, 201, 202), r and r.text
            ops.append(r.json()["operation_id"])

        step_clock(stamp, shift)  # the process's wall clock jumps, mid-flight
        _until("the jump logged", lambda: _log_has(proc, f"clock jump: this host's wall "
               f"clock moved {words}"), QUICK_S)  # fmt: skip
        ready = _until(
            "not ready while an hour off",
            lambda: (r := _ready(url)).status_code == 503 and r,
            QUICK_S,
        )
        assert "clock" in ready.json()["reason"], ready.text
        time.sleep(budget(1.0))  # the observer's chance to do harm: 20 intervals
        rows = _sql(
            database_url,
            "SELECT state FROM operations WHERE state IN "
            "('result_timed_out', 'create_unconfirmed')",
        )
        assert rows == [], rows
        step_clock(stamp, "+0")  # set right again: ready by itself
        _until("ready again", lambda: _ready(url).status_code == 200, QUICK_S)

        ends = time.monotonic() + budget(PROCESS_WORK_S)
        bodies: list[dict[str, Any]] = []
        while time.monotonic() < ends:
            bodies = [httpx2.get(f"{url}/v1/operations/{o}", timeout=10).json() for o in ops]
            if all(b["done"] for b in bodies):
                break
            time.sleep(0.1)
        assert [b["outcome"] for b in bodies] == ["succeeded"] * OPS, bodies
        after = datetime.now(UTC)

    for op_id in ops:
        jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
        assert len(jobs["jobs_by_reference"].get(op_id, [])) == 1, op_id
    stamps = [
        _aware(at)
        for op_id, at in _sql(database_url, "SELECT operation_id, at FROM operation_history")
        if op_id in ops
    ]
    first, last = min(stamps), max(stamps)
    margin = budget(QUICK_S)
    assert (first - before).total_seconds() > -margin, (first, before)
    assert (last - after).total_seconds() < margin, (last, after)
