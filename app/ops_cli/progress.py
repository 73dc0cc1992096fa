"""The one-line progress display of `jobgate ops wait`: stderr, and only on a terminal.

Redirected output (a pipe, a file, CI) gets nothing from here, so stdout stays the
answer alone and logs are not filled with carriage returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from app.ops_cli.render import progress

CLEAR_LINE = "\r\x1b[K"


class ProgressLine:
    """Rewrites one status line in place while a wait is held."""

    def __init__(self, stream: TextIO, *, enabled: bool | None = None) -> None:
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self._shown = False

    def update(self, op: Mapping[str, Any], elapsed: float) -> None:
        if not self.enabled:
            return
        line = (
            f"waiting on {op.get('operation_id')}: {op.get('status')}, {op.get('state')}"
            f", remote {op.get('remote_state') or '-'}, progress {progress(op)}"
            f", {elapsed:.0f}s"
        )
        self.stream.write(CLEAR_LINE + line)
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
