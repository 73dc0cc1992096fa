"""The single-create rule in isolation: who may send a create, and what each provider
capability lets reconciliation do."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest

from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.driver.create_steps import decide_create
from app.operations.driver.single_create import (
    INTAKE_LEASE_TOKEN,
    Blind,
    LookupOnly,
    SendPermit,
    SingleCreateBroken,
    TokenHonoured,
    capability,
    check_single_send,
    first_send,
)
from app.operations.repository import CreateTally
from app.providers.calls.http_util import record_exchange
from app.providers.calls.types import CallResult, NoJobProof, Outcome
from app.providers.language.profile import Profile
from tests.unit.provider_fakes import variant

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BY_REFERENCE = {"path": "/v1/jobs", "by": "client_reference", "match": "/metadata/ref"}


def operation(**changes: Any) -> Operation:
    values: dict[str, Any] = {
        "id": "op_1",
        "principal": "dev",
        "idempotency_key": "k",
        "fingerprint": "f",
        "provider": "mock",
        "kind": "report",
        "input": {},
        "provider_token": "tok",
        "trace_id": "tr",
        "single_create": "token",
        "state": State.CREATE_PENDING.value,
        "version": 0,
        "lease_token": INTAKE_LEASE_TOKEN,
        "create_deadline_at": NOW + timedelta(seconds=60),
        "result_deadline_at": NOW + timedelta(seconds=600),
        "created_at": NOW,
        "updated_at": NOW,
    }
    values.update(changes)
    return Operation(**values)


def lookup_profile(mock_profile: Profile) -> Profile:
    return variant(
        mock_profile,
        idempotency={"location": "none"},
        client_reference={"location": "metadata", "pointer": "/metadata/ref"},
        lookup=BY_REFERENCE,
    )


def test_only_the_intake_leases_first_step_may_send_first() -> None:
    permit = first_send(operation())
    assert permit is not None and permit.reason == "first_send" and permit.operation_id == "op_1"
    assert first_send(operation(lease_token=INTAKE_LEASE_TOKEN + 1)) is None  # intake died
    assert first_send(operation(version=1)) is None
    assert first_send(operation(state=State.CREATE_UNKNOWN.value)) is None


def test_a_permit_cannot_be_made_anywhere_else() -> None:
    with pytest.raises(TypeError, match="only by app.operations.driver.single_create"):
        SendPermit(object(), "op_1", "token_replay")  # type: ignore[arg-type]


def test_capability_follows_the_profile_narrowed_by_the_promise(mock_profile: Profile) -> None:
    token = capability(mock_profile, "token")
    assert isinstance(token, TokenHonoured) and token.replay(operation()).reason == "token_replay"
    looked_up = capability(lookup_profile(mock_profile), "lookup")
    assert isinstance(looked_up, LookupOnly)
    blind = variant(mock_profile, idempotency={"location": "none"}, lookup=None)
    assert isinstance(capability(blind, "none"), Blind)
    # The profile now sends a token, but the first create went without one: no replay.
    assert isinstance(capability(mock_profile, "none"), Blind)  # its lookup is by token
    by_ref = variant(mock_profile, lookup=BY_REFERENCE)
    assert isinstance(capability(by_ref, "lookup"), LookupOnly)


def test_only_a_token_capability_can_make_a_replay_permit() -> None:
    assert hasattr(TokenHonoured, "replay")
    assert not hasattr(LookupOnly, "replay") and not hasattr(Blind, "replay")


def test_more_than_one_create_to_a_provider_without_a_token_is_a_bug() -> None:
    check_single_send(0, "op_1")
    check_single_send(1, "op_1")
    with pytest.raises(SingleCreateBroken, match="sent 2 creates"):
        check_single_send(2, "op_1")
    assert issubclass(SingleCreateBroken, AssertionError)


def _answer(status: int, outcome: Outcome) -> CallResult:
    request = httpx2.Request("POST", "http://mock.test/v1/jobs")
    exchange = record_exchange(
        "create", request, httpx2.Response(status), "{}", None, 1.0,
        variants=[], sensitive=frozenset(), limit=100,
    )  # fmt: skip
    return CallResult(outcome=outcome, exchange=exchange)


def test_a_rate_limited_first_create_fails_unless_the_token_is_honoured(
    mock_profile: Profile,
) -> None:
    engine: Any = SimpleNamespace(rng=random.Random(1), settings=SimpleNamespace(time_scale=1.0))
    limited = _answer(429, Outcome.RATE_LIMITED)
    lookup = decide_create(engine, lookup_profile(mock_profile), operation(), limited)
    assert lookup.to == State.FAILED and "nothing was started" in lookup.fields["error"]["message"]
    token = decide_create(engine, mock_profile, operation(), limited)
    assert token.to == State.CREATE_UNKNOWN and token.delay is not None


def test_an_ambiguous_create_without_token_or_lookup_goes_on_at_once(
    mock_profile: Profile,
) -> None:
    engine: Any = SimpleNamespace(rng=random.Random(1), settings=SimpleNamespace(time_scale=1.0))
    blind = variant(mock_profile, idempotency={"location": "none"}, lookup=None)
    decision = decide_create(
        engine, blind, operation(single_create="none"), _answer(503, Outcome.AMBIGUOUS)
    )
    assert decision.to == State.CREATE_UNKNOWN and decision.again and decision.carry is not None


def test_another_create_only_when_every_one_that_may_have_been_sent_is_proven() -> None:
    # The first create proven to have made nothing: one more may go.
    assert CreateTally(sent=1, proven=1).all_proven
    # A second one announced, never answered (the process died): in doubt.
    doubt = CreateTally(sent=1, proven=1, resends=1)
    assert not doubt.all_proven and doubt.may_have_made_a_job == 1
    # Nothing proven: the first create itself is in doubt.
    assert not CreateTally(sent=1).all_proven
    assert CreateTally(sent=3, proven=2, resends=2).may_have_made_a_job == 1


def test_a_create_proven_to_make_nothing_goes_again_after_the_backoff(
    mock_profile: Profile,
) -> None:
    engine: Any = SimpleNamespace(
        rng=random.Random(1), settings=SimpleNamespace(time_scale=1.0), now=lambda: NOW
    )
    refused = replace(
        _answer(503, Outcome.AMBIGUOUS),
        retry_after_seconds=7.0,
        no_job=NoJobProof(False, "HTTP 503 listed"),
    )
    blind = variant(mock_profile, idempotency={"location": "none"}, lookup=None)
    op = operation(single_create="none")
    again = decide_create(engine, blind, op, refused)
    assert (again.to, again.delay, again.again) == (State.CREATE_PENDING, 7.0, False)
    assert again.evidence is not None and again.evidence.kind == "nothing_created"
    # The deadline comes before the next try: failed, nothing started.
    late = decide_create(engine, blind, operation(create_deadline_at=NOW + timedelta(seconds=5)),
                         refused)  # fmt: skip
    assert late.to == State.FAILED
    assert late.fields["error"]["code"] == "create_not_started"
    never = replace(refused, no_job=NoJobProof(True, "refused"))
    gone = decide_create(engine, blind, operation(create_deadline_at=NOW + timedelta(seconds=5)),
                         never)  # fmt: skip
    assert gone.fields["error"]["code"] == "create_not_sent"
    # An earlier create reached the provider: not "nothing was sent".
    mixed = decide_create(engine, blind, operation(create_deadline_at=NOW + timedelta(seconds=5)),
                          never, unsent_before=False)  # fmt: skip
    assert mixed.fields["error"]["code"] == "create_not_started"
