"""Every real-time budget the tests allow, from one place, scaled for slow machines.

`JOBGATE_TEST_TIME_FACTOR` (default 1; `.ci/run` sets it for its loaded 2-core
machine) multiplies each budget. A budget is how long a test may wait for real
processes to do something it then checks; scaling it gives a slow machine more
time and never weakens a check. It is read at import, before conftest strips the
JOBGATE_* variables from the environment, and handed on to pytest-xdist workers.
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


def budget(seconds: float) -> float:
    """`seconds` scaled for this machine."""
    return seconds * FACTOR
