"""Retention never takes a create held for approval, however old: it is not done, and a
person still has to decide it (docs/operations.md, "Retention")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.retention.prune import prune_all
from tests.conftest import Gateway
from tests.integration.test_retention import _done, _plan

POLICY = """\
version: 1
rules:
  - name: gated
    provider: mock
    labels: {lane: gated}
    approval: always
"""


@pytest.fixture
def gateway_settings(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return {"policy_file": path, "approval_seconds": 400 * 86400.0}


async def test_a_create_held_for_approval_is_never_pruned(gateway: Gateway) -> None:
    held = await gateway.start(labels={"lane": "gated"})
    assert held.status_code == 202, held.text
    op_id = held.json()["operation_id"]
    assert held.json()["state"] == "awaiting_approval"
    done = await _done(gateway, {"name": "fast"})  # what the same prune does take

    tally = await prune_all(gateway.ctx.db, gateway.ctx.results, _plan(gateway, days_later=365))

    assert tally.operations == 1, tally
    assert (await gateway.http.get(f"/v1/operations/{done['operation_id']}")).status_code == 410
    kept = await gateway.http.get(f"/v1/operations/{op_id}")
    assert kept.status_code == 200 and kept.json()["state"] == "awaiting_approval", kept.text
