"""`jobgate clock` through the real entry point (docs/operations.md, "Clocks"): the
reference and the host's offset from it, exit 1 beyond the bound naming the way out, and
`--adopt-host` re-taking SQLite's anchor (audited) so the host is within the bound again.
The anchor "taken while the host's clock was wrong" is written by the test: the host's
time an hour behind, at the real CLOCK_BOOTTIME."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.core.db import host_anchor
from app.core.db.database import Database, sync_url
from app.core.db.db_clock import DatabaseClock
from app.core.runtime.clock import SystemClock
from tests.conftest import IS_POSTGRES
from tests.support.cli_run import jobgate_cli


def _audit_kinds(database_url: str) -> list[str]:
    engine = sa.create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            return [r[0] for r in conn.execute(sa.text("SELECT kind FROM audit_log"))]
    finally:
        engine.dispose()


@pytest.mark.skipif(IS_POSTGRES, reason="the anchor is SQLite's reference")
async def test_a_wrong_anchor_is_reported_and_adopting_the_host_clock_clears_it(
    database_url: str,
) -> None:
    boot_id, boottime = host_anchor.read_boot_id(), host_anchor.read_boottime()
    if boot_id is None or boottime is None:
        pytest.skip("no boot id or CLOCK_BOOTTIME here: the host's clock is the reference")
    env = {"JOBGATE_DATABASE_URL": database_url}
    fresh = jobgate_cli("clock", **env)
    assert fresh.returncode == 0, fresh.stderr
    assert f"boot {boot_id}" in fresh.stdout and "no anchor taken yet" in fresh.stdout

    db = Database(database_url)
    try:
        # The host's clock an hour behind when the anchor was taken, at CLOCK_BOOTTIME now.
        wrong, at = datetime.now(UTC) - timedelta(hours=1), host_anchor.read_boottime()
        assert at is not None
        await host_anchor.shared_anchor(db, boot_id, wrong, at)
        off = jobgate_cli("clock", **env)
        assert off.returncode == 1, off.stdout + off.stderr
        assert re.search(r"\+3(599|600)\.\d+ s off", off.stdout), off.stdout
        assert "BEYOND the bound" in off.stdout
        assert "jobgate clock --adopt-host" in off.stdout

        clock = DatabaseClock(SystemClock(), limit_seconds=2.0)
        await clock.measure(db)  # what every process of the boot sees: skew, and why
        refusal = clock.health.refusal() or ""
        assert refusal.startswith("clock skew") and "--adopt-host" in refusal, refusal

        adopted = jobgate_cli("clock", "--adopt-host", **env)
        assert adopted.returncode == 0, adopted.stdout + adopted.stderr
        assert "re-taken from this host's clock" in adopted.stdout
        assert re.search(r"the reference moved \+3(599|600)\.", adopted.stdout), adopted.stdout
        assert "already stored now count from the new time" in adopted.stdout
        assert "clock_anchor_adopted" in _audit_kinds(database_url)

        again = jobgate_cli("clock", **env)
        assert again.returncode == 0 and "within the bound" in again.stdout, again.stdout
        await clock.measure(db)
        assert clock.health.refusal() is None
    finally:
        await db.dispose()
    assert jobgate_cli("audit", "verify", **env).returncode == 0


@pytest.mark.postgres_only
def test_on_postgres_the_reference_is_the_database_and_there_is_nothing_to_adopt(
    database_url: str,
) -> None:
    env = {"JOBGATE_DATABASE_URL": database_url}
    shown = jobgate_cli("clock", **env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "clock_timestamp()" in shown.stdout and "within the bound" in shown.stdout
    refused = jobgate_cli("clock", "--adopt-host", **env)
    assert refused.returncode == 2 and "no anchor to re-take" in refused.stdout


@pytest.mark.skipif(IS_POSTGRES, reason="a SQLite file that is not there says it")
def test_a_database_never_migrated_is_exit_3(tmp_path: Path) -> None:
    got = jobgate_cli("clock", JOBGATE_DATABASE_URL=f"sqlite:///{tmp_path / 'none.db'}")
    assert got.returncode == 3 and "jobgate migrate" in got.stderr, got.stderr
