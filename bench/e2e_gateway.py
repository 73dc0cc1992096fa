"""`jobgate serve` with passive probes attached, for `bench/end_to_end.py`.

    python bench/e2e_gateway.py serve --port N [...]    # same arguments as `jobgate serve`

Runs the unchanged `app.cli.main` after installing:
- `e2e_probe.CommitCounter`; on SIGUSR1 the counts go to the file `E2E_COUNTERS_PATH`;
- a tick log, when `E2E_TICKS_PATH` is set and the observer still has a `tick()`:
  one line per tick, "<unix start> <seconds> <operations claimed>", so the bench can
  compare tick lengths with the poll gaps the provider saw.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from e2e_probe import CommitCounter

from app.cli import main


def log_ticks(path: Path) -> None:
    from app.observer import worker

    tick = getattr(worker.Observer, "tick", None)
    if tick is None:
        return
    fh = path.open("a", buffering=1)

    async def timed_tick(self: Any) -> Any:
        t0, p0 = time.time(), time.perf_counter()
        n = await tick(self)
        fh.write(f"{t0:.6f} {time.perf_counter() - p0:.6f} {n}\n")
        return n

    worker.Observer.tick = timed_tick  # type: ignore[method-assign]


if __name__ == "__main__":
    CommitCounter().install().dump_on_signal(Path(os.environ["E2E_COUNTERS_PATH"]))
    if os.environ.get("E2E_TICKS_PATH"):
        log_ticks(Path(os.environ["E2E_TICKS_PATH"]))
    sys.exit(main(sys.argv[1:]))
