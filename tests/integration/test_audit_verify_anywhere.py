"""`jobgate audit verify` run from any directory: it reads the same settings as `serve`,
says which database it looked for when there is none (creating nothing), and never
prints a traceback (docs/audit.md, "Verify": exit 2 is never a verdict on the chain)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.audit import commands
from app.cli import main
from tests.support.cli_run import jobgate_cli
from tests.support.processes import START_TIMEOUT_S


def _jobgate(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return jobgate_cli(*args, cwd=cwd, timeout=START_TIMEOUT_S, **env)


def test_verify_where_there_is_no_database_names_the_path_and_creates_nothing(
    tmp_path: Path,
) -> None:
    done = _jobgate(tmp_path, "audit", "verify")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"jobgate: no jobgate database at {tmp_path / 'data' / 'jobgate.db'}")
    assert "JOBGATE_DATABASE_URL" in line and "JOBGATE_DATA_DIR" in line
    assert list(tmp_path.iterdir()) == []  # no empty database left behind


def test_a_configured_sqlite_file_that_does_not_exist_is_named(tmp_path: Path) -> None:
    gone = tmp_path / "elsewhere.db"
    done = _jobgate(tmp_path, "audit", "export", JOBGATE_DATABASE_URL=f"sqlite:///{gone}")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"jobgate: no database file at {gone} (JOBGATE_DATABASE_URL)"
    assert not gone.exists()


def test_verify_from_another_directory_finds_the_database_its_settings_name(
    tmp_path: Path,
) -> None:
    data = tmp_path / "gateway-data"
    migrated = _jobgate(tmp_path, "migrate", JOBGATE_DATA_DIR=str(data))
    assert migrated.returncode == 0, migrated.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _jobgate(elsewhere, "audit", "verify", JOBGATE_DATA_DIR=str(data))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("audit chain intact")


def test_an_unexpected_failure_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    def broken(*args: object, **kwargs: object) -> commands.Report:
        raise RuntimeError("something nobody foresaw")

    monkeypatch.setattr(commands, "verify_database", broken)
    monkeypatch.setenv("JOBGATE_DATABASE_URL", "sqlite:///:memory:")
    assert main(["audit", "verify"]) == 2
    err = capsys.readouterr().err
    assert err == "jobgate: cannot verify: RuntimeError: something nobody foresaw\n"
