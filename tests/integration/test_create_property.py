"""Property: whatever JSON an agent sends to create, the gateway answers 4xx and writes
nothing, or 202 and the operation ends in a recorded state. Never a 5xx, never a
half-written row, never an operation stuck "processing" by the gateway's own fault.

Values include what once broke things: lone surrogates, NUL, integers
beyond I-JSON, NaN and infinities, and nesting far deeper than the limit.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.operations import repository as repo
from app.operations.domain.states import State, is_done
from tests.conftest import Gateway

HOSTILE_CHARS = ["\x00", "\udfff", "\ud800", "\ufffd", "~", "/"]
text = st.text(
    st.one_of(st.characters(exclude_categories=()), st.sampled_from(HOSTILE_CHARS)), max_size=6
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**53 + 2),
    st.sampled_from([-(2**53), 10**30, -(10**400)]),
    st.floats(allow_nan=True, allow_infinity=True),
)
values = st.recursive(
    st.none() | st.booleans() | numbers | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def create_bodies(draw: st.DrawFn) -> bytes:
    """A create body as raw bytes: NaN written as NaN, surrogates as \\u escapes."""
    data = json.dumps(draw(values), allow_nan=True)
    depth = draw(st.sampled_from([0, 0, 0, 5, 40, 600, 3000]))
    data = "[" * depth + data + "]" * depth  # nesting no encoder would write for us
    scenario = draw(st.sampled_from(['{"name":"fast"}', '{"name":"sync"}', '{"name":"reject"}']))
    where = draw(st.sampled_from(["input", "labels", "approval", "key"]))
    input_ = f'{{"scenario":{scenario},"data":{data}}}' if where == "input" else "{}"
    extra = ""
    if where == "labels":
        extra = f',"labels":{{{json.dumps(draw(text))}:{json.dumps(draw(text))}}}'
    elif where == "approval":
        extra = f',"approval":{{"by":{data}}}'
    elif where == "key":
        input_ = f"{{{json.dumps(draw(text))}:{data}}}"
    return f'{{"provider":"mock","kind":"report","input":{input_}{extra}}}'.encode()


@pytest.mark.anyio
@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(raw=create_bodies())
async def test_any_create_is_4xx_with_nothing_written_or_202_and_recorded(
    gateway: Gateway, raw: bytes
) -> None:
    key = uuid.uuid4().hex
    r = await gateway.http.post(
        "/v1/operations",
        content=raw,
        headers={"Idempotency-Key": key, "Content-Type": "application/json"},
    )
    assert r.status_code < 500, r.text
    assert r.headers["content-type"].startswith("application/json")
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get_by_key(session, "dev", key)
    if r.status_code != 202:
        assert 400 <= r.status_code < 500 and r.json()["error"]["code"]
        assert op is None, "a refused create wrote a row"
        return
    assert op is not None
    op_id = op.id
    for _ in range(10):
        body: dict[str, Any] = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
        if body["done"]:
            break
        await gateway.tick(5)
    assert is_done(State(body["state"])), body
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    assert history[-1]["to_state"] == body["state"]
    assert (await gateway.http.get("/v1/operations")).status_code == 200
