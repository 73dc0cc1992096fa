"""Every count is backed (docs/agent-api.md, "Counts and /errors"), driven through the
REST API against the scripted provider (tests/support/scripted_provider.py): a count of
failed items that `/errors` does not list is said as such and nothing points at the
empty list; counts in another unit name it; failed items listed without counts get
their counts from the output, not from the failed list. Every bundled profile's fakes
check the same on every finished operation (tests/integration/profiles/conftest.py,
`backed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Gateway
from tests.integration.profiles.conftest import backed, errors_of
from tests.support.scripted_provider import create_app, profile_yaml
from tests.support.scripted_runs import run_script, scripted_profiles
from tests.support.servers import serve_app

OK = [{"id": "a"}, {"id": "b"}]


def counts(total: int, succeeded: int, failed: int, not_processed: int) -> dict[str, int]:
    return {"total": total, "succeeded": succeeded, "failed": failed,
            "not_processed": not_processed}  # fmt: skip


@pytest.fixture(scope="module")
def scripted_url() -> Iterator[str]:
    with serve_app(create_app()) as url:
        yield url


@pytest.fixture
def gateway_settings(
    scripted_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    texts = {
        "scripted": profile_yaml("scripted", itemless=False),
        "scripted_chars": profile_yaml(
            "scripted_chars", itemless=False, inline=True, unit="characters"
        ),
        "scripted_one": profile_yaml("scripted_one", itemless=True),
    }
    return scripted_profiles(tmp_path, monkeypatch, scripted_url, texts)


async def run(gateway: Gateway, provider: str, script: dict[str, Any]) -> dict[str, Any]:
    """`run_script`, then every count of the end is checked against `/errors`."""
    done = await run_script(gateway, provider, script)
    backed(done, await errors_of(gateway, done["operation_id"]))
    return done


async def test_failed_items_counted_but_not_listed_are_said_so(gateway: Gateway) -> None:
    final = {"state": "succeeded", "counts": counts(4, 2, 2, 0)}
    done = await run(gateway, "scripted", {"final": final, "output": OK})
    assert done["outcome"] == "completed_with_errors", done
    assert "2 items of 4 FAILED" in done["message"]
    assert "the provider lists no failed items, so no per-item list exists" in done["message"]
    assert done["next_action"]["call"].endswith("/result") and done["errors_url"] is None
    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    [item] = [i for i in inbox if i["operation"]["operation_id"] == done["operation_id"]]
    assert item["why"] == "completed with errors: 2 items failed, 0 never processed (none listed)"


async def test_some_listed_says_how_many(gateway: Gateway) -> None:
    final = {"state": "succeeded", "counts": counts(5, 2, 3, 0)}
    errors = [{"id": "x0", "error": "broken"}]
    done = await run(gateway, "scripted", {"final": final, "output": OK, "errors": errors})
    assert done["next_action"]["path"].endswith("/errors"), done
    assert "(1 of them are listed)" in done["message"]


async def test_counts_in_another_unit_name_it(gateway: Gateway) -> None:
    final = {"state": "succeeded", "counts": counts(2000, 1000, 1000, 0)}
    done = await run(gateway, "scripted_chars", {"final": final})  # the answer is the output
    assert done["outcome"] == "completed_with_errors", done
    assert "1000 of 2000 characters FAILED" in done["message"]
    assert (
        "the provider counts characters, not items, and lists no failed ones" in (done["message"])
    )
    assert done["result_summary"] == {"processed": 2000, "succeeded": 1000, "failed": 1000,
                                      "not_processed": 0}  # fmt: skip


async def test_a_cancelled_job_whose_stopped_items_are_not_listed(gateway: Gateway) -> None:
    final = {"state": "cancelled", "counts": counts(3, 0, 0, 3)}
    done = await run(gateway, "scripted", {"final": final})
    assert done["outcome"] == "cancelled", done
    assert "It stopped 3 items; the provider lists no failed items" in done["message"]
    assert done["next_action"] is None and done["errors_url"] is None


async def test_a_failed_job_with_counts_and_no_list(gateway: Gateway) -> None:
    final = {"state": "failed", "counts": counts(3, 0, 3, 0)}
    done = await run(gateway, "scripted", {"final": final})
    assert done["outcome"] == "failed", done
    assert "3 items FAILED or never ran; the provider lists no failed items" in done["message"]


async def test_failed_items_without_counts_are_counted_from_the_output(
    gateway: Gateway,
) -> None:
    """No counts, two output lines and one failed line: 3 processed, 2 succeeded, 1 failed
    (not "processed 1, succeeded 0, failed 1")."""
    final = {"state": "succeeded"}
    errors = [{"id": "x0", "error": "filtered"}]
    done = await run(gateway, "scripted_one", {"final": final, "output": OK, "errors": errors})
    assert done["result_summary"] == {"processed": 3, "succeeded": 2, "failed": 1,
                                      "not_processed": 0}, done  # fmt: skip
    assert done["outcome"] == "completed_with_errors"
    assert len(await errors_of(gateway, done["operation_id"])) == 1
