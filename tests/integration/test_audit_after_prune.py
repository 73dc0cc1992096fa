"""The audit trail survives pruning: the removed prefix is replaced by a signed
checkpoint, `jobgate audit verify` starts from it, says so and exits 0 after any prune;
an anchor still catches a rollback, a forged or unsigned checkpoint is caught under the
key, and an export after a prune verifies offline (docs/audit.md, "After a prune")."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.retention.prune import Plan, prune_all
from tests.conftest import Gateway
from tests.integration.test_audit_head import (
    KEY,
    _head,
    _restore_triggers,
    two_ops,
    verify_says,
)
from tests.integration.test_audit_trail import jobgate, rows, small_run, tamper

DAY = 86400.0


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"audit_signing_key": KEY}


async def _prune(gw: Gateway, *, days_later: float = 31) -> Any:
    plan = Plan(
        now=gw.clock.now() + timedelta(days=days_later),
        retention_seconds=30 * DAY,
        signing_key=KEY,
    )
    return await prune_all(gw.ctx.db, gw.ctx.results, plan)


def _checkpoints(url: str) -> list[dict[str, Any]]:
    from sqlalchemy import create_engine, text

    from app.core.db.database import sync_url

    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT * FROM audit_checkpoints ORDER BY seq"))
            return [dict(r._mapping) for r in found]
    finally:
        engine.dispose()


async def test_verify_after_a_prune_starts_from_the_signed_checkpoint(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    before = len(rows(database_url))
    anchor = tmp_path / "anchor.json"
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--save-anchor", str(anchor),
        JOBGATE_AUDIT_SIGNING_KEY=KEY,
    )  # fmt: skip
    assert code == 0, said
    kept = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    tally = await _prune(gateway)
    assert tally.operations == 2 and tally.audit_entries > 0
    [cp] = _checkpoints(database_url)
    assert cp["signature"] and cp["count"] == cp["seq"] == tally.audit_entries
    left = rows(database_url)
    assert left[0]["seq"] == cp["seq"] + 1 and left[0]["prev_hash"] == cp["hash"]
    # The entries of the operation still kept are all still there.
    assert any(r["operation_id"] == kept for r in left)
    assert all(r["seq"] > cp["seq"] for r in left if r["operation_id"] == kept)

    code, said = verify_says(monkeypatch, capsys, database_url, JOBGATE_AUDIT_SIGNING_KEY=KEY)
    assert code == 0, said
    assert f"covered by the signed checkpoint at entry {cp['seq']}" in said, said
    assert f"audit chain intact: {len(left) + cp['count']} entries" in said, said
    # The anchor taken before the prune: its entry is gone or is the checkpoint's.
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--anchor", str(anchor), JOBGATE_AUDIT_SIGNING_KEY=KEY
    )
    assert code == 0, said
    assert json.loads(anchor.read_text())["seq"] == before

    # An export after the prune starts with the checkpoint and verifies offline.
    export = tmp_path / "trail.jsonl"
    assert jobgate(monkeypatch, database_url, "audit", "export", "--out", str(export)) == 0
    first = json.loads(export.read_text().splitlines()[0])
    assert first["checkpoint"]["seq"] == cp["seq"]
    code, said = verify_says(monkeypatch, capsys, database_url, "--file", str(export))
    assert code == 0, said

    # A second prune moves the checkpoint on; verify still holds.
    await gateway.http.post(f"/v1/operations/{kept}/cancel", json={"reason": "done with it"})
    await gateway.run_until_done(kept)
    await two_ops(gateway)
    await _prune(gateway, days_later=62)
    assert len(_checkpoints(database_url)) == 2
    code, said = verify_says(monkeypatch, capsys, database_url, JOBGATE_AUDIT_SIGNING_KEY=KEY)
    assert code == 0, said


async def test_a_rollback_after_a_prune_is_caught_by_the_anchor(
    gateway: Gateway,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    await small_run(gateway)
    await _prune(gateway)
    [cp] = _checkpoints(database_url)
    early = len(rows(database_url)) + cp["count"]
    [earlier_head] = _head(database_url)
    await two_ops(gateway)
    anchor = tmp_path / "anchor.json"
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--save-anchor", str(anchor),
        JOBGATE_AUDIT_SIGNING_KEY=KEY,
    )  # fmt: skip
    assert code == 0, said
    tamper(
        database_url,
        ("DELETE FROM audit_log WHERE seq > :s", {"s": early}),
        (
            "UPDATE audit_head SET seq = :s, hash = :h, signature = :g",
            {"s": earlier_head["seq"], "h": earlier_head["hash"], "g": earlier_head["signature"]},
        ),
    )
    code, said = verify_says(monkeypatch, capsys, database_url, JOBGATE_AUDIT_SIGNING_KEY=KEY)
    assert code == 0, said  # hashes, checkpoint and head signature alone are fooled
    code, said = verify_says(
        monkeypatch, capsys, database_url, "--anchor", str(anchor), JOBGATE_AUDIT_SIGNING_KEY=KEY
    )
    assert code == 1 and f"BROKEN at entry {early + 1} (rollback)" in said, said
    await _restore_triggers(database_url)


async def test_a_prefix_removed_without_a_signed_checkpoint_is_caught(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await small_run(gateway)
    await _prune(gateway)
    await two_ops(gateway)
    [cp] = _checkpoints(database_url)
    # The owner cuts more of the chain and forges a checkpoint past it, without the key.
    cut = cp["seq"] + 2
    [row] = [r for r in rows(database_url) if r["seq"] == cut]
    tamper(
        database_url,
        ("DELETE FROM audit_log WHERE seq <= :s", {"s": cut}),
        (
            "INSERT INTO audit_checkpoints (seq, hash, count, at, signature) "
            "VALUES (:s, :h, :s, :at, NULL)",
            {"s": cut, "h": row["hash"], "at": row["at"]},
        ),
    )
    code, said = verify_says(monkeypatch, capsys, database_url)
    assert code == 0, said  # without the key, a checkpoint is taken as written
    code, said = verify_says(monkeypatch, capsys, database_url, JOBGATE_AUDIT_SIGNING_KEY=KEY)
    assert code == 1, said
    assert f"checkpoint at entry {cut} is not signed" in said, said


async def test_the_database_refuses_deleting_entries_no_checkpoint_covers(
    gateway: Gateway, database_url: str
) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import DBAPIError

    from app.core.db.database import sync_url

    await small_run(gateway)
    await _prune(gateway)
    await two_ops(gateway)
    [cp] = _checkpoints(database_url)
    engine = create_engine(sync_url(database_url))
    try:
        for sql in (
            f"DELETE FROM audit_log WHERE seq = {cp['seq'] + 1}",
            "DELETE FROM operation_history",
            "UPDATE audit_checkpoints SET hash = 'x'",
            "DELETE FROM audit_checkpoints",
        ):
            with pytest.raises(DBAPIError), engine.begin() as conn:
                conn.execute(text(sql))
    finally:
        engine.dispose()
