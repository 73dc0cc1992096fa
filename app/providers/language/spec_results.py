"""The result side of a profile: which documents hold a finished job's output and errors,
how they are read (JSON or JSON Lines, bounded), and what each line says about its item."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, GetJsonSchemaHandler, WithJsonSchema, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from app.providers.language.spec_base import (
    TEMPLATE_SCHEMA,
    Endpoint,
    Name,
    Pointer,
    SpecModel,
    TemplateText,
    check_path,
    one_or_many,
)

Scalar = str | int | float | bool


class ResultPointers(SpecModel):
    """Pointers into a JSON result document (fetched, or inline in a create/status body)."""

    data: Pointer | None = Field("/data", examples=["/output"])
    """The result inside a JSON result document."""
    sha256: Pointer | None = Field(None, examples=["/sha256"])
    """The checksum the provider claims (checked with ``validation.checksum``)."""
    failed_items: Pointer | None = Field(None, examples=["/errors"])
    """A list of the items that failed."""


class ItemRules(SpecModel):
    """What one JSON Lines line says about its item.

    ``status`` points at the line's own verdict; the line succeeded when the value is one
    of ``succeeded`` (e.g. ``/result/type`` in ``[succeeded]``, ``/response/status_code`` in
    ``[200]``). Without ``status``, every line of an ``output`` document succeeded and
    every line of an ``errors`` document failed. ``error`` lists pointers to the line's
    error; the first one present is kept with the failed item.
    """

    id: Pointer | None = Field(None, examples=["/custom_id"])
    """The item's id in the line."""
    status: Pointer | None = Field(None, examples=["/response/status_code"])
    """The line's own verdict; needs ``succeeded``."""
    succeeded: list[Scalar] = Field([], examples=[[200]])
    """The ``status`` values that mean success."""
    error: list[Pointer] = Field([], examples=[["/error", "/response/body/error"]])
    """Where the line keeps its error; the first one present is kept."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        one_or_many(handler.resolve_ref_schema(schema), "error")
        return schema

    @model_validator(mode="before")
    @classmethod
    def _one_error(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return {**data, "error": [data["error"]]}
        return data

    @model_validator(mode="after")
    def _verdict(self) -> ItemRules:
        if self.status is not None and not self.succeeded:
            raise ValueError("status needs the values that mean success (succeeded)")
        return self


class DocumentSpec(Endpoint):
    """One result document: at a path template (``/v1/files/{output_file_id}/content``)
    or at a URL held by the status answer (``url: "{results_url}"``).

    ``role: output`` documents hold the result, ``errors`` documents the failed items.
    A document that is not ``required`` is skipped when a value its address needs is
    absent (OpenAI sets ``error_file_id`` only when some requests failed). Addresses use
    ``job_id``, the variables and ``pointers.fields``; when they use fields (or
    ``counts.source`` is ``status``) a status read comes first.

    JSON documents give the result through ``pointers.result`` (``data``, ``sha256``,
    ``failed_items``); JSON Lines documents are **streamed**: each line is judged as it
    arrives (succeeded lines are the result, failed lines the failed items ``{id, status,
    error, document}``), and reading stops at ``max_bytes``, so a larger document is never
    held in memory (it is reported ``truncated``, not collected). When the status counts
    promise more succeeded items than the documents hold, the result is not collected
    yet (retried).
    """

    name: Name = "result"
    """The document's name; names must differ."""
    # Either path or url (checked below): "" stands for "no path" in the model.
    path: Annotated[str, WithJsonSchema(TEMPLATE_SCHEMA)] = Field(
        "", examples=["/v1/files/{output_file_id}/content"]
    )
    """Where to read it, after ``base_url`` (a Template); or give ``url``."""
    url: TemplateText | None = Field(None, examples=["{results_url}"])
    """A URL from the status answer (a Template over ``pointers.fields``), followed only on
    the profile's origins."""
    role: Literal["output", "errors"] = "output"
    """``output``: the result; ``errors``: the failed items."""
    format: Literal["json", "jsonl"] = "json"
    """``json``: one JSON document; ``jsonl``: JSON Lines, one item a line."""
    required: bool = True
    """``false``: skipped when a value its address needs is absent."""
    items: ItemRules = ItemRules()
    """For ``jsonl``: what each line says about its item."""
    max_bytes: Annotated[int, Field(gt=0)] | None = Field(None, examples=[10485760])
    """Never read past this many bytes (none: ``validation.max_bytes``)."""

    @model_validator(mode="after")
    def _address(self) -> DocumentSpec:
        if bool(self.path) == (self.url is not None):
            raise ValueError("give exactly one of path or url")
        if self.path:
            check_path(self.path)
        return self

    def template_parts(self) -> dict[str, object]:
        parts = super().template_parts()
        parts["url"] = self.url
        return parts


class ResultSpec(SpecModel):
    """The documents to fetch once the job is done; ``safe_to_repeat`` says whether a
    document may be downloaded again after a failed attempt (a download may be single-use).

    ```yaml
    result:
      safe_to_repeat: true          # default false: a document may be single-use
      documents:
        - name: output              # default "result"; names must differ
          path: /v1/files/{output_file_id}/content   # or url: "{results_url}"
          role: output              # output (default) | errors
          format: jsonl             # json (default) | jsonl
          required: false           # default true; false: skipped when its address is absent
          max_bytes: 10485760       # default validation.max_bytes; never read past it
          items:                    # jsonl: each line's verdict
            id: /custom_id
            status: /response/status_code
            succeeded: [200]        # status values meaning success (needed with status)
            error: [/error, /response/body/error]   # first present is kept
    ```

    The v1 form, ``result: {method, path, safe_to_repeat}`` (the fields of one document
    beside ``safe_to_repeat``), is still one JSON document named ``result``.
    """

    safe_to_repeat: bool = False
    """May a document be downloaded again after a failed attempt?"""
    job_failed_statuses: list[Annotated[int, Field(ge=400, le=499)]] = Field([], examples=[[422]])
    """HTTP statuses of a result read that the provider documents as the job's own failure
    (an error found after the run, e.g. a 422 after ``COMPLETED``): the operation ends
    ``failed`` with the provider's detail instead of the read being tried again
    (docs/profiles.md, "A result read that means the job failed")."""
    documents: Annotated[list[DocumentSpec], Field(min_length=1)]
    """The documents, fetched in order."""

    @model_validator(mode="after")
    def _job_failed_statuses(self) -> ResultSpec:
        # 408 and 429 say "try later", never "failed" (fal answers the result of a
        # COMPLETED request with 422 and the validation error: that one is a failure).
        codes = self.job_failed_statuses
        if len(set(codes)) != len(codes):
            raise ValueError("job_failed_statuses lists a status twice")
        later = sorted(set(codes) & {408, 429})
        if later:
            raise ValueError(f"job_failed_statuses: {later[0]} means 'try later', not a failure")
        return self

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # The v1 form is one document's fields beside safe_to_repeat (see _single).
        schema = handler(core_schema)
        spec = handler.resolve_ref_schema(schema)
        doc = handler.resolve_ref_schema(spec["properties"]["documents"]["items"])
        single = {
            "type": "object",
            "title": "ResultSpec (v1: one JSON document)",
            "properties": {
                **doc["properties"],
                "safe_to_repeat": spec["properties"]["safe_to_repeat"],
                "job_failed_statuses": spec["properties"]["job_failed_statuses"],
            },
            "required": ["path"],
            "additionalProperties": False,
        }
        canonical = {
            k: spec.pop(k) for k in ("type", "properties", "required", "additionalProperties")
        }
        spec["anyOf"] = [canonical, single]
        return schema

    @model_validator(mode="before")
    @classmethod
    def _single(cls, data: Any) -> Any:
        if isinstance(data, dict) and "documents" not in data and "path" in data:
            beside = ("safe_to_repeat", "job_failed_statuses")
            rest = {k: v for k, v in data.items() if k not in beside}
            return {**{k: data[k] for k in beside if k in data}, "documents": [rest]}
        return data

    @model_validator(mode="after")
    def _names(self) -> ResultSpec:
        names = [d.name for d in self.documents]
        if len(set(names)) != len(names):
            raise ValueError("document names must differ")
        return self

    @property
    def path(self) -> str:
        """The first document's path (v1 callers read ``profile.result.path``)."""
        return self.documents[0].path


FieldMap = dict[Name, Pointer]  # named values read from create and status answers
