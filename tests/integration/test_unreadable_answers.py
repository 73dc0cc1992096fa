"""A status answer no reader can keep ends the operation `contract_violation` on the
first read, not after several failed steps as `stalled` (docs/agent-api.md).

The bundled mock sends them on request: `status_depth` nests a member 200,000 arrays
deep (Python's parser raises RecursionError), `total_exp` reports a progress total of
10^30 (no integer column holds it).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Gateway


@pytest.mark.parametrize(
    ("scenario", "why"),
    [
        ({"name": "never_finishes", "status_depth": 200_000}, "nested deeper"),
        ({"name": "slow", "polls": 3, "total_exp": 30}, "progress.total is a number of 31 digits"),
    ],
)
async def test_an_unreadable_status_is_a_contract_violation_on_the_first_read(
    gateway: Gateway, scenario: dict[str, Any], why: str
) -> None:
    made = await gateway.start(scenario)
    assert made.status_code == 202, made.text
    op_id = made.json()["operation_id"]
    done = await gateway.run_until_done(op_id, max_ticks=20)
    assert done["state"] == "contract_violation", (done["state"], done["error"])
    assert done["status"] == "needs_attention"
    assert done["error"]["code"] == "contract_violation"
    assert why in done["error"]["message"] and done["progress"] is None
    job = gateway.jobs_for(op_id)[0]
    stats = gateway.mock.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert stats["jobs"][job]["status_calls"] == 1  # the first read decided it
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    moves = [row["to_state"] for row in history if row["to_state"]]
    assert moves[-1] == "contract_violation" and "stalled" not in moves, moves
