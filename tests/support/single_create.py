"""What the single-create scenario tests share: the three provider modes, the end state
docs/single-create.md promises for each, and readers of history and the mock's counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from app.providers.language.loader import BUILTIN_DIR

PROFILES = Path(__file__).parents[1] / "profiles"  # mock_lookup.yaml, mock_blind.yaml

# single_create -> the profile that has it (the bundled mock honours the token).
MODES = {"token": "mock", "lookup": "mock_lookup", "none": "mock_blind"}

# An ambiguous create whose job exists: what each mode ends in (the table's promise).
PROMISED = {"token": "succeeded", "lookup": "succeeded", "none": "create_unconfirmed"}

# The create faults a scenario input can ask the mock for (the timeout one needs a
# profile whose read timeout is shorter than the delay: see `profiles_for_tests`).
FAULTS: dict[str, dict[str, Any]] = {
    "lost_response": {"name": "lost_create_response"},
    "accept_then_5xx": {"name": "accept_then_5xx"},
    "timeout": {"name": "fast", "create_delay_ms": 2000},
}
SHORT = "_t"  # suffix of the short-timeout variant of each mode's profile


def profiles_for_tests(directory: Path) -> Path:
    """The test profiles, a variant of each mode's profile (name + `_t`) that gives up
    reading after 0.5 s (so a create the mock answers late is a real timeout), and
    `mock_nolookup`: the token-honouring mock without its lookup."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in MODES.values():
        source = BUILTIN_DIR / f"{name}.yaml" if name == "mock" else PROFILES / f"{name}.yaml"
        data = yaml.safe_load(source.read_text())
        if name != "mock":
            (directory / source.name).write_text(source.read_text())
        data["name"] = name + SHORT
        data["timeouts"] = {"connect": 2, "read": 0.5, "seconds": 1}
        (directory / f"{name}{SHORT}.yaml").write_text(yaml.safe_dump(data))
    data = yaml.safe_load((BUILTIN_DIR / "mock.yaml").read_text())
    data["name"] = "mock_nolookup"
    del data["lookup"]
    (directory / "mock_nolookup.yaml").write_text(yaml.safe_dump(data))
    return directory


def transitions(items: list[dict[str, Any]]) -> list[str]:
    return [i["to_state"] for i in items if i["kind"] == "transition"]


def exchanges(items: list[dict[str, Any]], operation: str) -> list[dict[str, Any]]:
    """The exchanges of one kind of call (`create`, `lookup`, ...) that were really sent."""
    return [
        i
        for i in items
        if i["kind"] == "exchange" and i["data"]["operation"] == operation and i["data"]["method"]
    ]


def rows(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == kind]


def check_history(mode: str, items: list[dict[str, Any]], *, outage: bool = False) -> None:
    """The history explains each step the table promises for an ambiguous create.

    `outage`: the create deadline passed before any reconciliation, so the one round
    there was only read (no resend to refuse: past the deadline nobody resends)."""
    path = transitions(items)
    assert path[:2] == ["create_pending", "create_unknown"], path
    # The job exists, so even a token provider's replay is never needed: lookup first.
    assert len(exchanges(items, "create")) == 1
    if mode == "none":
        assert path == ["create_pending", "create_unknown", "create_unconfirmed"], path
        assert len(rows(items, "resend_refused")) == 1
        assert exchanges(items, "lookup") == []
        return
    assert "reconciling" in path and "accepted" in path, path
    first_lookup = items.index(exchanges(items, "lookup")[0])
    accepted = next(i for i, x in enumerate(items) if x.get("to_state") == "accepted")
    assert first_lookup < accepted  # the job was looked for before anything else
    if mode == "lookup" and not outage:
        assert len(rows(items, "resend_refused")) >= 1
    else:
        assert rows(items, "resend_refused") == []
