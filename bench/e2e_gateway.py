"""`jobgate serve` with a commit counter attached, for `bench/end_to_end.py`.

    python bench/e2e_gateway.py serve --port N [...]    # same arguments as `jobgate serve`

Runs the unchanged `app.cli.main` after installing `e2e_probe.CommitCounter`; on
SIGUSR1 the counts are written to the file named by `E2E_COUNTERS_PATH`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from e2e_probe import CommitCounter

from app.cli import main

if __name__ == "__main__":
    CommitCounter().install().dump_on_signal(Path(os.environ["E2E_COUNTERS_PATH"]))
    sys.exit(main(sys.argv[1:]))
