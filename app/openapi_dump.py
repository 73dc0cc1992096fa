"""Prints the gateway's OpenAPI document (`make openapi` writes it to openapi/openapi.json)."""

from __future__ import annotations

import json
import sys

from app.core.config import Settings
from app.main import create_app


def document() -> dict[str, object]:
    app = create_app(Settings(auth="dev"), run_observer=False)
    return app.openapi()


if __name__ == "__main__":
    sys.stdout.write(json.dumps(document(), indent=2, sort_keys=True) + "\n")
