"""Azure AI Language analyze-text jobs, driven by status reads.

Behaviour comes from the documented request alone:

- Time: the first status read finds the job `running`; each later read completes
  one task, in order. A job with T tasks is done on read T + 1.
- Documents: a document with empty text, or a `language` the fake does not support,
  is a per-document error in every task's `results.errors` (InnerErrorCode
  `InvalidDocument` / `UnsupportedLanguageCode`), as the service reports them.
- Tasks: a task fails when no document is valid, when its `parameters.modelVersion`
  is not one the fake knows (`latest`, `2022-10-01`, `2023-04-01`: ModelVersionIncorrect),
  or, for a Custom* task, when `projectName` is missing or starts with `fail`
  (ProjectNotFound). The job is `succeeded` when every task succeeded,
  `partiallyCompleted` when some failed, `failed` when all did; each failed task has
  an entry in the job's `errors` with `target` `#/tasks/items/<i>`.
- Cancel: `cancelling` until the next read, then `cancelled`, keeping the tasks done.

Statuses are spelled as the service spells them: `notStarted`, `running`,
`succeeded`, `partiallyCompleted`, `failed`, `cancelling`, `cancelled` (double l).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from jobgate_fakes.providers.base import now, rfc3339

LRO_KINDS = frozenset(
    {
        "SentimentAnalysis",
        "EntityRecognition",
        "PiiEntityRecognition",
        "KeyPhraseExtraction",
        "EntityLinking",
        "Healthcare",
        "ExtractiveSummarization",
        "AbstractiveSummarization",
        "CustomEntityRecognition",
        "CustomSingleLabelClassification",
        "CustomMultiLabelClassification",
    }
)
LANGUAGES = frozenset(
    "en es fr de it pt pt-br pt-pt nl ja ko zh zh-hans zh-hant ar hi ru sv da no fi pl tr".split()
)
TERMINAL = frozenset({"succeeded", "partiallyCompleted", "failed", "cancelled"})
MODEL_VERSION = "2022-10-01"
MODEL_VERSIONS = frozenset({"latest", MODEL_VERSION, "2023-04-01"})


def invalid(
    inner: str, message: str, outer: str = "Invalid Document in request."
) -> dict[str, Any]:
    """An `InvalidArgument` Error with its innererror, as the service nests them."""
    return {
        "code": "InvalidArgument",
        "message": outer,
        "innererror": {"code": inner, "message": message},
    }


def request_problem(body: dict[str, Any]) -> tuple[str, str] | None:
    """(InnerErrorCode, message) when the service refuses the job at submit, else None."""
    given = body.get("analysisInput")
    docs = given.get("documents") if isinstance(given, dict) else None
    if not isinstance(docs, list) or not docs:
        return "MissingInputDocuments", "Missing input documents."
    ids = [d.get("id") if isinstance(d, dict) else None for d in docs]
    if any(not isinstance(i, str) or not i for i in ids):
        return "InvalidDocumentBatch", "Every document needs a non-empty string id."
    if len(set(ids)) != len(ids):
        return (
            "InvalidDocumentBatch",
            "Request contains duplicated Ids. Make sure each document has a unique Id.",
        )
    tasks = body.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        return "InvalidRequestBodyFormat", "At least one task is required."
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or task.get("kind") not in LRO_KINDS:
            kind = task.get("kind") if isinstance(task, dict) else None
            return "InvalidParameterValue", f"Invalid task kind {kind!r} at tasks[{i}]."
    return None


@dataclass
class Job:
    """One analyze-text job and how many of its tasks are done."""

    documents: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    display_name: str | None
    default_language: str
    job_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    created: datetime = field(default_factory=now)
    updated: datetime = field(default_factory=now)
    status: str = "notStarted"
    tasks_done: int = 0
    task_times: list[datetime] = field(default_factory=list)

    def step(self) -> None:
        """One read's worth of work."""
        if self.status in TERMINAL:
            return
        self.updated = now()
        if self.status == "cancelling":
            self.status = "cancelled"
        elif self.status == "notStarted":
            self.status = "running"
        else:
            self.tasks_done += 1
            self.task_times.append(self.updated)
            if self.tasks_done == len(self.tasks):
                failed = sum(1 for t in self.tasks if self.task_error(t) is not None)
                last = "partiallyCompleted" if failed < len(self.tasks) else "failed"
                self.status = "succeeded" if failed == 0 else last

    def cancel(self) -> bool:
        """Ask for cancellation; False once the job is terminal."""
        if self.status in TERMINAL:
            return False
        if self.status != "cancelling":
            self.status, self.updated = "cancelling", now()
        return True

    def doc_error(self, doc: dict[str, Any]) -> dict[str, Any] | None:
        """The per-document error this document gets, if any."""
        if not str(doc.get("text", "")).strip():
            return invalid("InvalidDocument", "Document text is empty.")
        language = str(doc.get("language") or self.default_language).lower()
        if language not in LANGUAGES:
            return invalid("UnsupportedLanguageCode", f"Invalid language code '{language}'.")
        return None

    def task_error(self, task: dict[str, Any]) -> dict[str, Any] | None:
        """Why one task fails: no valid document, an unknown model version, no such project."""
        params = task.get("parameters") or {}
        if all(self.doc_error(d) is not None for d in self.documents):
            return {"code": "InvalidArgument", "message": "The task has no valid document."}
        if task["kind"].startswith("Custom"):
            project = str(params.get("projectName", ""))
            if not project or project.startswith("fail"):
                return {"code": "ProjectNotFound", "message": f"Project '{project}' not found."}
        elif params.get("modelVersion", "latest") not in MODEL_VERSIONS:
            version = params.get("modelVersion")
            message = f"Invalid model version '{version}'."
            return invalid("ModelVersionIncorrect", message, "Invalid parameter in request.")
        return None

    def to_json(self, job_url: str, top: int | None, skip: int, show_stats: bool) -> dict[str, Any]:
        """The AnalyzeTextJobState, documents paged by `top`/`skip` with a `nextLink`."""
        page = self.documents[skip : skip + top] if top is not None else self.documents[skip:]
        items = [self._task_result(i, page, show_stats) for i in range(self.tasks_done)]
        errors = []
        for i, task in enumerate(self.tasks[: self.tasks_done]):
            error = self.task_error(task)
            if error is not None:
                errors.append({**error, "target": f"#/tasks/items/{i}"})
        failed = len(errors)
        body: dict[str, Any] = {
            "jobId": self.job_id,
            "createdDateTime": rfc3339(self.created),
            "lastUpdatedDateTime": rfc3339(self.updated),
            "expirationDateTime": rfc3339(self.created + timedelta(days=1)),
            "status": self.status,
            "errors": errors,
            "tasks": {
                "completed": len(items) - failed,
                "failed": failed,
                "inProgress": len(self.tasks) - len(items) if self.status == "running" else 0,
                "total": len(self.tasks),
                "items": items,
            },
        }
        if self.display_name is not None:
            body["displayName"] = self.display_name
        if top is not None and skip + top < len(self.documents):
            stats = "&showStats=true" if show_stats else ""
            body["nextLink"] = f"{job_url}&top={top}&skip={skip + top}{stats}"
        return body

    def _task_result(
        self, index: int, page: list[dict[str, Any]], show_stats: bool
    ) -> dict[str, Any]:
        task = self.tasks[index]
        ok = [d for d in page if self.doc_error(d) is None]
        results: dict[str, Any] = {
            "documents": [_analysis(task["kind"], d) for d in ok],
            "errors": [{"id": d["id"], "error": self.doc_error(d)} for d in page if d not in ok],
            "modelVersion": MODEL_VERSION,
        }
        if show_stats:
            results["statistics"] = {
                "documentsCount": len(page),
                "validDocumentsCount": len(ok),
                "erroneousDocumentsCount": len(page) - len(ok),
                "transactionsCount": len(ok),
            }
        item: dict[str, Any] = {
            "kind": f"{task['kind']}LROResults",
            "lastUpdateDateTime": rfc3339(self.task_times[index]),
            "status": "failed" if self.task_error(task) else "succeeded",
        }
        if "taskName" in task:
            item["taskName"] = task["taskName"]
        if item["status"] == "succeeded":
            item["results"] = results
        return item


def _analysis(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    """A deterministic result for one valid document."""
    text = str(doc["text"])
    words = text.replace(".", " ").replace(",", " ").split()
    out: dict[str, Any] = {"id": doc["id"], "warnings": []}
    if kind == "KeyPhraseExtraction":
        out["keyPhrases"] = sorted({w.lower() for w in words if len(w) > 4})[:5]
    elif kind == "EntityRecognition":
        out["entities"] = [
            {
                "text": w,
                "category": "Organization",
                "offset": text.find(w),
                "length": len(w),
                "confidenceScore": 0.9,
            }
            for w in words
            if w[:1].isupper()
        ]
    elif kind == "SentimentAnalysis":
        score = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3
        label = ("positive", "neutral", "negative")[score]
        scores = {k: (0.9 if k == label else 0.05) for k in ("positive", "neutral", "negative")}
        out.update(sentiment=label, confidenceScores=scores, sentences=[])
    return out
