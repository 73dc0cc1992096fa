"""The output schemas the MCP tools declare (`outputSchema`): what structured content a
successful call carries. A tool error (`isError: true`) carries `{"error", ...}` instead
and is not held to them, as MCP has it.

Each names the fields an agent decides on and lets the rest of the REST body through
(`OperationBody` in the REST schema is the whole of it): a gateway of another version
that adds or drops a detail still answers within the schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.operations.contract.schemas import NextAction


class OperationOut(BaseModel):
    """The operation body (docs/agent-api.md, "The operation body")."""

    model_config = ConfigDict(extra="allow")

    operation_id: str
    done: bool = Field(description="read first: false while in progress")
    outcome: str | None = Field(
        default=None,
        description="once done: succeeded (the only success), completed_with_errors, "
        "failed, cancelled, needs_attention (stop; tell the user); timed_out: a wait ended",
    )
    status: str
    message: str = Field(description="where it stands and what to do next, in plain words")
    next_action: NextAction | None = Field(default=None, description="the call to make next")


class ResultOut(BaseModel):
    """`get_result`: the REST result body, or one chunk of a large result's JSON text."""

    model_config = ConfigDict(extra="allow")

    operation_id: str
    status: str = Field(description="`succeeded`, `completed_with_errors`, or for a kept "
                        "partial output `cancelled` / `failed` (NOT a success)")  # fmt: skip
    message: str | None = None
    result: Any = Field(default=None, description="the whole result, when it fits")
    size: int | None = None
    sha256: str | None = None
    result_summary: dict[str, int] | None = None
    result_chunk: str | None = Field(default=None, description="characters of its JSON text")
    offset: int | None = None
    total_chars: int | None = None
    next_cursor: str | None = Field(default=None, description="pass back for the next chunk")
    complete: bool | None = Field(default=None, description="true on the last chunk")


class ErrorsOut(BaseModel):
    """`get_errors`: one page of the items that did not get done."""

    operation_id: str
    items: list[dict[str, Any]]
    next_cursor: str | None


class ListOut(BaseModel):
    """`list_operations`: operations, those in flight first."""

    items: list[OperationOut]
    next_cursor: str | None
    in_flight: int = Field(description="how many of `items` (the first ones) are in flight")


class AttentionEntry(BaseModel):
    why: str
    operation: OperationOut


class AttentionOut(BaseModel):
    """`list_attention`: what needs a human, and why."""

    items: list[AttentionEntry]
