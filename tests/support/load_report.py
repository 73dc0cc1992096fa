"""When start-up timeouts pile up, say whether the machine is loaded and how to rerun.

A loaded machine (other builds, other suites) makes real processes slow to start, and
the suite then fails on start-up timeouts that say nothing about jobgate. This pytest
plugin (registered by tests/conftest.py) counts failures and errors whose report names
a start-up timeout; past `PILE_UP` it ends the run with the load average, the number
of cores, whether the machine is loaded, and the command that reruns only the failures.
With pytest-xdist the reports reach the controller, so one summary covers every worker.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.timing import MAX_LOAD_FACTOR, cores, load_average

PILE_UP = 3  # start-up timeouts in one run before the summary speaks
# Words the timeouts of tests/support/processes.py, app/devrun.py and pytest-timeout use.
MARKS = (
    "TimeoutError",
    "not healthy",
    "did not answer",
    "Timeout (",  # pytest-timeout: "Failed: Timeout (>120.0s) from pytest-timeout."
    "TimeoutExpired",
)


def is_startup_timeout(text: str) -> bool:
    """Whether a failure's report reads as a process that did not start in time."""
    return any(mark in text for mark in MARKS)


def summary(
    timeouts: int, load: tuple[float, float, float] | None, ncores: int, factor: float
) -> list[str]:
    """The lines printed at the end of a run with `timeouts` start-up timeouts."""
    lines = [f"{timeouts} tests failed on start-up timeouts (a process did not start in time)."]
    if load is None:
        lines.append("The load average cannot be read here; if the machine is busy, that is why.")
    else:
        shown = " / ".join(f"{x:.1f}" for x in load)
        busy = load[0] > ncores
        lines.append(
            f"Load average {shown} (1, 5, 15 min) on {ncores} cores: "
            + (
                "the machine is loaded, which is the usual cause."
                if busy
                else "the machine is not loaded now; if it was during the run, that is why."
            )
        )
    lines.append(
        f"Budgets were scaled by {factor:.1f} (the load's ratio to the cores, at most "
        f"{MAX_LOAD_FACTOR:.0f}, or JOBGATE_TEST_TIME_FACTOR)."
    )
    lines.append(
        "Rerun only the failures when it is quieter: make test PYTEST_ARGS=--lf "
        "(or give more time: JOBGATE_TEST_TIME_FACTOR=4 make test PYTEST_ARGS=--lf)."
    )
    return lines


class LoadReport:
    """Counts start-up timeouts as reports arrive; speaks in the terminal summary."""

    def __init__(self) -> None:
        self.timeouts = 0

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and is_startup_timeout(report.longreprtext):
            self.timeouts += 1

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.timeouts < PILE_UP:
            return
        from tests.support.timing import factor

        terminalreporter.section("the machine may be loaded", sep="-", yellow=True)
        for line in summary(self.timeouts, load_average(), cores(), factor()):
            terminalreporter.line(line)


def register(config: pytest.Config) -> None:
    """Add the report to this run (tests/conftest.py calls it from pytest_configure)."""
    config.pluginmanager.register(LoadReport(), "jobgate-load-report")
