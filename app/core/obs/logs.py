"""Structured logs: JSON lines, or readable text on a terminal, with the operation in context.

`bind(op_id, trace_id)` sets two context variables for the work on one operation (the
runner binds them around every step), and the log record factory copies them onto
every record made meanwhile, whatever handler (ours, pytest's) formats it, so a line
about an operation carries its id and trace id without each call site passing them.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["auto", "json", "text"]

_OP_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("jobgate_op_id", default=None)
_TRACE_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jobgate_trace_id", default=None
)
# Attributes every LogRecord has; anything else on a record came from `extra=` and is a field.
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn: the same message with ANSI colours
}
# Libraries whose per-request INFO lines drown what the gateway itself says.
QUIET = (
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "alembic.runtime.plugins",
    "sse_starlette",
    "mcp",
)


@contextlib.contextmanager
def bind(op_id: str | None, trace_id: str | None) -> Iterator[None]:
    """Lines logged inside carry this operation id and trace id."""
    t1, t2 = _OP_ID.set(op_id), _TRACE_ID.set(trace_id)
    try:
        yield
    finally:
        _OP_ID.reset(t1)
        _TRACE_ID.reset(t2)


def current() -> tuple[str | None, str | None]:
    """(operation id, trace id) bound right now, if any."""
    return _OP_ID.get(), _TRACE_ID.get()


_BASE_FACTORY = logging.getLogRecordFactory()


def _record_with_context(*args: Any, **kwargs: Any) -> logging.LogRecord:
    record = _BASE_FACTORY(*args, **kwargs)
    record.op_id = _OP_ID.get()
    record.trace_id = _TRACE_ID.get()
    return record


if getattr(logging.getLogRecordFactory(), "__name__", "") != "_record_with_context":
    logging.setLogRecordFactory(_record_with_context)


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields of a record: the context ids and whatever `extra=` added."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and v is not None}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, op_id, trace_id, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(fields_of(record))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


TEXT_FIELDS = ("op_id", "trace_id")  # the message already says the rest


class TextFormatter(logging.Formatter):
    """For a person at a terminal: time, level, message, then the operation it is about."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        shown = fields_of(record)
        fields = " ".join(f"{k}={shown[k]}" for k in TEXT_FIELDS if k in shown)
        line = f"{ts} {record.levelname:<7} {record.getMessage()}"
        if fields:
            line += f"  [{fields}]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(level: str | int = "INFO", fmt: str = "auto", *, stream: Any = None) -> None:
    """Root logging for a jobgate process: JSON unless `fmt` says text or stderr is a TTY."""
    stream = stream or sys.stderr
    use_text = fmt == "text" or (fmt == "auto" and stream.isatty())
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TextFormatter() if use_text else JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
