"""A gateway test against the scripted provider (tests/support/scripted_provider.py): its
profiles written where the gateway reads them, and one script run to its end through the
agent API with the production step loop."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Gateway


def scripted_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, texts: dict[str, str]
) -> dict[str, Any]:
    """`gateway_settings` for profiles named by `texts` (name -> YAML) at `url`."""
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    for name, text in texts.items():
        (profiles / f"{name}.yaml").write_text(text)
    monkeypatch.setenv("JOBGATE_SCRIPTED_URL", url)
    return {"profiles_dir": profiles}


async def run_script(gateway: Gateway, provider: str, script: dict[str, Any]) -> dict[str, Any]:
    """Create a `run` of `script`, step it to its end, and return the final body."""
    body = {"provider": provider, "kind": "run", "input": script}
    r = await gateway.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    assert r.status_code == 202, r.text
    op_id = r.json()["operation_id"]
    await gateway.run_until_done(op_id, step=5.0, max_ticks=60)
    done = (await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})).json()
    assert done["done"] is True, done
    return dict(done)
