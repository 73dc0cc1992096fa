"""Content-addressed file store for results too large to keep inline in the database."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class ResultStore:
    """Files named by their sha256 under `<data_dir>/results/ab/cd/<sha256>.json`."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "results"

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256[2:4] / f"{sha256}.json"

    def put(self, sha256: str, raw: bytes) -> str:
        """Write once (atomic rename, fsync); returns the reference stored in the row."""
        path = self.path_for(sha256)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        return f"sha256:{sha256}"

    def get(self, ref: str) -> bytes:
        sha = ref.removeprefix("sha256:")
        return self.path_for(sha).read_bytes()
