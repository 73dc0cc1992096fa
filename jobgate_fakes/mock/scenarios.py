"""What a mock job answers, as pure functions of its scenario and its request counters.

Progress is driven by request counts, never by wall time, so every function here
takes the counters it needs (status call number, result call number, current
state) and returns a decision; the app applies it and the store persists it.
Nothing here does I/O, so the whole behaviour table is unit-testable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import rfc8785

TERMINAL_STATES = frozenset({"succeeded", "succeeded_partial", "failed", "cancelled"})

# Scenario name -> its integer parameters and their defaults.
SCENARIOS: dict[str, dict[str, int]] = {
    "fast": {},
    "sync": {},
    "slow": {"polls": 3},
    "late_failure": {"polls": 3},
    "never_finishes": {},
    "rate_limited": {"retry_after": 7, "times": 1},
    "lost_create_response": {},
    "accept_then_5xx": {},
    "create_timeout": {},
    "reject": {},
    "different_job_id": {},
    "cancel_race": {"polls": 2},
    "cancel_ignored": {},
    "partial_results": {"processed": 100, "failed": 5, "polls": 1},
    "failed_partial": {"processed": 10, "succeeded": 4, "polls": 1},
    "corrupt_result": {},
    "result_unavailable": {"polls": 3},
    "webhook_duplicate": {},
}
# Optional extras any scenario accepts: `run_ms` (the one wall-clock option, for
# benchmarks: status calls answer `running` until that many milliseconds after the
# create; after that the scenario's count-driven answers apply, every status call
# counted),
# a poll hint for non-terminal status answers,
# padding that makes the result data large (to exercise large-result storage), a
# delay in milliseconds before each status answer (a slow provider, for lease tests),
# a delay before the answer of a create that made a job (a create that times out at
# the caller), `ignore_token` (1: every create makes a new job, like a provider
# without create idempotency), `list_delay` (the job is left out of that many
# listings before it shows: an eventually consistent list endpoint) and `overloaded`
# (the first that many creates carrying the client reference are refused with 503
# `overloaded`, making no job: the answer the mock profiles list as nothing created).
EXTRA_PARAMS: dict[str, int | None] = {
    "overloaded": 0,
    "poll_after": None,
    "result_bytes": 0,
    "error_bytes": 0,
    "status_depth": 0,
    "total_exp": 0,
    "status_delay_ms": 0,
    "create_delay_ms": 0,
    "ignore_token": 0,
    "list_delay": 0,
    "run_ms": 0,
}

# Scenarios whose status calls never reach a terminal state on their own.
_ENDLESS = frozenset({"never_finishes", "cancel_ignored"})
_ENDLESS_TOTAL = 100


class ScenarioError(ValueError):
    """The create input names an unknown scenario or gives a bad parameter."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Scenario:
    """A parsed `input.scenario`: its name and every parameter, defaults applied."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def p(self, key: str) -> Any:
        """One parameter (defaults were applied at parse time)."""
        return self.params[key]

    def to_json(self) -> dict[str, Any]:
        """The form stored with the job."""
        return {"name": self.name, **self.params}

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> Scenario:
        """Rebuild the scenario stored with a job (defaults already applied)."""
        params = dict(stored)
        return cls(str(params.pop("name")), params)


def parse_scenario(job_input: Any) -> Scenario:
    """Read `input["scenario"]` (default `fast`) and validate its parameters."""
    raw = job_input.get("scenario") if isinstance(job_input, Mapping) else None
    if raw is None:
        raw = {"name": "fast"}
    if isinstance(raw, str):  # lenient: a bare name is accepted too
        raw = {"name": raw}
    if not isinstance(raw, Mapping):
        raise ScenarioError("invalid_scenario", "input.scenario must be an object")
    name = raw.get("name", "fast")
    if name not in SCENARIOS:
        raise ScenarioError("unknown_scenario", f"unknown scenario {name!r}")
    params: dict[str, Any] = {}
    for key, default in {**SCENARIOS[name], **EXTRA_PARAMS}.items():
        value = raw.get(key, default)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < 0
        ):
            raise ScenarioError("invalid_scenario", f"scenario param {key!r} must be >= 0")
        if key != "poll_after" and value is not None:
            value = int(value)
        params[key] = value
    return Scenario(name, params)


# --- create -------------------------------------------------------------------------

CreateAction = Literal["new", "existing", "none"]
CreateResponse = Literal["accepted", "sync", "drop", "unavailable", "reject"]


@dataclass(frozen=True)
class CreateDecision:
    """Whether a create call makes a job, reuses the token's job, or makes none; and how
    it answers: accepted (202, or 200 when existing), sync (200 with inline result),
    drop (connection cut mid-response), unavailable (503), reject (422)."""

    action: CreateAction
    response: CreateResponse


def decide_create(
    scenario: Scenario, jobs_for_token: int, *, idempotent: bool = True
) -> CreateDecision:
    """Decide a create call given how many jobs this idempotency token already has.

    Not `idempotent` (no token sent, or `ignore_token`): the count is of earlier jobs
    with the same client reference, and every create makes a new job; a scenario's
    create fault hits only the first one, as a transient fault would.
    """
    name = scenario.name
    if name == "create_timeout":
        return CreateDecision("none", "unavailable")
    if name == "reject":
        return CreateDecision("none", "reject")
    if not idempotent and jobs_for_token > 0:
        return CreateDecision("new", "sync" if name == "sync" else "accepted")
    if name == "different_job_id":
        # Job A is stored but answered 503; the retry makes job B: idempotency broken on purpose.
        if jobs_for_token == 0:
            return CreateDecision("new", "unavailable")
        if jobs_for_token == 1:
            return CreateDecision("new", "accepted")
        return CreateDecision("existing", "accepted")
    if jobs_for_token > 0:
        return CreateDecision("existing", "sync" if name == "sync" else "accepted")
    if name == "lost_create_response":
        return CreateDecision("new", "drop")
    if name == "accept_then_5xx":
        return CreateDecision("new", "unavailable")
    if name == "sync":
        return CreateDecision("new", "sync")
    return CreateDecision("new", "accepted")


def initial_state(scenario: Scenario) -> str:
    """The state a freshly created job is stored with."""
    return "succeeded" if scenario.name == "sync" else "queued"


def total_of(scenario: Scenario) -> int:
    """The `progress.total` a job reports."""
    if scenario.name in {"partial_results", "failed_partial"}:
        return int(scenario.p("processed"))
    if scenario.name in _ENDLESS:
        return _ENDLESS_TOTAL
    if scenario.name == "webhook_duplicate":
        return 2
    if "polls" in scenario.params and scenario.name != "result_unavailable":
        return int(scenario.p("polls")) + 1
    return 1


def initial_progress(scenario: Scenario) -> tuple[int, int]:
    """Progress before any status call (`sync` jobs are born finished)."""
    total = total_of(scenario)
    return (total if scenario.name == "sync" else 0, total)


# --- status -------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusDecision:
    """What one status call answers and the job state it leaves behind."""

    state: str
    progress: tuple[int, int]
    error: dict[str, str] | None = None
    retry_after: int | None = None  # set: answer 429 with this Retry-After, state unchanged
    poll_after: float | None = None


def _running_polls(scenario: Scenario) -> int | None:
    """How many status calls answer `running` before the terminal one (None: forever)."""
    if scenario.name in _ENDLESS:
        return None
    if scenario.name == "webhook_duplicate":
        return 1  # "like slow with 1 poll"
    if scenario.name in {
        "slow",
        "late_failure",
        "cancel_race",
        "partial_results",
        "failed_partial",
    }:
        return int(scenario.p("polls"))
    return 0


def _running_progress(scenario: Scenario, call_number: int) -> tuple[int, int]:
    total = total_of(scenario)
    polls = _running_polls(scenario)
    if polls is None:
        return (min(call_number, total - 1), total)
    return (min(total * call_number // (polls + 1), total - 1), total)


def error_for(state: str, scenario: Scenario | None = None) -> dict[str, str] | None:
    """The `error` object a job in `state` reports (its message padded to the scenario's
    `error_bytes`: a provider that sends a huge error text)."""
    if state == "failed":
        message = "the report failed to render"
        return {"code": "render_failed", "message": _padded(message, scenario)}
    return None


def _padded(message: str, scenario: Scenario | None, share: int = 1) -> str:
    size = int(scenario.p("error_bytes")) // max(share, 1) if scenario is not None else 0
    return message + " " + "x" * (size - len(message) - 1) if size > len(message) else message


def decide_status(
    scenario: Scenario, state: str, call_number: int, progress: tuple[int, int]
) -> StatusDecision:
    """Decide the `call_number`-th status call (1-based, 429 answers count) of a job that
    is currently in `state` with `progress`."""
    if state in TERMINAL_STATES:  # terminal answers never change
        return StatusDecision(state, progress, error_for(state, scenario))
    if state == "cancelling":  # a cancel was accepted: the next status call sees it done
        return StatusDecision("cancelled", progress)
    poll_after = scenario.p("poll_after")
    if scenario.name == "rate_limited" and call_number <= int(scenario.p("times")):
        return StatusDecision(
            state, progress, retry_after=int(scenario.p("retry_after")), poll_after=poll_after
        )
    polls = _running_polls(scenario)
    if polls is None or call_number <= polls:
        return StatusDecision(
            "running", _running_progress(scenario, call_number), None, None, poll_after
        )
    total = total_of(scenario)
    if scenario.name == "late_failure":
        return StatusDecision(
            "failed", _running_progress(scenario, polls), error_for("failed", scenario)
        )
    if scenario.name == "partial_results":
        return StatusDecision("succeeded_partial", (total, total))
    if scenario.name == "failed_partial":  # the job fails on the item after the done ones
        done = partial_done(scenario)
        return StatusDecision("failed", (done, total), error_for("failed", scenario))
    return StatusDecision("succeeded", (total, total))


def decide_running_for(scenario: Scenario, state: str, elapsed_ms: float) -> StatusDecision | None:
    """`run_ms`: a `running` answer (progress by elapsed time) while the job's wall-clock
    run lasts; None when the scenario's own decision applies."""
    run_ms = int(scenario.p("run_ms") or 0)
    if not run_ms or elapsed_ms >= run_ms or state in TERMINAL_STATES or state == "cancelling":
        return None
    total = total_of(scenario)
    done = min(int(total * elapsed_ms / run_ms), total - 1)
    return StatusDecision("running", (max(done, 0), total), poll_after=scenario.p("poll_after"))


# --- cancel -------------------------------------------------------------------------


@dataclass(frozen=True)
class CancelDecision:
    """How a cancel call answers (202 or 409) and the job state it leaves behind."""

    http_status: int
    new_state: str
    answer_state: str  # the `state` in the answer body
    progress: tuple[int, int]


def decide_cancel(scenario: Scenario, state: str, progress: tuple[int, int]) -> CancelDecision:
    """Decide a cancel call on a job currently in `state` with `progress`."""
    if state in TERMINAL_STATES:
        return CancelDecision(409, state, state, progress)
    if state == "cancelling":  # idempotent: a second cancel has no new effect
        return CancelDecision(202, state, state, progress)
    if scenario.name == "cancel_race":
        # The job "just finished" as the cancel arrived.
        total = total_of(scenario)
        return CancelDecision(409, "succeeded", "succeeded", (total, total))
    if scenario.name == "cancel_ignored":
        # Says it is cancelling, but the job carries on running.
        return CancelDecision(202, state, "cancelling", progress)
    return CancelDecision(202, "cancelling", "cancelling", progress)


# --- result -------------------------------------------------------------------------

ResultAnswer = Literal["ok", "not_finished", "unavailable"]


def partial_done(scenario: Scenario) -> int:
    """`failed_partial`: how many items succeeded before the job failed (fewer than all)."""
    return min(int(scenario.p("succeeded")), max(int(scenario.p("processed")) - 1, 0))


def keeps_partial_output(scenario: Scenario, state: str) -> bool:
    """A failed job that shows the output of the items it finished before failing."""
    return scenario.name == "failed_partial" and state == "failed"


def decide_result(scenario: Scenario, state: str, call_number: int) -> ResultAnswer:
    """Decide the `call_number`-th result call (1-based) of a job in `state`."""
    if keeps_partial_output(scenario, state):
        return "ok"
    if state not in {"succeeded", "succeeded_partial"}:
        return "not_finished"
    if scenario.name == "result_unavailable" and call_number <= int(scenario.p("polls")):
        return "unavailable"
    return "ok"


def canonical_sha256(data: Any) -> str:
    """Hex SHA-256 of the RFC 8785 canonical JSON form of `data`."""
    return hashlib.sha256(rfc8785.dumps(data)).hexdigest()


def build_result(scenario: Scenario, job_id: str, kind: str) -> dict[str, Any]:
    """The result body of a finished job: data, its checksum, item counts, failed items."""
    rows = 3
    if scenario.name == "partial_results":
        processed, failed = int(scenario.p("processed")), int(scenario.p("failed"))
        failed = min(failed, processed)
    elif scenario.name == "failed_partial":  # one item failed; the ones after never ran
        processed, rows = int(scenario.p("processed")), partial_done(scenario)
        failed = 1 if processed else 0
    else:
        processed, failed = 1, 0
    data: dict[str, Any] = {
        "job_id": job_id,
        "kind": kind,
        "summary": f"{kind} ready",
        "rows": [{"n": i, "value": i * i} for i in range(rows)],
    }
    if scenario.p("result_bytes"):
        data["padding"] = "x" * int(scenario.p("result_bytes"))
    sha = canonical_sha256(data)
    if scenario.name == "corrupt_result":
        sha = canonical_sha256({"corrupted": data})  # well-formed, but not of `data`
    # Spread the failed indices over the processed range (deterministic); a job that
    # failed part way failed on the item after the ones it finished.
    step = max(processed // failed, 1) if failed else 1
    first = rows if scenario.name == "failed_partial" else 0
    failed_items = [
        {
            "index": n,
            "error": {
                "code": "item_failed",
                "message": _padded(f"item {n} failed", scenario, failed),
            },
        }
        for n in (first + i * step for i in range(failed))
    ]
    succeeded = rows if scenario.name == "failed_partial" else processed - failed
    return {
        "job_id": job_id,
        "data": data,
        "sha256": sha,
        "items": {"processed": processed, "succeeded": succeeded, "failed": failed},
        "failed_items": failed_items,
    }


# --- webhooks -----------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookEvent:
    """One webhook to send: `job.<state>`, reusing the previous event's id when asked."""

    state: str
    progress: tuple[int, int]
    same_id_as_previous: bool = False


def plan_webhooks(scenario: Scenario, old_state: str, new: StatusDecision) -> list[WebhookEvent]:
    """Webhooks a status call triggers: one per state change, plus the deliberate
    duplicate and stale (out-of-order) ones of `webhook_duplicate`."""
    if new.retry_after is not None or new.state == old_state:
        return []
    events = [WebhookEvent(new.state, new.progress)]
    if scenario.name == "webhook_duplicate" and new.state == "succeeded":
        events.append(WebhookEvent(new.state, new.progress, same_id_as_previous=True))
        events.append(WebhookEvent("running", _running_progress(scenario, 1)))
    return events
