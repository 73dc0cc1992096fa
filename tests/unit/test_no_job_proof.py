"""Which create failures prove no job was made (docs/single-create.md, "Nothing was made").

Never sent: only failures httpx2 raises before a byte of the request is written.
Nothing created: only an answer whose status AND body value a profile lists.
Anything else stays ambiguous (no proof), whatever the capability.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.providers.authoring.check_command import run
from app.providers.calls.http_util import never_left
from app.providers.calls.types import Outcome
from app.providers.language.loader import ProfileError, load_profile, load_profiles
from app.providers.language.profile import Profile
from tests.unit.provider_fakes import ENV, answer, variant

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
RULES = [{"status": 529, "pointer": "/error/type", "equals": "overloaded_error"}]


@pytest.mark.parametrize(
    ("exc", "proof"),
    [
        (httpx2.ConnectError("[Errno 111] Connection refused"), True),
        (httpx2.ConnectError("[Errno -2] Name or service not known"), True),
        (httpx2.ConnectTimeout("timed out"), True),
        (httpx2.PoolTimeout("no connection free"), True),
        (httpx2.WriteError("broken pipe"), False),
        (httpx2.WriteTimeout("t"), False),
        (httpx2.ReadError("reset"), False),
        (httpx2.ReadTimeout("t"), False),
        (httpx2.RemoteProtocolError("peer closed"), False),
        (httpx2.ProxyError("proxy said no"), False),
        (TimeoutError(), False),  # jobgate's own whole-call bound may fire after the send
        (OSError("?"), False),
    ],
)
def test_only_failures_before_the_request_is_written_prove_it_never_left(
    exc: BaseException, proof: bool
) -> None:
    assert never_left(exc) is proof


def raising(exc: Exception) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise exc

    return handler


async def create(make_client: Any, profile: Profile, handler: Any) -> Any:
    client, _ = make_client(handler)
    return await client.create(
        profile, "report", {}, token="tok", client_reference="op_1", trace_id="tr"
    )


async def test_a_refused_connection_is_proof_the_create_never_left(
    make_client: Any, mock_profile: Profile
) -> None:
    found = await create(make_client, mock_profile, raising(httpx2.ConnectError("refused")))
    assert found.outcome is Outcome.AMBIGUOUS  # the outcome is unchanged ...
    assert found.no_job is not None and found.no_job.not_sent  # ... and carries the proof
    assert "never reached the provider" in found.no_job.why and "refused" in found.no_job.why


@pytest.mark.parametrize("exc", [httpx2.ReadTimeout("t"), httpx2.WriteError("w")])
async def test_a_failure_after_writing_began_is_no_proof(
    make_client: Any, mock_profile: Profile, exc: Exception
) -> None:
    found = await create(make_client, mock_profile, raising(exc))
    assert (found.outcome, found.no_job) == (Outcome.AMBIGUOUS, None)


@pytest.mark.parametrize(
    ("status", "body", "proof"),
    [
        (529, OVERLOADED, True),
        (529, {"error": {"type": "api_error"}}, False),  # another type
        (500, OVERLOADED, False),  # another status
        (529, None, False),  # no body: a proxy's answer proves nothing
        (429, {"error": {"type": "overloaded_error"}}, False),
    ],
)
async def test_only_a_listed_status_and_body_value_prove_nothing_was_created(
    make_client: Any, mock_profile: Profile, status: int, body: Any, proof: bool
) -> None:
    idempotency = {"location": "header", "header": "Idempotency-Key", "nothing_created": RULES}
    profile = variant(mock_profile, idempotency=idempotency)
    found = await create(make_client, profile, answer(status, body))
    assert (found.no_job is not None) is proof
    if proof:
        assert not found.no_job.not_sent
        assert "HTTP 529 with /error/type = overloaded_error" in found.no_job.why


async def test_without_a_listed_rule_an_overload_is_no_proof(
    make_client: Any, mock_profile: Profile
) -> None:
    found = await create(make_client, mock_profile, answer(529, OVERLOADED))
    assert (found.outcome, found.no_job) == (Outcome.AMBIGUOUS, None)


def test_the_bundled_anthropic_profile_lists_its_two_refusals() -> None:
    profile = load_profiles(None, ENV)["anthropic_message_batches"]
    listed = [(r.status, r.pointer, r.values) for r in profile.idempotency.nothing_created]
    assert listed == [
        (529, "/error/type", ["overloaded_error"]),
        (429, "/error/type", ["rate_limit_error"]),
    ]


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"status": 529, "pointer": "/x"}, "pointer and equals go together"),
        ({"status": 529, "contains": " "}, "must not be empty text"),
        ({"status": 200, "pointer": "/x", "equals": "y"}, "greater than or equal to 400"),
        ({"status": 529, "pointer": "x", "equals": "y"}, "pointer"),
        ({"status": 529, "pointer": "/x", "equals": []}, "at least 1"),
    ],
)
def test_a_rule_needs_an_error_status_and_a_body_value(
    tmp_path: Path, rule: dict[str, Any], problem: str
) -> None:
    source = Path("app/providers/profiles/anthropic_message_batches.yaml").read_text()
    path = tmp_path / "p.yaml"
    path.write_text(source.replace("  nothing_created:\n", f"  nothing_created:\n    - {rule}\n"))
    with pytest.raises(ProfileError, match=r"idempotency\.nothing_created") as err:
        load_profile(path, {})
    assert problem in str(err.value)


def test_profiles_check_prints_the_list() -> None:
    code, text = run(Path("app/providers/profiles/anthropic_message_batches.yaml"), {}, None)
    assert code == 0
    assert (
        "nothing_created: HTTP 529 with /error/type = overloaded_error; HTTP 429 with "
        "/error/type = rate_limit_error (the create is sent again after these, within "
        "the create deadline)"
    ) in text
    code, text = run(Path("app/providers/profiles/openai_batch.yaml"), {}, None)
    assert "nothing_created: none listed" in text


@pytest.mark.parametrize(("exc", "proof"), [(httpx2.ConnectError("refused"), True),
                                            (httpx2.WriteError("w"), False)])  # fmt: skip
async def test_a_preparation_step_that_never_left_is_the_creates_proof(
    make_client: Any, exc: Exception, proof: bool
) -> None:
    env = {"JOBGATE_OPENAI_BASE_URL": "http://openai.test", "OPENAI_API_KEY": "k"}
    profile = load_profiles(None, env)["openai_batch"]
    client, recorder = make_client(raising(exc), env=env)
    found = await client.create(
        profile, "batch", {"endpoint": "/v1/chat/completions", "requests": [{"custom_id": "a"}]},
        token="t", client_reference="op_1", trace_id="tr",
    )  # fmt: skip
    assert [r.url.path for r in recorder.requests] == ["/v1/files"]  # the create never went
    assert (found.no_job is not None) is proof
    if proof:
        assert found.no_job.not_sent
