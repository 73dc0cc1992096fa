"""The start-up refusal `jobgate` turns into one line and exit code 3 (kept import-light)."""


class StartRefused(Exception):
    """A process must not start: the message says what to run or fix."""
