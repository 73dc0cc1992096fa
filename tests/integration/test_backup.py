"""The restore drill of docs/operations.md: `jobgate backup DIR` while creates keep
arriving, then a gateway started on DIR as its data directory holds every operation
created before the backup began, serves their stored results, and its audit chain
verifies. On PostgreSQL the command says how to dump and copies the result files."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.config import default_database_url
from app.core.db.database import is_sqlite
from tests.conftest import Gateway, make_settings
from tests.integration.test_audit_trail import jobgate
from tests.support.timing import budget


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"inline_result_max_bytes": 16}  # results go to files, which the backup copies


def _backup(dest: Path, database_url: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    env = {**clean, "JOBGATE_DATABASE_URL": database_url, "JOBGATE_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "backup", str(dest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=budget(60),
    )


async def _finished(gw: Gateway, n: int) -> list[str]:
    ids = []
    for _ in range(n):
        r = await gw.start({"name": "fast"})
        assert r.status_code == 202, r.text
        ids.append(r.json()["operation_id"])
    for op_id in ids:
        await gw.run_until_done(op_id)
    return ids


async def test_a_backup_under_load_restores_as_a_data_directory(
    gateway: Gateway,
    database_url: str,
    mock_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    if not is_sqlite(database_url):
        pytest.skip("the SQLite drill; PostgreSQL is dumped with pg_dump")
    before = await _finished(gateway, 5)
    before.append((await gateway.start({"name": "never_finishes"})).json()["operation_id"])
    stop = asyncio.Event()
    during: list[str] = []

    async def load() -> None:  # creates keep arriving while the backup runs
        while not stop.is_set():
            r = await gateway.start({"name": "fast"})
            during.append(r.json()["operation_id"])
            await asyncio.sleep(0)

    loader = asyncio.create_task(load())
    dest = tmp_path / "backup"
    try:
        await asyncio.sleep(0)
        done = await asyncio.to_thread(_backup, dest, database_url, tmp_path / "data")
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await loader
    assert done.returncode == 0, done.stderr
    assert f"JOBGATE_DATA_DIR={dest}" in done.stdout
    assert during, "no create arrived while the backup ran"
    assert (dest / "jobgate.db").exists() and any((dest / "results").rglob("*.json"))

    # Refused: a backup over an existing one.
    again = _backup(dest, database_url, tmp_path / "data")
    assert again.returncode == 2 and "exists" in again.stderr

    from app.main import create_app

    copy_url = default_database_url(dest)
    app = create_app(make_settings(copy_url, mock_url, tmp_path, data_dir=dest), run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            for op_id in before:
                r = await http.get(f"/v1/operations/{op_id}")
                assert r.status_code == 200, (op_id, r.text)
            result = await http.get(f"/v1/operations/{before[0]}/result")
            assert result.status_code == 200, result.text
    capsys.readouterr()
    assert jobgate(monkeypatch, copy_url, "audit", "verify") == 0
    assert "audit chain intact" in capsys.readouterr().out


async def test_on_postgresql_the_backup_says_how_and_copies_the_results(
    gateway: Gateway, database_url: str, tmp_path: Path
) -> None:
    if is_sqlite(database_url):
        pytest.skip("PostgreSQL only")
    await _finished(gateway, 2)
    dest = tmp_path / "backup"
    done = _backup(dest, database_url.replace("postgres@", "postgres:s3cret@"), tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "pg_dump --format=custom" in done.stdout and "pg_restore" in done.stdout
    assert "s3cret" not in done.stdout + done.stderr
    assert "copied 2 stored result files" in done.stdout, done.stdout
