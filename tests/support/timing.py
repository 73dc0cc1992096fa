"""Every real-time budget the tests allow, from one place, scaled for slow machines.

`JOBGATE_TEST_TIME_FACTOR` (default 1; `.ci/run` sets it for its loaded 2-core
machine) multiplies each budget. A budget is how long a test may wait for real
processes to do something it then checks; scaling it gives a slow machine more
time and never weakens a check. It is read at import, before conftest strips the
JOBGATE_* variables from the environment, and handed on to pytest-xdist workers.

Budgets also scale with the machine's load: a budget taken while the one-minute load
average is above the number of cores is multiplied by that ratio (up to
`MAX_LOAD_FACTOR`), whichever factor is larger, so a suite started beside other work
waits longer for its processes instead of failing on start-up timeouts.
"""

from __future__ import annotations

import os

_GIVEN = os.environ.get("JOBGATE_TEST_TIME_FACTOR") or os.environ.get("PYTEST_JOBGATE_TIME_FACTOR")
FACTOR = max(1.0, float(_GIVEN or "1"))
# pytest-xdist workers inherit the environment conftest stripped: they read it here.
os.environ["PYTEST_JOBGATE_TIME_FACTOR"] = str(FACTOR)

TEST_TIMEOUT_S = 120.0  # a whole test, unless it asks for more (pytest-timeout)
PROCESS_START_S = 20.0  # a gateway, observer or server process becoming healthy
PROCESS_WORK_S = 20.0  # real processes finishing a handful of operations
QUICK_S = 5.0  # an in-process server reacting to one request


MAX_LOAD_FACTOR = 6.0  # past this a budget stops growing: a test still ends


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages, where the system has them."""
    try:
        return os.getloadavg()
    except OSError:  # not on every platform
        return None


def cores() -> int:
    return os.cpu_count() or 1


def load_factor() -> float:
    """How much busier than its cores the machine is now (1 when it is not)."""
    load = load_average()
    if load is None:
        return 1.0
    return min(MAX_LOAD_FACTOR, max(1.0, load[0] / cores()))


def factor() -> float:
    """The factor a budget taken now is scaled by: the given one or the load's."""
    return max(FACTOR, load_factor())


def budget(seconds: float) -> float:
    """`seconds` scaled for this machine and its load now."""
    return seconds * factor()
