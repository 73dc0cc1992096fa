"""The result side of a profile: which documents hold a finished job's output and errors,
how they are read (JSON or JSON Lines, bounded), and what each line says about its item."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from app.providers.spec_base import (
    Endpoint,
    Name,
    Pointer,
    SpecModel,
    TemplateText,
    check_path,
)

Scalar = str | int | float | bool


class ResultPointers(SpecModel):
    """Pointers into a JSON result document (fetched, or inline in a create/status body)."""

    data: Pointer | None = "/data"
    sha256: Pointer | None = None
    failed_items: Pointer | None = None  # a list of the items that failed


class ItemRules(SpecModel):
    """What one JSON Lines line says about its item.

    ``status`` points at the line's own verdict; the line succeeded when the value is one
    of ``succeeded`` (e.g. ``/result/type`` in ``[succeeded]``, ``/response/status_code`` in
    ``[200]``). Without ``status``, every line of an ``output`` document succeeded and
    every line of an ``errors`` document failed. ``error`` lists pointers to the line's
    error; the first one present is kept with the failed item.
    """

    id: Pointer | None = None
    status: Pointer | None = None
    succeeded: list[Scalar] = []
    error: list[Pointer] = []

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
    absent (OpenAI sets ``error_file_id`` only when some requests failed).
    """

    name: Name = "result"
    path: str = ""  # either path or url; checked below
    url: TemplateText | None = None
    role: Literal["output", "errors"] = "output"
    format: Literal["json", "jsonl"] = "json"
    required: bool = True
    items: ItemRules = ItemRules()
    max_bytes: Annotated[int, Field(gt=0)] | None = None  # default: validation.max_bytes

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

    The v1 form, ``method`` and ``path`` here, is one JSON document named ``result``.
    """

    safe_to_repeat: bool = False
    documents: Annotated[list[DocumentSpec], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _single(cls, data: Any) -> Any:
        if isinstance(data, dict) and "documents" not in data and "path" in data:
            rest = {k: v for k, v in data.items() if k != "safe_to_repeat"}
            return {"safe_to_repeat": data.get("safe_to_repeat", False), "documents": [rest]}
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
