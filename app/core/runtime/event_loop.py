"""The event loop a jobgate process runs on: uvloop where it is installed, as uvicorn
picks it for `jobgate serve`, so a standalone observer runs on the same loop as the
gateway's in-process one (its callbacks and socket calls are C, not Python)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:  # e.g. Windows: the standard loop
        return asyncio.run(main)
    return uvloop.run(main)
