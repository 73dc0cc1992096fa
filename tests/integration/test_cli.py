"""The `jobgate` command refuses to start on a bad profile or an unsafe setting."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_run import jobgate_cli

BROKEN = """\
name: broken
base_url: http://127.0.0.1:9
kinds:
  report:
    create: {method: POST}
status: {path: "/jobs/{job_id}"}
pointers: {job_id: /id, state: /state}
states: {done: succeeded}
"""


def test_a_bad_profile_fails_start_up_naming_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN)
    for command in (["serve", "--port", "1"], ["observe"]):
        r = jobgate_cli(*command, JOBGATE_PROFILES_DIR=str(tmp_path), JOBGATE_AUTH="dev")
        assert r.returncode == 2
        assert "broken.yaml" in r.stderr and "kinds.report.create.path" in r.stderr


def test_dev_auth_is_refused_off_loopback() -> None:
    r = jobgate_cli("serve", "--host", "0.0.0.0", "--port", "1", JOBGATE_AUTH="dev")
    assert r.returncode == 2 and "loopback" in r.stderr


def test_migrate_builds_the_sqlite_default(tmp_path: Path) -> None:
    r = jobgate_cli("migrate", JOBGATE_DATABASE_URL=f"sqlite:///{tmp_path}/sub/j.db")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sub" / "j.db").exists()
