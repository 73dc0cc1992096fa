"""Readiness tells the truth: no start, and 503 from /v1/readyz, on a database not at head.

Seen before: `jobgate serve` on a never-migrated database answered /v1/healthz with
`{"ok": true}` while every create was a 500 and the log filled with tracebacks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from alembic import command
from app.core.config import Settings
from app.core.db.migrate import alembic_config
from app.core.db.schema_state import head_revision
from tests.conftest import IS_POSTGRES, Gateway, _pg_admin, _pg_url
from tests.support.cli_run import jobgate_cli
from tests.support.processes import Process, free_port, wait_healthy


@pytest.fixture
def empty_database_url(tmp_path: Path) -> Iterator[str]:
    """A database that exists and is empty, on the back-end under test."""
    if IS_POSTGRES:
        name = f"jobgate_e_{uuid.uuid4().hex[:12]}"
        _pg_admin(f'CREATE DATABASE "{name}"')
        try:
            yield _pg_url(name)
        finally:
            _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        yield f"sqlite:///{tmp_path / 'empty.db'}"


def test_serve_and_observe_refuse_an_unmigrated_database_in_one_line(
    empty_database_url: str, tmp_path: Path
) -> None:
    port = str(free_port())
    for args in (["serve", "--port", port], ["observe"]):
        r = jobgate_cli(
            *args, JOBGATE_DATABASE_URL=empty_database_url, JOBGATE_DATA_DIR=str(tmp_path / "d")
        )
        assert r.returncode == 3, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr  # one line, no traceback, no server log
        assert "never migrated" in lines[0] and "run `jobgate migrate`" in lines[0]
    # Nothing listens: the refusal came before uvicorn bound the port.
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(f"http://127.0.0.1:{port}/v1/healthz", timeout=1)
    if not IS_POSTGRES:  # the check does not create the SQLite file it was pointed at
        assert not (tmp_path / "empty.db").exists()


def test_a_database_behind_head_is_refused_and_named(
    empty_database_url: str, tmp_path: Path
) -> None:
    command.upgrade(alembic_config(empty_database_url), "0004")
    r = jobgate_cli("serve", "--port", "1", JOBGATE_DATABASE_URL=empty_database_url)
    assert r.returncode == 3
    assert f"at migration 0004, behind {head_revision()}" in r.stderr
    assert "jobgate migrate" in r.stderr
    check = jobgate_cli("migrate", "--check", JOBGATE_DATABASE_URL=empty_database_url)
    assert check.returncode == 1 and "behind" in check.stdout
    assert jobgate_cli("migrate", JOBGATE_DATABASE_URL=empty_database_url).returncode == 0
    check = jobgate_cli("migrate", "--check", JOBGATE_DATABASE_URL=empty_database_url)
    assert check.returncode == 0, check.stdout


def test_an_unreachable_database_is_refused() -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://postgres@127.0.0.1:{port}/nothing"
    r = jobgate_cli("observe", JOBGATE_DATABASE_URL=url)
    assert r.returncode == 3 and "not reachable" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_sqlite_default_migrates_itself(tmp_path: Path) -> None:
    """No JOBGATE_DATABASE_URL: `serve` builds `<data dir>/jobgate.db` and is ready."""
    port = free_port()
    env = {"JOBGATE_DATA_DIR": str(tmp_path / "data"), "JOBGATE_AUTH": "dev"}
    proc = Process(["serve", "--port", str(port), "--no-observer"], env, tmp_path / "log").start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout=90)  # a loaded CI box starts a gateway slowly
        ready = httpx2.get(f"{url}/v1/readyz", timeout=5)
        assert ready.status_code == 200, ready.text
        assert ready.json()["database_revision"] == head_revision()
    finally:
        proc.terminate()
    assert (tmp_path / "data" / "jobgate.db").exists()


async def test_readyz_is_200_at_head_and_the_landing_page_links(gateway: Gateway) -> None:
    r = await gateway.http.get("/v1/readyz")
    assert r.status_code == 200
    body = r.json()
    assert body.pop("storage_free_bytes") >= gateway.ctx.settings.storage_reserve_bytes
    assert body.pop("clock_offset_seconds") == 0.0  # a test clock: nothing to correct
    assert body == {
        "ready": True,
        "reason": "ok",
        "database_revision": head_revision(),
        "head_revision": head_revision(),
    }
    page = await gateway.http.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'href="/docs"' in page.text and 'href="/operations"' in page.text


async def test_readyz_is_503_with_a_reason_on_an_unmigrated_database(
    empty_database_url: str, tmp_path: Path
) -> None:
    from app.main import create_app

    settings = Settings(database_url=empty_database_url, data_dir=tmp_path, auth="dev")
    app = create_app(settings, run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            r = await http.get("/v1/readyz")
            assert (await http.get("/v1/healthz")).status_code == 200  # alive, not ready
    assert r.status_code == 503
    body = r.json()
    assert body["ready"] is False and body["database_revision"] is None
    assert "never migrated" in body["reason"] and "jobgate migrate" in body["reason"]


async def test_readyz_is_503_when_the_database_cannot_be_reached(tmp_path: Path) -> None:
    """Through the running pool: a database it cannot open answers 503 with the reason,
    not a 500."""
    from app.main import create_app

    url = f"sqlite:///{tmp_path / 'no-such-dir' / 'jobgate.db'}"
    app = create_app(Settings(database_url=url, data_dir=tmp_path, auth="dev"), run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            r = await http.get("/v1/readyz")
    assert r.status_code == 503
    assert r.json()["ready"] is False and "not reachable" in r.json()["reason"], r.text


async def test_metrics_answer_while_the_database_cannot_be_reached(tmp_path: Path) -> None:
    """A scrape keeps the process's own figures and says the database is down."""
    from app.main import create_app

    url = f"sqlite:///{tmp_path / 'no-such-dir' / 'jobgate.db'}"
    app = create_app(Settings(database_url=url, data_dir=tmp_path, auth="dev"), run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            r = await http.get("/metrics")
    assert r.status_code == 200, r.text
    assert "jobgate_database_up 0.0" in r.text
    assert "jobgate_waits_in_flight" in r.text  # the process's own figures are there
