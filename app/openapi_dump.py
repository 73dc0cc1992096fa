"""Prints the gateway's OpenAPI document (`make openapi` writes it to openapi/openapi.json)."""

from __future__ import annotations

import json
import sys

from app.core.config import Settings
from app.main import create_app


def document() -> dict[str, object]:
    # Built-in profiles only: the checked document must not depend on this machine's
    # JOBGATE_PROFILES_DIR (the live /openapi.json lists what is configured).
    app = create_app(Settings(auth="dev", profiles_dir=None), run_observer=False)
    return app.openapi()


if __name__ == "__main__":
    sys.stdout.write(json.dumps(document(), indent=2, sort_keys=True) + "\n")
