"""A chaos soak: real processes, random SIGKILLs, random provider faults, then invariants.

Used by tests/soak/test_chaos.py (short in CI, long by flag). It prints its figures:
operations, kills, faults injected, duplicates (must be 0), lost (must be 0).
"""

from __future__ import annotations

import concurrent.futures
import json
import random
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from sqlalchemy import create_engine, text

from app.core.db.database import sync_url
from app.operations.domain.states import Evidence, State, check_transition, is_done
from tests.support.processes import Process, free_port, gateway_env, mock_process, wait_healthy
from tests.support.single_create import PROFILES
from tests.support.timing import PROCESS_START_S, budget

AGENTS = 16  # concurrent agents, each running one operation at a time
DEADLINES = {"create_seconds": 20, "result_seconds": 20, "cancel_seconds": 20}
# (provider, scenario, weight, is a provider fault). `mock` honours the idempotency
# token; `mock_lookup` (no token, a paged lookup) and `mock_blind` (no token, no
# lookup) are the same mock seen as providers without create idempotency.
SCENARIOS: list[tuple[str, dict[str, Any], int, bool]] = [
    ("mock", {"name": "fast"}, 3, False),
    ("mock", {"name": "slow", "polls": 2}, 3, False),
    ("mock", {"name": "late_failure", "polls": 1}, 1, True),
    ("mock", {"name": "rate_limited", "retry_after": 1, "times": 2}, 1, True),
    ("mock", {"name": "lost_create_response"}, 2, True),
    ("mock", {"name": "accept_then_5xx"}, 2, True),
    ("mock", {"name": "reject"}, 1, True),
    ("mock", {"name": "partial_results", "processed": 50, "failed": 3}, 1, True),
    ("mock", {"name": "corrupt_result"}, 1, True),
    ("mock", {"name": "result_unavailable", "polls": 2}, 1, True),
    ("mock", {"name": "cancel_race", "polls": 3}, 1, True),
    ("mock", {"name": "never_finishes"}, 1, False),
    ("mock", {"name": "different_job_id", "list_delay": 1}, 1, True),
    ("mock", {"name": "sync"}, 1, False),
    # Refused as overloaded (proof that nothing was made): the create goes again.
    ("mock", {"name": "fast", "overloaded": 1}, 1, True),
    ("mock_lookup", {"name": "fast"}, 2, False),
    ("mock_lookup", {"name": "slow", "polls": 1}, 1, False),
    ("mock_lookup", {"name": "lost_create_response", "list_delay": 2}, 2, True),
    ("mock_lookup", {"name": "accept_then_5xx"}, 1, True),
    ("mock_lookup", {"name": "slow", "polls": 1, "overloaded": 1}, 1, True),
    ("mock_blind", {"name": "fast"}, 2, False),
    ("mock_blind", {"name": "slow", "polls": 1}, 1, False),
    ("mock_blind", {"name": "lost_create_response"}, 1, True),
    ("mock_blind", {"name": "accept_then_5xx"}, 1, True),
    ("mock_blind", {"name": "fast", "overloaded": 2}, 1, True),
]
MODE = {"mock": "token", "mock_lookup": "lookup", "mock_blind": "none"}

# The end state each scenario must reach (the gateway's honest reading of it); any
# other is "succeeded". Without a token and a lookup, a lost answer goes to a human.
EXPECTED: dict[str, str | tuple[str, ...]] = {
    "late_failure": "failed",
    "reject": "failed",
    "corrupt_result": "result_validation_failed",
    "never_finishes": "cancelled",  # the soak's agents cancel these
    # A replay makes a second job, seen by the check after it; but when another agent's
    # listing has already passed over the first job (list_delay counts every listing),
    # the lookup finds it before any replay: one job, succeeded. Both are honest.
    "different_job_id": ("contract_violation", "succeeded"),
}
EXPECTED_BLIND = {
    "lost_create_response": "create_unconfirmed",
    "accept_then_5xx": "create_unconfirmed",
}
# Why a create may be in doubt after a kill (the create request died holding its lease):
# for a provider without a token, create_unconfirmed is then the promised end state
# (for `lookup`, only when no job exists: had it been sent, the lookup must find it).
# A process killed after announcing another create (after an `overloaded` refusal) leaves
# the same doubt.
DIED = (
    "the create request died",
    "deadline passed before a confirmed create",
    "sending the create again died",
    "sending the approved create (its first send) died",
)


@dataclass
class Figures:
    operations: int = 0
    kills: int = 0
    faults: int = 0
    duplicates: int = 0
    lost: int = 0
    bad_histories: int = 0
    changed_history_rows: int = 0
    secret_leaks: int = 0
    wrong_outcomes: int = 0
    by_state: dict[str, int] = field(default_factory=dict)
    by_mode: dict[str, int] = field(default_factory=dict)  # operations per single_create
    wrong: list[str] = field(default_factory=list)  # the first few wrong outcomes, to debug

    def line(self) -> str:
        return (
            f"soak: operations={self.operations} modes={self.by_mode} kills={self.kills} "
            f"faults={self.faults} duplicates_by_client_reference={self.duplicates} "
            f"lost={self.lost} "
            f"bad_histories={self.bad_histories} "
            f"changed_history_rows={self.changed_history_rows} "
            f"secret_leaks={self.secret_leaks} wrong_outcomes={self.wrong_outcomes} "
            f"states={self.by_state}" + (f" wrong={self.wrong[:5]}" if self.wrong else "")
        )


class Fleet:
    """The gateway and observers, each restartable on the same port."""

    def __init__(self, env: dict[str, str], tmp: Path, observers: int) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.specs: dict[str, tuple[list[str], dict[str, str]]] = {
            "gateway": (
                ["serve", "--port", str(self.port), "--log-level", "warning"],
                {**env, "JOBGATE_OBSERVER_ID": "gateway"},
            ),
        }
        for i in range(observers):
            self.specs[f"observer{i}"] = (["observe"], {**env, "JOBGATE_OBSERVER_ID": f"obs{i}"})
        self.procs: dict[str, Process] = {}
        self.lock = threading.Lock()

    def start(self, name: str) -> None:
        args, env = self.specs[name]
        self.procs[name] = Process(args, env, self.tmp / f"{name}.log").start()
        if name == "gateway":
            wait_healthy(self.url, self.procs[name])

    def start_all(self) -> None:
        for name in self.specs:
            self.start(name)

    def kill_and_restart(self, rng: random.Random) -> str:
        with self.lock:
            name = rng.choice(sorted(self.specs))
            self.procs[name].kill()
            self.start(name)
            return name

    def stop_all(self) -> None:
        for proc in self.procs.values():
            proc.kill()

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.tmp.glob("*.log"))


def _retrying(fn: Any) -> httpx2.Response:
    """An agent's retry: same request (same key) until the gateway answers.

    For as long as a restarted gateway may take to come up (the budget its restart
    is given), and then one more such span for the request itself: a fixed count of
    tries gave up after about 10 s while a restart on a loaded machine may take longer.
    """
    ends = time.monotonic() + 2 * budget(PROCESS_START_S)
    while True:
        try:
            r: httpx2.Response = fn()
            if r.status_code < 500:
                return r
        except httpx2.TransportError:
            pass
        if time.monotonic() > ends:
            raise AssertionError("gateway never answered")
        time.sleep(0.05)


def run_soak(
    database_url: str, tmp: Path, *, operations: int, kills: int, observers: int, seed: int = 7
) -> Figures:
    rng = random.Random(seed)
    secret = "sk-soak-" + secrets.token_hex(16)
    figures = Figures()
    with mock_process(tmp, JOBGATE_MOCK_PROVIDER_TOKEN=secret) as mock_url:
        env = gateway_env(
            database_url,
            mock_url,
            tmp / "data",
            lease_seconds=1,
            mock_provider_token=secret,
            profiles_dir=PROFILES,
        )
        fleet = Fleet(env, tmp, observers)
        fleet.start_all()
        try:
            ops = _drive(fleet, rng, operations, kills, figures)
            snapshot = _history_snapshot(database_url)
            _wait_quiet(fleet.url, timeout=budget(120))
            _check(database_url, mock_url, fleet, ops, snapshot, secret, figures)
        finally:
            fleet.stop_all()
    return figures


def _drive(
    fleet: Fleet, rng: random.Random, n: int, kills: int, figures: Figures
) -> list[tuple[str, str, str]]:
    """Create `n` operations (some cancelled) while killing processes; returns
    (provider, operation id, scenario name)."""
    weights = [w for _, _, w, _ in SCENARIOS]
    plan = [rng.choices(SCENARIOS, weights)[0] for _ in range(n)]
    figures.faults = sum(1 for *_, fault in plan if fault)
    for provider, *_ in plan:
        figures.by_mode[MODE[provider]] = figures.by_mode.get(MODE[provider], 0) + 1
    kill_every = max(1, n // (kills + 1))
    done = 0
    lock = threading.Lock()
    client = httpx2.Client(base_url=fleet.url, timeout=30)

    def one(item: tuple[str, dict[str, Any], int, bool]) -> tuple[str, str, str]:
        nonlocal done
        provider, scenario = item[0], item[1]
        key = uuid.uuid4().hex
        body = {
            "provider": provider,
            "kind": "report",
            "input": {"scenario": scenario},
            "deadlines": DEADLINES,
        }
        r = _retrying(
            lambda: client.post("/v1/operations", json=body, headers={"Idempotency-Key": key})
        )
        assert r.status_code in (200, 202), r.text
        op_id = r.json()["operation_id"]
        if scenario["name"] in ("never_finishes", "cancel_race"):
            c = _retrying(
                lambda: client.post(f"/v1/operations/{op_id}/cancel", json={"reason": "soak"})
            )
            assert c.status_code in (202, 409), c.text
        # Like an agent: one wait call for the honest outcome, then the next task.
        w = _retrying(lambda: client.get(f"/v1/operations/{op_id}/wait", params={"timeout": 30}))
        assert w.status_code == 200, w.text
        with lock:
            done += 1
            if done % kill_every == 0 and figures.kills < kills:
                figures.kills += 1
                fleet.kill_and_restart(rng)
        refused = "/overloaded" if scenario.get("overloaded") else ""
        return provider, op_id, scenario["name"] + refused

    with concurrent.futures.ThreadPoolExecutor(AGENTS) as pool:
        ops = list(pool.map(one, plan))
    while figures.kills < kills:  # make up any kills the schedule did not reach
        figures.kills += 1
        fleet.kill_and_restart(rng)
    client.close()
    figures.operations = len(ops)
    return ops


def _wait_quiet(url: str, timeout: float) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            r = httpx2.get(
                f"{url}/v1/operations", params={"in_flight": "true", "limit": 1}, timeout=10
            )
            if r.status_code == 200 and r.json()["items"] == []:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.2)


def _history_snapshot(database_url: str) -> dict[int, tuple[Any, ...]]:
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id, operation_id, kind, from_state, to_state, cause "
                    "FROM operation_history"
                )
            ).all()
    finally:
        engine.dispose()
    return {r[0]: tuple(r) for r in rows}


def _check(
    database_url: str,
    mock_url: str,
    fleet: Fleet,
    ops: list[tuple[str, str, str]],
    snapshot: dict[int, tuple[Any, ...]],
    secret: str,
    figures: Figures,
) -> None:
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            rows = {
                r.id: r
                for r in conn.execute(
                    text(
                        "SELECT id, state, provider_token, next_poll_at, "
                        "cancel_requested_at, result_deadline_at FROM operations"
                    )
                ).all()
            }
            hist = conn.execute(
                text(
                    "SELECT id, operation_id, kind, from_state, to_state, cause, data "
                    "FROM operation_history ORDER BY id"
                )
            ).all()
            dump = " ".join(
                str(tuple(r))
                for table in ("operations", "operation_history")
                for r in conn.execute(text(f"SELECT * FROM {table}")).all()
            )
    finally:
        engine.dispose()
    stats = httpx2.get(f"{mock_url}/_mock/stats", timeout=30).json()
    died = {
        h.operation_id
        for h in hist
        if h.to_state == "create_unknown" and any(why in h.cause for why in DIED)
    }
    for provider, op_id, name in ops:
        row = rows.get(op_id)
        if row is None or (not is_done(State(row.state)) and row.next_poll_at is None):
            figures.lost += 1
            continue
        # By client reference, not token: a retry under a new token would hide there.
        jobs = stats["jobs_by_reference"].get(op_id, [])
        # `different_job_id` breaks its token on purpose: the replay after its 503 makes a
        # second job, and the gateway names both (contract_violation), also when it was
        # killed between the replay's answer and its write: the replay is announced
        # before it is sent, and the next holder replays again instead of trusting a
        # lookup that may list only the first job (docs/single-create.md). Two jobs in
        # any other state are a duplicate.
        provider_broke_token = name == "different_job_id" and row.state == "contract_violation"
        if len(jobs) > 1 and not provider_broke_token:
            figures.duplicates += 1
        figures.by_state[row.state] = figures.by_state.get(row.state, 0) + 1
        expected = EXPECTED.get(name, "succeeded")
        if MODE[provider] == "none":
            expected = EXPECTED_BLIND.get(name, expected)
        allowed = {expected} if isinstance(expected, str) else set(expected)
        # A lookup must find a job that exists; without one, or without a lookup, the
        # kill leaves it in doubt and a human decides.
        if op_id in died and (
            MODE[provider] == "none" or (MODE[provider] == "lookup" and not jobs)
        ):
            allowed.add("create_unconfirmed")
        # Refused until the create deadline passed (a kill can delay the next try past
        # it): `failed` with nothing started is honest only if no job exists.
        if name.endswith("/overloaded") and not jobs and row.state == "failed":
            allowed.add("failed")
        # The agent's cancel is one POST after the create; when kills and load held it
        # until after the result deadline (or it never got in), the deadline came first:
        # result_timed_out is the honest end. A cancel recorded in time must win.
        if name == "never_finishes" and _cancel_too_late(row):
            allowed.add("result_timed_out")
        if row.state not in allowed:
            figures.wrong_outcomes += 1
            # The operation's path, so a wrong end explains itself in the failure line
            # (a kill-driven run is not replayed exactly by its seed).
            path = "; ".join(
                f"{h.from_state}->{h.to_state} ({h.cause})"
                for h in hist
                if h.operation_id == op_id and h.to_state
            )
            figures.wrong.append(f"{op_id} {provider}/{name}: {row.state} [{path}]")
    figures.bad_histories = _replay(hist)
    now = {h.id: (h.id, h.operation_id, h.kind, h.from_state, h.to_state, h.cause) for h in hist}
    figures.changed_history_rows = sum(1 for k, v in snapshot.items() if now.get(k) != v)
    figures.secret_leaks = dump.count(secret) + fleet.logs().count(secret)


def _cancel_too_late(row: Any) -> bool:
    asked, deadline = row.cancel_requested_at, row.result_deadline_at
    if asked is None:
        return True
    if isinstance(asked, str):  # SQLite gives text
        asked, deadline = _utc(asked), _utc(deadline)
    return bool(asked >= deadline)


def _utc(text_: str) -> datetime:
    found = datetime.fromisoformat(text_)
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def _replay(hist: list[Any]) -> int:
    """Replay every operation's transitions through the state machine; count failures."""
    last: dict[str, str | None] = {}
    bad: set[str] = set()
    for h in hist:
        if h.kind != "transition":
            continue
        prev = last.get(h.operation_id)
        data = json.loads(h.data) if isinstance(h.data, str) else (h.data or {})
        try:
            if prev is None:
                assert h.from_state is None and h.to_state == State.CREATE_PENDING.value
            else:
                assert h.from_state == prev
                operator = str(data.get("evidence")) == "operator_decision"
                check_transition(
                    State(prev),
                    State(h.to_state),
                    Evidence(
                        str(data.get("evidence")),
                        data.get("evidence_data"),
                        operator=operator,
                    ),
                )
        except Exception:
            bad.add(h.operation_id)
        last[h.operation_id] = h.to_state
    return len(bad)
