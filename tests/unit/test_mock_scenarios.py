"""The mock provider's scenario table, as pure functions (no server, no database)."""

from __future__ import annotations

import hashlib

import pytest
import rfc8785

from jobgate_fakes.mock import scenarios as sc
from jobgate_fakes.mock.scenarios import Scenario


def scenario(name: str, **params: object) -> Scenario:
    return sc.parse_scenario({"scenario": {"name": name, **params}})


def run_status(s: Scenario, calls: int) -> list[sc.StatusDecision]:
    """Play `calls` status calls from a fresh job, applying each decision like the app does."""
    state, progress = sc.initial_state(s), sc.initial_progress(s)
    out = []
    for n in range(1, calls + 1):
        d = sc.decide_status(s, state, n, progress)
        if d.retry_after is None:
            state, progress = d.state, d.progress
        out.append(d)
    return out


def test_parse_defaults_and_params() -> None:
    assert sc.parse_scenario({}).name == "fast"
    assert sc.parse_scenario({"scenario": "slow"}).p("polls") == 3
    s = scenario("rate_limited", times=2)
    assert (s.p("retry_after"), s.p("times"), s.p("poll_after")) == (7, 2, None)
    assert Scenario.from_json(s.to_json()) == s


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"scenario": {"name": "nope"}}, "unknown_scenario"),
        ({"scenario": {"name": "slow", "polls": -1}}, "invalid_scenario"),
        ({"scenario": {"name": "slow", "polls": "3"}}, "invalid_scenario"),
        ({"scenario": {"name": "slow", "polls": True}}, "invalid_scenario"),
        ({"scenario": [1]}, "invalid_scenario"),
    ],
)
def test_parse_rejects(raw: dict[str, object], code: str) -> None:
    with pytest.raises(sc.ScenarioError) as err:
        sc.parse_scenario(raw)
    assert err.value.code == code


@pytest.mark.parametrize(
    ("name", "first", "second", "third"),
    [
        ("fast", ("new", "accepted"), ("existing", "accepted"), ("existing", "accepted")),
        ("sync", ("new", "sync"), ("existing", "sync"), ("existing", "sync")),
        ("lost_create_response", ("new", "drop"), ("existing", "accepted"), None),
        ("accept_then_5xx", ("new", "unavailable"), ("existing", "accepted"), None),
        ("create_timeout", ("none", "unavailable"), ("none", "unavailable"), None),
        ("reject", ("none", "reject"), ("none", "reject"), None),
        ("different_job_id", ("new", "unavailable"), ("new", "accepted"), ("existing", "accepted")),
    ],
)
def test_decide_create(name: str, first: tuple, second: tuple, third: tuple | None) -> None:
    s = scenario(name)
    jobs = 0
    for expected in (first, second, third):
        if expected is None:
            break
        d = sc.decide_create(s, jobs)
        assert (d.action, d.response) == expected
        jobs += d.action == "new"


def test_fast_succeeds_on_first_status() -> None:
    [d] = run_status(scenario("fast"), 1)
    assert (d.state, d.progress, d.error) == ("succeeded", (1, 1), None)


def test_sync_is_born_succeeded() -> None:
    s = scenario("sync")
    assert sc.initial_state(s) == "succeeded"
    assert [d.state for d in run_status(s, 2)] == ["succeeded", "succeeded"]


def test_slow_rises_then_succeeds() -> None:
    decisions = run_status(scenario("slow", polls=3), 5)
    assert [d.state for d in decisions] == ["running"] * 3 + ["succeeded"] * 2
    completed = [d.progress[0] for d in decisions]
    assert completed == sorted(completed) and completed[0] < completed[2] < completed[3]
    assert decisions[-1].progress == (4, 4)


def test_late_failure() -> None:
    decisions = run_status(scenario("late_failure", polls=2), 4)
    assert [d.state for d in decisions] == ["running", "running", "failed", "failed"]
    assert decisions[2].error == {"code": "render_failed", "message": decisions[2].error["message"]}
    assert decisions[1].error is None


def test_never_finishes_and_cancel_ignored_run_forever() -> None:
    for name in ("never_finishes", "cancel_ignored"):
        decisions = run_status(scenario(name), 200)
        assert {d.state for d in decisions} == {"running"}
        assert all(d.progress[0] < d.progress[1] for d in decisions)


def test_rate_limited() -> None:
    decisions = run_status(scenario("rate_limited", retry_after=3, times=2), 3)
    assert [d.retry_after for d in decisions] == [3, 3, None]
    assert [d.state for d in decisions] == ["queued", "queued", "succeeded"]


def test_partial_results() -> None:
    s = scenario("partial_results", processed=10, failed=3)
    decisions = run_status(s, 2)
    assert [d.state for d in decisions] == ["running", "succeeded_partial"]
    assert decisions[1].progress == (10, 10)
    result = sc.build_result(s, "job_x", "report")
    assert result["items"] == {"processed": 10, "succeeded": 7, "failed": 3}
    indices = [f["index"] for f in result["failed_items"]]
    assert len(set(indices)) == 3 and all(0 <= i < 10 for i in indices)


def test_failed_partial_fails_after_the_items_it_finished() -> None:
    s = scenario("failed_partial", processed=10, succeeded=4)
    decisions = run_status(s, 2)
    assert [d.state for d in decisions] == ["running", "failed"]
    assert decisions[1].progress == (4, 10) and decisions[1].error is not None
    result = sc.build_result(s, "job_x", "report")
    assert result["items"] == {"processed": 10, "succeeded": 4, "failed": 1}
    assert [f["index"] for f in result["failed_items"]] == [4]
    assert len(result["data"]["rows"]) == 4
    assert sc.decide_result(s, "failed", 1) == "ok"  # the part done is served
    assert sc.decide_result(scenario("late_failure"), "failed", 1) == "not_finished"


def test_webhook_duplicate_is_slow_with_one_poll() -> None:
    assert [d.state for d in run_status(scenario("webhook_duplicate"), 2)] == [
        "running",
        "succeeded",
    ]


def test_poll_after_hint_only_while_running() -> None:
    decisions = run_status(scenario("slow", polls=1, poll_after=2.5), 2)
    assert [d.poll_after for d in decisions] == [2.5, None]


def test_cancelling_becomes_cancelled_on_next_status() -> None:
    d = sc.decide_status(scenario("never_finishes"), "cancelling", 4, (3, 100))
    assert (d.state, d.progress) == ("cancelled", (3, 100))


@pytest.mark.parametrize("state", sorted(sc.TERMINAL_STATES))
def test_terminal_states_are_stable(state: str) -> None:
    d = sc.decide_status(scenario("never_finishes"), state, 9, (1, 1))
    assert d.state == state


def test_cancel_decisions() -> None:
    running = (1, 100)
    d = sc.decide_cancel(scenario("never_finishes"), "running", running)
    assert (d.http_status, d.new_state, d.answer_state) == (202, "cancelling", "cancelling")
    d = sc.decide_cancel(scenario("never_finishes"), "cancelling", running)
    assert (d.http_status, d.new_state) == (202, "cancelling")
    d = sc.decide_cancel(scenario("fast"), "succeeded", (1, 1))
    assert (d.http_status, d.answer_state) == (409, "succeeded")
    d = sc.decide_cancel(scenario("cancel_race"), "running", (1, 3))
    assert (d.http_status, d.new_state, d.answer_state, d.progress) == (
        409,
        "succeeded",
        "succeeded",
        (3, 3),
    )
    d = sc.decide_cancel(scenario("cancel_ignored"), "running", running)
    assert (d.http_status, d.new_state, d.answer_state) == (202, "running", "cancelling")


def test_decide_result() -> None:
    assert sc.decide_result(scenario("fast"), "running", 1) == "not_finished"
    assert sc.decide_result(scenario("fast"), "failed", 1) == "not_finished"
    assert sc.decide_result(scenario("fast"), "succeeded", 1) == "ok"
    s = scenario("result_unavailable", polls=2)
    assert [sc.decide_result(s, "succeeded", n) for n in (1, 2, 3)] == [
        "unavailable",
        "unavailable",
        "ok",
    ]


def test_result_checksum_and_corruption() -> None:
    good = sc.build_result(scenario("fast"), "job_a", "report")
    assert good["sha256"] == sc.canonical_sha256(good["data"])
    assert good["items"] == {"processed": 1, "succeeded": 1, "failed": 0}
    assert good["failed_items"] == []
    assert good["sha256"] == hashlib.sha256(rfc8785.dumps(good["data"])).hexdigest()
    bad = sc.build_result(scenario("corrupt_result"), "job_a", "report")
    assert bad["data"] == good["data"] and bad["sha256"] != good["sha256"]
    big = sc.build_result(scenario("fast", result_bytes=5000), "job_a", "report")
    assert len(big["data"]["padding"]) == 5000


def test_plan_webhooks() -> None:
    slow = scenario("slow", polls=1)
    running = sc.StatusDecision("running", (1, 2))
    assert [e.state for e in sc.plan_webhooks(slow, "queued", running)] == ["running"]
    assert sc.plan_webhooks(slow, "running", running) == []  # no state change, no webhook
    limited = sc.StatusDecision("queued", (0, 1), retry_after=7)
    assert sc.plan_webhooks(scenario("rate_limited"), "queued", limited) == []
    done = sc.StatusDecision("succeeded", (2, 2))
    events = sc.plan_webhooks(scenario("webhook_duplicate"), "running", done)
    assert [(e.state, e.same_id_as_previous) for e in events] == [
        ("succeeded", False),
        ("succeeded", True),
        ("running", False),
    ]


def test_run_ms_answers_running_by_elapsed_time_then_hands_over() -> None:
    s = sc.parse_scenario({"scenario": {"name": "fast", "run_ms": 1000}})
    early = sc.decide_running_for(s, "queued", 250.0)
    assert early is not None and early.state == "running" and early.progress == (0, 1)
    assert sc.decide_running_for(s, "running", 1000.0) is None  # the scenario decides now
    assert sc.decide_running_for(s, "cancelling", 10.0) is None  # a cancel is not held back
    assert sc.decide_running_for(sc.parse_scenario({"scenario": "fast"}), "queued", 0.0) is None
