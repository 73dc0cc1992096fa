"""docker-compose.yml and the Dockerfile only use commands and settings that exist.

No Docker engine runs in CI here, so this is the check that a renamed subcommand or
setting cannot silently break the container; where `docker compose` exists, it also
validates the file the way Docker does.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli import build_parser
from app.core.config import Settings
from jobgate_fakes.mock.settings import MockSettings
from jobgate_fakes.providers.settings import FakeSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
DOCKERFILE = (ROOT / "Dockerfile").read_text()
SERVICES: dict[str, Any] = COMPOSE["services"]


def _known_variables() -> set[str]:
    known = set()
    for cls, prefix in ((Settings, "JOBGATE_"), (MockSettings, "JOBGATE_MOCK_"),
                        (FakeSettings, "JOBGATE_FAKE_")):  # fmt: skip
        known |= {prefix + name.upper() for name in cls.model_fields}
    return known


def _jobgate_commands() -> list[list[str]]:
    """Every `jobgate ...` argv in the compose file and the Dockerfile (CMD, health checks)."""
    found: list[list[str]] = []
    for svc in SERVICES.values():
        candidates = [svc.get("command") or []]
        health = (svc.get("healthcheck") or {}).get("test") or []
        candidates.append(health[1:] if health[:1] == ["CMD"] else health)
        found += [c for c in candidates if c[:1] == ["jobgate"]]
    for line in re.findall(r"^\s*(?:CMD|HEALTHCHECK .*CMD)\s+(\[.*\])\s*$", DOCKERFILE, re.M):
        argv = json.loads(line)
        if argv[:1] == ["jobgate"]:
            found.append(argv)
    return found


def test_every_jobgate_command_parses_with_the_real_cli() -> None:
    commands = _jobgate_commands()
    subcommands = {c[1] for c in commands}
    assert {"serve", "observe", "migrate", "mock-provider"} <= subcommands
    parser = build_parser()
    for argv in commands:
        parser.parse_args(argv[1:])  # SystemExit (a failure) on an unknown command or flag


def test_every_jobgate_variable_is_a_setting() -> None:
    used = set(re.findall(r"\bJOBGATE_[A-Z0-9_]+", DOCKERFILE))
    for svc in SERVICES.values():
        used |= {k for k in (svc.get("environment") or {}) if k.startswith("JOBGATE_")}
    assert "JOBGATE_DATA_DIR" in used and "JOBGATE_DATABASE_URL" in used
    assert used <= _known_variables(), used - _known_variables()


def test_migrations_run_once_before_anything_uses_the_database() -> None:
    assert SERVICES["migrate"]["command"] == ["jobgate", "migrate"]
    for name in ("gateway", "observer"):
        needs = SERVICES[name]["depends_on"]
        assert needs["migrate"] == {"condition": "service_completed_successfully"}, name
    health = " ".join(SERVICES["gateway"]["healthcheck"]["test"])
    assert "/v1/readyz" in health
    assert SERVICES["observer"]["healthcheck"]["test"] == ["CMD", "jobgate", "migrate", "--check"]


def test_the_image_runs_as_a_user_that_can_write_its_data_dir() -> None:
    users = re.findall(r"^USER\s+(\S+)", DOCKERFILE, re.M)
    assert users and users[-1] not in ("root", "0")
    data_dir = re.search(r"JOBGATE_DATA_DIR=(\S+)", DOCKERFILE)
    assert data_dir is not None
    assert re.search(rf"chown {users[-1]} {re.escape(data_dir.group(1))}", DOCKERFILE)
    # The SQLite default follows the data dir, so it lands on the writable volume.
    assert Settings(data_dir=Path(data_dir.group(1))).database_url == (
        f"sqlite:///{data_dir.group(1)}/jobgate.db"
    )
    assert "/v1/readyz" in DOCKERFILE
    for src in re.findall(r"^COPY\s+(.+?)\s+\S+$", DOCKERFILE, re.M):
        for path in src.split():
            assert (ROOT / path).exists(), path


def test_the_gateway_image_holds_no_fakes() -> None:
    """The default (last) stage copies no jobgate_fakes; the `mock` stage, which compose
    builds for its mock provider, does."""
    stages = re.split(r"^FROM ", DOCKERFILE, flags=re.M)[1:]
    named = {stage.split()[2]: stage for stage in stages}
    assert list(named)[-1] == "gateway"
    gateway_chain = named["gateway"] + named["base"]
    assert "jobgate_fakes" not in gateway_chain
    assert "COPY jobgate_fakes" in named["mock"]
    assert COMPOSE["services"]["mock-provider"]["build"] == {"context": ".", "target": "mock"}


def _has_compose() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _has_compose(), reason="no `docker compose` on this machine")
def test_docker_compose_config_is_valid() -> None:
    r = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
