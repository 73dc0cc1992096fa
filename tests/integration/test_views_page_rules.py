"""Every state's page shows the forms and countdowns of one table (app/views/page_rules.py),
and that table agrees with the state table in docs/architecture.md ("States"): a running
operation can be cancelled and counts down, a held create has only the approval form and
its deadlines as times counted from approval, a finished one has no form and no
countdown, one that needs a person has the resolve form."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app.operations.domain.states import State
from app.views import page_rules
from app.views.page_rules import PARTIAL_RESULT, RULES
from tests.conftest import Gateway

ROOT = Path(__file__).resolve().parents[2]
FORMS = ("cancel", "approval", "resolve")
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
    return {"policy_file": path, "approval_seconds": 3600.0}


def docs_states() -> dict[str, str]:
    """The state table of docs/architecture.md: state -> the status an agent sees."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    section = doc[doc.index("## States") : doc.index("## How a create is sent")]
    return dict(re.findall(r"^\| `([a-z_]+)` \| `([a-z_]+)` \|", section, re.M))


EXPECTED_BY_STATUS = {
    "awaiting_approval": page_rules.HELD,
    "processing": page_rules.RUNNING,
    "cancelling": page_rules.CANCELLING,
    "succeeded": page_rules.FINISHED,
    "failed": page_rules.FINISHED,
    "cancelled": page_rules.FINISHED,
    "needs_attention": page_rules.WAITING,
}


def test_the_rule_table_agrees_with_the_documented_state_table() -> None:
    documented = docs_states()
    assert set(documented) == {s.value for s in State}
    for state, status in documented.items():
        assert RULES[state] == EXPECTED_BY_STATUS[status], (state, status)
    assert RULES[PARTIAL_RESULT] == page_rules.WAITING


def forms_on(page: str, op_id: str) -> set[str]:
    return {f for f in FORMS if f'action="/operations/{op_id}/{f}"' in page}


def clocks_part(page: str) -> str:
    """Deadlines, lease and schedule: the part of the page where a countdown would be."""
    return page[page.index("<h2>Deadlines</h2>") : page.index("<h2>Cancel</h2>")]


def check_page(page: str, op_id: str, row: str) -> None:
    rule = RULES[row]
    assert forms_on(page, op_id) == set(rule.forms), row
    countdowns = re.findall(r'<span class="rel">\((in [^)]*|[^)]* ago)\)</span>', clocks_part(page))
    assert bool(countdowns) == rule.countdowns, (row, countdowns)
    assert ("counted from approval" in page) == (rule.deadlines == "from_approval"), row
    assert ("No deadline is running" in page) == (rule.deadlines != "running"), row


async def _set_state(gw: Gateway, op_id: str, state: str) -> None:
    """Only the state column changes: the page is a read; the rule is what is checked."""
    async with gw.ctx.db.transaction() as session:
        await session.execute(
            text("UPDATE operations SET state = :s WHERE id = :id"), {"s": state, "id": op_id}
        )


async def test_every_states_page_shows_the_forms_and_countdowns_of_the_table(
    gateway: Gateway,
) -> None:
    r = await gateway.start({"name": "never_finishes"})
    op_id = r.json()["operation_id"]
    await gateway.tick(5)  # observing: a remote job, a lease, a next poll
    for state in State:
        await _set_state(gateway, op_id, state.value)
        page = (await gateway.http.get(f"/operations/{op_id}")).text
        check_page(page, op_id, state.value)
        if "resolve" in RULES[state].forms:
            offered = re.findall(r'name="decision" value="([a-z_]+)"', page)
            assert offered and "acknowledge" not in offered, state


async def test_a_held_create_has_only_the_approval_form_and_no_countdown(
    gateway: Gateway,
) -> None:
    r = await gateway.start({"name": "fast"}, labels={"lane": "gated"})
    body = r.json()
    assert body["state"] == "awaiting_approval", body
    op_id = body["operation_id"]
    gateway.clock.advance(90)  # held a while: the times shown move with it
    page = (await gateway.http.get(f"/operations/{op_id}")).text
    check_page(page, op_id, "awaiting_approval")
    assert "acknowledge" not in page and "Fits this case" not in page
    assert "Request cancel" not in page and "Resolve" not in page
    held = clocks_part(page)
    assert held.count("if approved now") == 2  # create and result; no cancel deadline yet
    assert "counted from approval:" in held and "(in " not in held
    assert "Approval expires" in held


async def test_a_partial_result_offers_acknowledge_alone(gateway: Gateway) -> None:
    r = await gateway.start({"name": "partial_results", "processed": 10, "failed": 2})
    op_id = r.json()["operation_id"]
    await gateway.run_until_done(op_id)
    page = (await gateway.http.get(f"/operations/{op_id}")).text
    check_page(page, op_id, PARTIAL_RESULT)
    assert re.findall(r'name="decision" value="([a-z_]+)"', page) == ["acknowledge"]


async def test_small_words_on_the_pages(gateway: Gateway) -> None:
    """A held create's reason reads its deadline to the second and no cost of 0; a
    partial result in the inbox is not a green `succeeded`; a remote state is not
    repeated as its own class."""
    held = (await gateway.start({"name": "fast"}, labels={"lane": "gated"})).json()
    page = (await gateway.http.get(f"/operations/{held['operation_id']}")).text
    why = page[page.index("Needs attention:</b>") :].split("</p>")[0]
    assert re.search(r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)", why), why
    assert "cost 0" not in why and not re.search(r":\d\d\.\d+", why)

    r = await gateway.start({"name": "partial_results", "processed": 10, "failed": 2})
    partial = r.json()["operation_id"]
    await gateway.run_until_done(partial)
    inbox = (await gateway.http.get("/operations/attention")).text
    row = inbox[inbox.index(partial) :].split("</tr>")[0]
    assert "ss-completed_with_errors" in row and 'class="badge st-succeeded"' not in row

    done = (await gateway.start({"name": "fast"})).json()["operation_id"]
    await gateway.run_until_done(done)
    page = (await gateway.http.get(f"/operations/{done}")).text
    remote = page[page.index("<dt>Remote state</dt>") :].split("</dd>")[0]
    assert "succeeded" in remote and "(succeeded)" not in remote
