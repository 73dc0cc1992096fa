"""The operator view says what needs a person (docs/operations.md, "The operator view"):
a count in the navigation and above the list, those rows first, one status column with
the state as detail, a resolve form that explains every decision and preselects the one
that fits, no running deadlines on a finished operation, and a list without the wide
trace-id column. HTML-level checks: they run everywhere (the screenshots are extra)."""

from __future__ import annotations

import re
from typing import Any

from tests.conftest import Gateway

SAME_ORIGIN = {"Origin": "http://127.0.0.1"}


async def _op(gw: Gateway, scenario: dict[str, Any], **extra: Any) -> str:
    r = await gw.start(scenario, **extra)
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def _html(gw: Gateway, url: str, status: int = 200) -> str:
    r = await gw.http.get(url)
    assert r.status_code == status, r.text
    return r.text


async def two_waiting_and_one_running(gw: Gateway) -> tuple[str, str, str]:
    corrupt = await _op(gw, {"name": "corrupt_result"})
    await gw.run_until_done(corrupt)
    unconfirmed = await _op(gw, {"name": "create_timeout"}, deadlines={"create_seconds": 60})
    await gw.run_until_done(unconfirmed, step=10)
    running = await _op(gw, {"name": "never_finishes"})
    await gw.tick(5)
    return corrupt, unconfirmed, running


def _checked(page: str) -> list[str]:
    return re.findall(r'name="decision" value="([a-z_]+)" required checked', page)


async def test_the_count_of_what_needs_a_person_is_in_the_nav_and_above_the_list(
    gateway: Gateway,
) -> None:
    corrupt, unconfirmed, running = await two_waiting_and_one_running(gateway)
    page = await _html(gateway, "/operations")
    nav = page[page.index("<nav>") : page.index("</nav>")]
    assert re.search(r'<span class="count"[^>]*>2</span>', nav), nav
    assert "2 operations need a person." in page
    pinned = page[page.index('class="ops pinned"') : page.index('class="ops list"')]
    assert corrupt in pinned and unconfirmed in pinned and running not in pinned
    assert "result failed its checks" in pinned
    # Every page carries the count: the inbox and a detail page too.
    for url in ("/operations/attention", f"/operations/{running}"):
        other = await _html(gateway, url)
        assert re.search(r'<span class="count"[^>]*>2</span>', other), url
    # A filtered list keeps the count but does not pin rows above the filter's answer.
    filtered = await _html(gateway, "/operations?status=processing")
    assert "2 operations need a person." in filtered and 'class="ops pinned"' not in filtered


async def test_no_count_when_nothing_needs_a_person(gateway: Gateway) -> None:
    done = await _op(gateway, {"name": "fast"})
    await gateway.run_until_done(done)
    page = await _html(gateway, "/operations")
    assert 'class="count"' not in page and "need a person" not in page


async def test_one_status_column_with_the_state_as_detail_and_no_trace_column(
    gateway: Gateway,
) -> None:
    corrupt, _, running = await two_waiting_and_one_running(gateway)
    page = await _html(gateway, "/operations")
    table = page[page.index('class="ops list"') :]
    headers = re.findall(r"<th[^>]*>(.*?)</th>", table[: table.index("</thead>")])
    assert [re.sub(r"<[^>]+>", "", h) for h in headers] == [
        "Created",
        "Operation",
        "Status · state",
        "Provider / kind",
        "Remote job",
        "Labels",
    ]
    row = next(r for r in table.split("<tr") if corrupt in r)
    assert 'class="needs"' in "<tr" + row
    assert "ss-needs_attention" in row and ">result_validation_failed<" in row
    row = next(r for r in table.split("<tr") if running in r)
    assert "ss-processing" in row and ">observing<" in row
    # The trace id is still one hover away, and a filter.
    assert 'title="trace id ' in table and 'name="trace_id"' in page


async def test_the_resolve_form_explains_each_decision_and_preselects_the_one_that_fits(
    gateway: Gateway,
) -> None:
    corrupt, unconfirmed, _ = await two_waiting_and_one_running(gateway)
    page = await _html(gateway, f"/operations/{corrupt}")
    assert _checked(page) == ["abandon"]  # a checksum failure: not resume_observing
    assert "Fits this case: <b>abandon</b>" in page
    offered = re.findall(r'name="decision" value="([a-z_]+)"', page)
    assert offered == ["resume_observing", "accept_job", "retry_collection", "abandon"]
    explained = re.findall(r'<span class="explain muted">([^<]+)</span>', page)
    assert len(explained) == len(offered) and all(len(e) > 40 for e in explained)
    assert _checked(await _html(gateway, f"/operations/{unconfirmed}")) == ["accept_job"]

    # After a refused decision the form shows what the operator chose, not the suggestion.
    r = await gateway.http.post(
        f"/operations/{unconfirmed}/resolve",
        data={"decision": "resume_observing", "reason": "try", "remote_job_id": ""},
        headers=SAME_ORIGIN,
    )
    assert r.status_code == 409 and _checked(r.text) == ["resume_observing"]


async def test_a_finished_operation_shows_no_running_deadline(gateway: Gateway) -> None:
    done = await _op(gateway, {"name": "fast"}, deadlines={"result_seconds": 3600})
    await gateway.run_until_done(done)
    page = await _html(gateway, f"/operations/{done}")
    assert "No deadline is running" in page
    assert "(in " not in page  # nothing counts down
    assert re.search(r"<dt>Result</dt><dd><time [^>]+>[^<]+</time></dd>", page), page

    running = await _op(gateway, {"name": "never_finishes"}, deadlines={"result_seconds": 3600})
    await gateway.tick(5)
    page = await _html(gateway, f"/operations/{running}")
    assert "No deadline is running" not in page and "(in " in page
