"""Commands that run and end print only what they are for: `keys create` its key (stdout)
and two lines about it (stderr), `audit verify` its verdict; none of the INFO lines of the
machinery they start (the database clock, the audit writer). `--verbose` adds them."""

from __future__ import annotations

import subprocess
import uuid

from tests.support.cli_run import jobgate_cli


def jobgate(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return jobgate_cli(*args, JOBGATE_DATABASE_URL=database_url, JOBGATE_LOG_FORMAT="text")


def test_keys_create_and_audit_verify_print_only_what_they_are_for(database_url: str) -> None:
    name = f"quiet-{uuid.uuid4().hex[:6]}"
    made = jobgate(database_url, "keys", "create", "--name", name, "--role", "agent")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("jgk_") and made.stdout.count("\n") == 1
    assert made.stderr.splitlines() == [
        f"created agent key {name!r} (prefix {made.stdout[4:12]}).",
        "This is the only time the key is shown; store it now:",
    ]
    listed = jobgate(database_url, "keys", "list")
    assert listed.returncode == 0 and listed.stderr == "" and name in listed.stdout
    verified = jobgate(database_url, "audit", "verify")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("audit chain intact:") and verified.stderr == ""


def test_verbose_prints_the_log_lines_too(database_url: str) -> None:
    name = f"loud-{uuid.uuid4().hex[:6]}"
    loud = jobgate(database_url, "keys", "create", "--name", name, "--role", "agent", "-v")
    assert loud.returncode == 0, loud.stderr
    assert "INFO" in loud.stderr and "clock within its bound" in loud.stderr
    assert loud.stdout.startswith("jgk_")  # stdout is still the key alone
