"""The audit trail: every fact gets a chained entry, and `jobgate audit verify` catches
any single row edited, removed, inserted or swapped after a real run.

The scenarios go through the gateway's HTTP path against the real mock provider;
the tampering is done the way an attacker with database access would: disable
the append-only triggers, then change rows with plain SQL. `audit verify` runs
through the CLI entry point (`app.cli.main`).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from app.audit.chain import GENESIS, Entry, canonical_payload, entry_hash
from app.auth import service as keys
from app.cli import main
from app.core.db.database import is_sqlite, sync_url
from jobgate_fakes.mock.webhooks import signed_headers, webhook_body
from tests.conftest import Gateway
from tests.integration.test_callbacks_out import WEBHOOK_SECRET, Receiver, run_receiver


def jobgate(monkeypatch: pytest.MonkeyPatch, url: str, *args: str, **env: str) -> int:
    """`jobgate ARGS` in this process, on the test's database."""
    monkeypatch.setenv("JOBGATE_DATABASE_URL", url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return main(list(args))


def rows(url: str) -> list[dict[str, Any]]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            result = conn.execute(text("SELECT * FROM audit_log ORDER BY seq"))
            return [dict(r._mapping) for r in result]
    finally:
        engine.dispose()


SQLITE_TRIGGERS = (
    "audit_log_no_update", "audit_log_no_delete", "audit_log_moves_head",
    "audit_head_no_delete", "audit_head_no_insert", "audit_head_forward_only",
)  # fmt: skip


def tamper(url: str, *statements: tuple[str, dict[str, Any]]) -> None:
    """Run SQL on the log and its head as their owner would, the triggers out of the way
    (an owner who also moves the head to match is caught only by a signed head:
    test_audit_settings; one who moves it back, only by an anchor: test_audit_head)."""
    engine = create_engine(sync_url(url))
    try:
        with engine.begin() as conn:
            if is_sqlite(url):  # every trigger, as DISABLE TRIGGER USER does on PostgreSQL
                for name in SQLITE_TRIGGERS:
                    conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
            else:
                conn.exec_driver_sql("ALTER TABLE audit_log DISABLE TRIGGER USER")
                conn.exec_driver_sql("ALTER TABLE audit_head DISABLE TRIGGER USER")
            for sql, params in statements:
                conn.execute(text(sql), params)
    finally:
        engine.dispose()


async def small_run(gateway: Gateway) -> None:
    """Two operations to success and a key created: a short, real chain."""
    for _ in range(2):
        r = await gateway.start({"name": "fast"})
        assert r.status_code == 202, r.text
        await gateway.run_until_done(r.json()["operation_id"])
    await keys.create(gateway.ctx.db, "auditor", "operator", gateway.clock.now())


# --- a clean run ---------------------------------------------------------------------


async def test_a_clean_run_verifies_and_every_history_row_has_its_entry(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await small_run(gateway)
    # Operator decision: resolve (abandon) a create that timed out.
    r = await gateway.start({"name": "create_timeout"}, deadlines={"create_seconds": 30})
    stuck = r.json()["operation_id"]
    await gateway.run_until_done(stuck, step=10)
    decided = await gateway.http.post(
        f"/v1/operations/{stuck}/resolve", json={"decision": "abandon", "reason": "no job"}
    )
    assert decided.status_code == 200, decided.text
    # A cancel intent, carried out by the observer.
    r = await gateway.start({"name": "never_finishes"})
    cancelled = r.json()["operation_id"]
    cancel = await gateway.http.post(f"/v1/operations/{cancelled}/cancel", json={"reason": "x"})
    assert cancel.status_code == 202, cancel.text
    await gateway.run_until_done(cancelled)
    await keys.revoke(gateway.ctx.db, "auditor", gateway.clock.now())

    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0
    out = capsys.readouterr().out
    entries = rows(database_url)
    assert f"audit chain intact: {len(entries)} entries" in out

    kinds = Counter(e["kind"] for e in entries)
    for kind in (
        "intent",
        "provider_exchange",
        "transition",
        "operator_decision",
        "cancel_requested",
        "key_created",
        "key_revoked",
    ):
        assert kinds[kind] >= 1, kinds
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    for op_id in (stuck, cancelled):
        history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
        audited = [e for e in entries if e["operation_id"] == op_id]
        assert [json.loads(e["payload"])["history_kind"] for e in audited] == [
            h["kind"] for h in history
        ]
    decision = next(e for e in entries if e["kind"] == "operator_decision")
    assert decision["operation_id"] == stuck and "no job" in decision["payload"]


async def test_the_database_refuses_changes_to_the_log(gateway: Gateway, database_url: str) -> None:
    await small_run(gateway)
    engine = create_engine(sync_url(database_url))
    try:
        for sql in ("UPDATE audit_log SET actor = 'x'", "DELETE FROM audit_log"):
            with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
                conn.execute(text(sql))
    finally:
        engine.dispose()


async def test_an_export_is_json_lines_and_verifies_offline(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    out = tmp_path / "audit.jsonl"
    assert jobgate(monkeypatch, database_url, "audit", "export", "--out", str(out)) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == len(rows(database_url))
    first = json.loads(lines[0])
    assert first["seq"] == 1 and first["prev_hash"] == GENESIS and first["kind"] == "intent"
    assert isinstance(first["payload"], dict)
    assert jobgate(monkeypatch, database_url, "audit", "verify", "--file", str(out)) == 0

    capsys.readouterr()
    assert jobgate(monkeypatch, database_url, "audit", "export") == 0
    assert capsys.readouterr().out.splitlines() == lines  # stdout by default

    doctored = json.loads(lines[2])
    doctored["actor"] = "someone-else"
    lines[2] = json.dumps(doctored)
    out.write_text("\n".join(lines) + "\n")
    assert jobgate(monkeypatch, database_url, "audit", "verify", "--file", str(out)) == 1
    assert "BROKEN at entry 3 (edited)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "gateway_settings",
    [{"mock_webhook_secret": WEBHOOK_SECRET, "allow_private_callbacks": True}],
)
async def test_webhooks_and_every_callback_attempt_are_audited(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with contextlib.contextmanager(run_receiver)(Receiver(fail_first=1)) as receiver:
        r = await gateway.start({"name": "slow", "polls": 1}, callback_url=receiver.url)
        op_id, job_id = r.json()["operation_id"], r.json()["remote_job_id"]
        body = webhook_body(job_id, "succeeded", (1, 1))
        headers = signed_headers(WEBHOOK_SECRET, "msg_1", body, gateway.clock.now())
        hook = await gateway.http.post("/v1/webhooks/mock", content=body, headers=headers)
        assert hook.status_code == 202, hook.text
        await gateway.run_until_done(op_id, step=61)
        callbacks = gateway.app.state.callbacks
        assert await callbacks.tick() == 1  # answered 500: a retry is scheduled
        gateway.clock.advance(3600)
        assert await callbacks.tick() == 1  # delivered
    entries = [e for e in rows(database_url) if e["operation_id"] == op_id]
    kinds = [e["kind"] for e in entries]
    assert kinds.count("webhook") == 1
    attempts = [json.loads(e["payload"]) for e in entries if e["kind"] == "callback_attempt"]
    assert [(a["attempts"], a["outcome"]) for a in attempts] == [(1, "retry"), (2, "delivered")]
    assert "receiver-token" not in json.dumps(attempts)  # the URL's query is not kept
    assert kinds[-1] == "callback"  # the outcome, in history and so in the trail
    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0


# --- tampering: one row, at the start, in the middle, at the end ----------------------


def _position(where: str, n: int) -> int:
    return {"first": 1, "middle": n // 2, "last": n}[where]


POSITIONS = ("first", "middle", "last")


@pytest.fixture
async def chain(gateway: Gateway, database_url: str) -> list[dict[str, Any]]:
    await small_run(gateway)
    entries = rows(database_url)
    assert len(entries) >= 10
    return entries


def broken_at(monkeypatch: pytest.MonkeyPatch, capsys: Any, url: str, seq: int, what: str) -> None:
    capsys.readouterr()
    assert jobgate(monkeypatch, url, "audit", "verify") == 1
    err = capsys.readouterr().err
    assert f"BROKEN at entry {seq} ({what})" in err, err


@pytest.mark.parametrize("where", POSITIONS)
async def test_an_edited_entry_is_caught(
    chain: list[dict[str, Any]],
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    where: str,
) -> None:
    seq = _position(where, len(chain))
    tamper(
        database_url,
        ("UPDATE audit_log SET actor = :a WHERE seq = :s", {"a": "agent:mallory", "s": seq}),
    )
    broken_at(monkeypatch, capsys, database_url, seq, "edited")


async def test_an_entry_edited_and_rehashed_is_caught_at_the_next_link(
    chain: list[dict[str, Any]], database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    seq = len(chain) // 2
    e = chain[seq - 1]
    forged = _entry(e, payload=canonical_payload({"forged": True}))
    tamper(
        database_url,
        (
            "UPDATE audit_log SET payload = :p, hash = :h WHERE seq = :s",
            {"p": forged.payload, "h": entry_hash(forged), "s": seq},
        ),
    )
    broken_at(monkeypatch, capsys, database_url, seq, "edited")


@pytest.mark.parametrize("where", POSITIONS)
async def test_a_removed_entry_is_caught(
    chain: list[dict[str, Any]],
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    where: str,
) -> None:
    seq = _position(where, len(chain))
    tamper(database_url, ("DELETE FROM audit_log WHERE seq = :s", {"s": seq}))
    broken_at(monkeypatch, capsys, database_url, seq, "removed")


@pytest.mark.parametrize("where", POSITIONS)
async def test_an_inserted_entry_is_caught(
    chain: list[dict[str, Any]],
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    where: str,
) -> None:
    """A well-formed entry, correctly chained to the one before it: at the end it is
    appended after the head; elsewhere the later entries are renumbered to make room."""
    n = len(chain)
    seq = n + 1 if where == "last" else _position(where, n)
    prev = GENESIS if seq == 1 else chain[seq - 2]["hash"]
    forged = Entry(
        seq=seq,
        at=datetime.now(UTC),
        kind="operator_decision",
        operation_id=None,
        actor="operator:mallory",
        payload=canonical_payload({"decision": "approve everything"}),
        prev_hash=prev,
    )
    statements: list[tuple[str, dict[str, Any]]] = []
    if seq <= n:  # two steps, so no primary key is ever held twice
        statements.append(("UPDATE audit_log SET seq = -seq WHERE seq >= :s", {"s": seq}))
        statements.append(("UPDATE audit_log SET seq = 1 - seq WHERE seq < 0", {}))
    statements.append(
        (
            "INSERT INTO audit_log (seq, at, kind, operation_id, actor, payload, prev_hash, hash)"
            " VALUES (:seq, :at, :kind, :op, :actor, :payload, :prev, :hash)",
            {
                "seq": seq,
                "at": forged.at.replace(tzinfo=None),
                "kind": forged.kind,
                "op": None,
                "actor": forged.actor,
                "payload": forged.payload,
                "prev": prev,
                "hash": entry_hash(forged),
            },
        )
    )
    tamper(database_url, *statements)
    broken_at(monkeypatch, capsys, database_url, seq, "inserted")


@pytest.mark.parametrize("where", POSITIONS)
async def test_two_swapped_entries_are_caught(
    chain: list[dict[str, Any]],
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    where: str,
) -> None:
    seq = min(_position(where, len(chain)), len(chain) - 1)  # swaps seq and seq + 1
    tamper(
        database_url,
        ("UPDATE audit_log SET seq = -1 WHERE seq = :s", {"s": seq}),
        ("UPDATE audit_log SET seq = :s WHERE seq = :s + 1", {"s": seq}),
        ("UPDATE audit_log SET seq = :s + 1 WHERE seq = -1", {"s": seq}),
    )
    broken_at(monkeypatch, capsys, database_url, seq, "reordered")


def _entry(row: dict[str, Any], **change: Any) -> Entry:
    at = row["at"]
    if isinstance(at, str):  # SQLite hands back text through plain SQL
        at = datetime.fromisoformat(at)
    fields = {
        "seq": row["seq"],
        "at": at.replace(tzinfo=UTC),
        "kind": row["kind"],
        "operation_id": row["operation_id"],
        "actor": row["actor"],
        "payload": row["payload"],
        "prev_hash": row["prev_hash"],
    }
    fields.update(change)
    return Entry(**fields)
