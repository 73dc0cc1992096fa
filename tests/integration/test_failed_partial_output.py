"""A remote job that FAILED after some items succeeded: its partial output is kept and
offered at `GET /result` with `status: failed`, and never reads as a success.

No bundled provider's fake produces such a job faithfully to its provider's public API
(OpenAI and Anthropic batches that end early are `expired`/`cancelled`; Azure, Google
and Replicate fail only when nothing succeeded), so the bundled mock provider's
`failed_partial` scenario does: it fails on the item after the `succeeded` ones and
shows the part done with the failure (docs/mock-provider.md).
"""

from __future__ import annotations

from tests.conftest import Gateway
from tests.integration.profiles.conftest import never_success


async def test_a_failed_job_with_items_done_offers_its_partial_output(gateway: Gateway) -> None:
    made = await gateway.start({"name": "failed_partial", "processed": 10, "succeeded": 4})
    assert made.status_code == 202, made.text
    op_id = made.json()["operation_id"]
    done = await gateway.run_until_done(op_id)
    assert (done["state"], done["status"], done["outcome"]) == ("failed",) * 3, done
    never_success(done)
    assert done["error"]["code"] == "remote_failed"
    # 4 succeeded, the 5th failed, the 5 after it never ran.
    assert done["result_summary"] == {
        "processed": 10,
        "succeeded": 4,
        "failed": 1,
        "not_processed": 5,
    }
    assert "partial output is kept" in done["message"]
    assert "Report it only as the part of a failed job" in done["message"]
    assert done["next_action"]["call"] == f"GET /v1/operations/{op_id}/result"
    assert done["result"] is None  # only a success carries `result` in the body

    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    kept = r.json()
    assert kept["status"] == "failed"
    assert "FAILED" in kept["message"] and "partial output is kept" in kept["message"]
    assert "Report the failure" in kept["message"]
    assert "may report success" not in kept["message"].lower()
    assert [row["n"] for row in kept["result"]["rows"]] == [0, 1, 2, 3]
    assert kept["sha256"] and kept["size"] > 0
    assert kept["result_summary"] == done["result_summary"]

    errors = (await gateway.http.get(f"/v1/operations/{op_id}/errors")).json()["items"]
    assert [e["item"]["index"] for e in errors] == [4]
    token = await gateway.token_of(op_id)
    assert gateway.stats(token)["creates_by_token"][token] == 1


async def test_a_failed_job_without_output_still_answers_409(gateway: Gateway) -> None:
    made = await gateway.start({"name": "late_failure", "polls": 1})
    op_id = made.json()["operation_id"]
    done = await gateway.run_until_done(op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    assert done["next_action"] is None and "partial output" not in done["message"]
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 409, r.text
    err = r.json()
    assert err["error"]["code"] == "result_not_available"
    assert err["operation"]["state"] == "failed"
