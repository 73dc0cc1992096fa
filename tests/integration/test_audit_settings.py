"""Audit settings: signed chain heads (`JOBGATE_AUDIT_SIGNING_KEY`) and `JOBGATE_AUDIT=off`."""

from __future__ import annotations

from typing import Any

import pytest

from app.audit.chain import GENESIS, canonical_payload, entry_hash, sign_head
from tests.conftest import Gateway
from tests.integration.test_audit_trail import _entry, jobgate, rows, small_run, tamper

KEY = "audit-signing-key-for-tests"


@pytest.mark.parametrize("gateway_settings", [{"audit_signing_key": KEY}])
async def test_a_rewritten_chain_passes_the_hashes_but_not_the_signature(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await small_run(gateway)
    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0
    assert jobgate(monkeypatch, database_url, "audit", "verify", JOBGATE_AUDIT_SIGNING_KEY=KEY) == 0
    capsys.readouterr()

    # Someone with the database but not the key edits one entry and rehashes everything
    # after it, head included: every hash holds again, only the signature cannot follow.
    entries = rows(database_url)
    k = len(entries) // 2
    statements: list[tuple[str, dict[str, Any]]] = []
    prev = entries[k - 2]["hash"] if k > 1 else GENESIS
    for row in entries[k - 1 :]:
        change: dict[str, Any] = {"prev_hash": prev}
        if row["seq"] == k:
            change["payload"] = canonical_payload({"rewritten": True})
        e = _entry(row, **change)
        prev = entry_hash(e)
        statements.append(
            (
                "UPDATE audit_log SET payload = :p, prev_hash = :ph, hash = :h WHERE seq = :s",
                {"p": e.payload, "ph": e.prev_hash, "h": prev, "s": e.seq},
            )
        )
    statements.append(("UPDATE audit_head SET hash = :h", {"h": prev}))
    tamper(database_url, *statements)

    monkeypatch.delenv("JOBGATE_AUDIT_SIGNING_KEY")
    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0  # hashes alone: fooled
    assert jobgate(monkeypatch, database_url, "audit", "verify", JOBGATE_AUDIT_SIGNING_KEY=KEY) == 1
    assert "(signature)" in capsys.readouterr().err
    # A wrong key is no better than none.
    wrong = sign_head("another-key", prev)
    tamper(database_url, ("UPDATE audit_head SET signature = :s", {"s": wrong}))
    assert jobgate(monkeypatch, database_url, "audit", "verify", JOBGATE_AUDIT_SIGNING_KEY=KEY) == 1


@pytest.mark.parametrize("gateway_settings", [{"audit_enabled": False}])
async def test_audit_off_appends_nothing(
    gateway: Gateway, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await small_run(gateway)
    ops = (await gateway.http.get("/v1/operations")).json()["items"]
    assert len(ops) == 2  # the run happened
    assert rows(database_url) == []
    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0
    assert "intact: 0 entries" in capsys.readouterr().out


def test_the_setting_reads_jobgate_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.config import Settings

    assert Settings().audit_enabled is True
    monkeypatch.setenv("JOBGATE_AUDIT", "off")
    assert Settings().audit_enabled is False
