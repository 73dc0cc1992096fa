"""The start-up refusals `jobgate` turns into one line and an exit code (kept import-light).

Exit codes are documented in docs/operations.md, "Exit codes".
"""


class StartRefused(Exception):
    """A process must not start: the message says what to run or fix."""

    exit_code = 3  # the database is not ready, or a needed extra is not installed


class PortBusy(StartRefused):
    """The address `serve` was told to listen on cannot be bound (in use, or not allowed)."""

    exit_code = 4
