"""The audit head cannot be deleted, re-inserted or moved back; without it appends fail
loudly; a head rolled back (log cut to match, an earlier signed head restored) is caught
by an anchor kept outside the database; and verify names every break it meets without a
traceback, on rows and export lines it cannot read too (docs/audit.md).

Tampering goes as in test_audit_trail: the owner of the database, triggers out of the way.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from app.core.db.database import is_sqlite, sync_url
from tests.conftest import Gateway
from tests.integration.test_audit_trail import jobgate, rows, small_run, tamper

KEY = "audit-signing-key-for-tests"


def count(url: str, sql: str) -> int:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(sql)).scalar_one())
    finally:
        engine.dispose()


def verify_says(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, url: str, *args: str, **env: str
) -> tuple[int, str]:
    """`jobgate audit verify ARGS`: its exit code and all it printed."""
    capsys.readouterr()
    code = jobgate(monkeypatch, url, "audit", "verify", *args, **env)
    out = capsys.readouterr()
    return code, out.out + out.err


async def test_the_database_refuses_to_delete_or_move_back_the_head(
    gateway: Gateway, database_url: str
) -> None:
    await small_run(gateway)
    refused = [
        "DELETE FROM audit_head",
        "UPDATE audit_head SET seq = seq - 1, hash = (SELECT hash FROM audit_log "
        "WHERE seq = (SELECT seq - 1 FROM audit_head))",
        "UPDATE audit_head SET hash = 'x'",
        "UPDATE audit_head SET seq = seq + 5",
    ]
    if not is_sqlite(database_url):
        refused.append("TRUNCATE audit_head")
    engine = create_engine(sync_url(database_url))
    try:
        for sql in refused:
            with pytest.raises(DBAPIError, match="audit_head"), engine.begin() as conn:
                conn.execute(text(sql))
        with engine.begin() as conn:  # re-signing in place is how appends sign the head
            conn.execute(text("UPDATE audit_head SET signature = 'resigned'"))
    finally:
        engine.dispose()
    assert count(database_url, "SELECT count(*) FROM audit_head") == 1


@pytest.mark.parametrize(
    "gateway_settings", [{}, {"audit_signing_key": KEY}], ids=["unsigned", "signed"]
)
async def test_without_a_head_every_fact_fails_loudly_and_nothing_goes_unaudited(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await small_run(gateway)
    [head] = _head(database_url)
    ops_before = count(database_url, "SELECT count(*) FROM operations")
    entries_before = len(rows(database_url))
    tamper(database_url, ("DELETE FROM audit_head", {}))

    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 1 and "(head)" in said and "missing" in said, said
    # Not ready: a load balancer must not send writes that will all fail.
    ready = await gateway.http.get("/v1/readyz")
    assert ready.status_code == 503, ready.text
    assert "audit chain's head row is missing" in ready.json()["reason"]

    # As a client sees it over HTTP: a 500 (the ASGI transport would re-raise instead).
    transport = httpx2.ASGITransport(app=gateway.app, raise_app_exceptions=False)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        for _ in range(3):
            r = await http.post(
                "/v1/operations",
                json={"provider": "mock", "kind": "report", "input": {}},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            assert r.status_code == 500, r.text  # loud: the create is not recorded at all
    assert count(database_url, "SELECT count(*) FROM operations") == ops_before
    assert len(rows(database_url)) == entries_before

    # The owner puts the old head back: nothing went unaudited, so the chain holds.
    tamper(
        database_url,
        (
            "INSERT INTO audit_head (id, seq, hash, signature) VALUES (1, :s, :h, :g)",
            {"s": head["seq"], "h": head["hash"], "g": head["signature"]},
        ),
    )
    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 0, said
    assert (await gateway.http.get("/v1/readyz")).status_code == 200
    history = count(database_url, "SELECT count(*) FROM operation_history")
    keyed = count(database_url, "SELECT count(*) FROM audit_log WHERE operation_id IS NOT NULL")
    assert history == keyed  # every fact that was written has its entry


@pytest.mark.parametrize("gateway_settings", [{"audit_signing_key": KEY}])
async def test_a_signed_head_rolled_back_is_caught_by_the_anchor(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    early = len(rows(database_url))
    [earlier_head] = _head(database_url)  # what the owner kept of an earlier, signed head
    await two_ops(gateway)
    anchor = tmp_path / "anchor.json"
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--save-anchor", str(anchor),
        JOBGATE_AUDIT_SIGNING_KEY=KEY,
    )  # fmt: skip
    assert code == 0 and "anchor saved" in said, said
    saved = json.loads(anchor.read_text())
    assert saved["seq"] == len(rows(database_url)) > early

    # Cut the log back to the earlier head and restore that head, signature and all.
    tamper(
        database_url,
        ("DELETE FROM audit_log WHERE seq > :s", {"s": early}),
        (
            "UPDATE audit_head SET seq = :s, hash = :h, signature = :g",
            {"s": earlier_head["seq"], "h": earlier_head["hash"], "g": earlier_head["signature"]},
        ),
    )
    code, said = verify_says(monkeypatch, capsys, database_url, JOBGATE_AUDIT_SIGNING_KEY=KEY)
    assert code == 0, said  # hashes and signature alone are fooled
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--anchor", str(anchor), JOBGATE_AUDIT_SIGNING_KEY=KEY
    )
    assert code == 1, said
    assert f"BROKEN at entry {early + 1} (rollback)" in said, said

    # The gateway appends on after the rollback, past the anchored seq: the anchored
    # entry is now a different one.
    await _restore_triggers(database_url)
    for _ in range(2):
        await two_ops(gateway)
    assert len(rows(database_url)) > saved["seq"]
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--anchor", str(anchor), JOBGATE_AUDIT_SIGNING_KEY=KEY
    )
    assert code == 1 and f"BROKEN at entry {saved['seq']} (rollback)" in said, said


async def test_an_export_serves_as_the_anchor(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    export = tmp_path / "trail.jsonl"
    assert jobgate(monkeypatch, database_url, "audit", "export", "--out", str(export)) == 0
    code, said = verify_says(monkeypatch, capsys, database_url, "--anchor", str(export))
    assert code == 0, said
    n = len(rows(database_url))
    tamper(
        database_url,
        ("DELETE FROM audit_log WHERE seq = :s", {"s": n}),
        (
            "UPDATE audit_head SET seq = :s, hash = :h",
            {"s": n - 1, "h": rows(database_url)[-2]["hash"]},
        ),
    )
    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 0, said  # a cut end and a head moved to match: consistent
    code, said = verify_says(monkeypatch, capsys, database_url, "--anchor", str(export))
    assert code == 1 and f"BROKEN at entry {n} (rollback)" in said, said
    bad = tmp_path / "bad-anchor.json"
    bad.write_text("not an anchor\n")
    code, said = verify_says(monkeypatch, capsys, database_url, "--anchor", str(bad))
    assert code == 2 and "Traceback" not in said and "not an anchor" in said, said


async def test_a_garbled_timestamp_is_a_tampered_entry_named_by_seq(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    if not is_sqlite(database_url):
        pytest.skip("only SQLite can store text that is not a time in a timestamp column")
    await small_run(gateway)
    n = len(rows(database_url))
    seq = n // 2
    tamper(database_url, ("UPDATE audit_log SET at = 'yesterday-ish' WHERE seq = :s", {"s": seq}))
    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 1 and "Traceback" not in said, said
    assert f"BROKEN at entry {seq} (tampered)" in said and "yesterday-ish" in said, said
    tamper(
        database_url,
        ("UPDATE audit_log SET at = at WHERE seq = :s", {"s": seq}),
        ("UPDATE audit_log SET payload = CAST(x'7bff7d' AS TEXT) WHERE seq = :s", {"s": seq + 1}),
    )
    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 1 and "Traceback" not in said, said


async def test_export_lines_that_are_garbled_or_swapped_are_named(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    export = tmp_path / "trail.jsonl"
    assert jobgate(monkeypatch, database_url, "audit", "export", "--out", str(export)) == 0
    lines = export.read_text().splitlines()

    def verify_lines(changed: list[str]) -> tuple[int, str]:
        doctored = tmp_path / "doctored.jsonl"
        doctored.write_text("\n".join(changed) + "\n")
        return verify_says(monkeypatch, capsys, database_url, "--file", str(doctored))

    garbled = json.loads(lines[4])
    garbled["at"] = "2026-13-45T99:99:99Z"
    code, said = verify_lines([*lines[:4], json.dumps(garbled), *lines[5:]])
    assert code == 1 and "BROKEN at entry 5 (tampered)" in said and "line 5" in said, said

    code, said = verify_lines([*lines[:4], lines[5], lines[4], *lines[6:]])
    assert code == 1 and "BROKEN at entry 5 (reordered)" in said, said

    code, said = verify_lines([*lines[:4], "{not json", *lines[5:]])
    assert code == 1 and "BROKEN at entry 5 (tampered)" in said, said

    code, said = verify_lines([*lines[:5], lines[4], *lines[5:]])
    assert code == 1 and "BROKEN at entry 5 (inserted)" in said and "twice" in said, said


def test_an_unreadable_database_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'missing' / 'nowhere.db'}"
    code, said = verify_says(monkeypatch, capsys, url)
    # A file that is not there is named, not created (docs/audit.md, "Verify").
    missing = tmp_path / "missing" / "nowhere.db"
    assert code == 2 and "Traceback" not in said, said
    assert said.strip() == f"jobgate: no database file at {missing} (JOBGATE_DATABASE_URL)", said


async def two_ops(gateway: Gateway) -> None:
    for _ in range(2):
        r = await gateway.start({"name": "fast"})
        assert r.status_code == 202, r.text
        await gateway.run_until_done(r.json()["operation_id"])


def _head(url: str) -> list[dict[str, Any]]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT seq, hash, signature FROM audit_head"))
            return [dict(r._mapping) for r in found]
    finally:
        engine.dispose()


async def _restore_triggers(url: str) -> None:
    """Put back the trigger that moves the head (`tamper` took it away with the others);
    the gateway's appends need it."""
    engine = create_engine(sync_url(url))
    try:
        with engine.begin() as conn:
            if is_sqlite(url):
                conn.exec_driver_sql(
                    "CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log BEGIN "
                    "UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash, signature = NULL "
                    "WHERE id = 1; END"
                )
            else:
                conn.exec_driver_sql("ALTER TABLE audit_log ENABLE TRIGGER USER")
                conn.exec_driver_sql("ALTER TABLE audit_head ENABLE TRIGGER USER")
    finally:
        engine.dispose()
