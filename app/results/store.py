"""Content-addressed file store for results too large to keep inline in the database."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from app.core.db.write_faults import StorageFull


class ResultStore:
    """Files named by their sha256 under `<data_dir>/results/ab/cd/<sha256>.json`.

    A write that would leave less than `reserve_bytes` free on the disk is refused before
    anything is written (`StorageFull`), and a write that fails midway leaves no file
    behind: a result larger than the free space cannot fill the disk again on every retry.
    """

    def __init__(self, data_dir: Path, reserve_bytes: int = 0) -> None:
        self.root = data_dir / "results"
        self.reserve_bytes = reserve_bytes

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256[2:4] / f"{sha256}.json"

    def free_bytes(self) -> int:
        """Bytes free to this process on the disk that will hold the store (the nearest
        folder that exists: the store and its data dir are made on the first write)."""
        where = self.root
        while not where.exists() and where != where.parent:
            where = where.parent
        return shutil.disk_usage(where).free

    def put(self, sha256: str, raw: bytes) -> str:
        """Write once (atomic rename, fsync); returns the reference stored in the row."""
        path = self.path_for(sha256)
        if not path.exists():
            free = self.free_bytes()
            if len(raw) + self.reserve_bytes > free:
                raise StorageFull(
                    f"storage full: the result needs {len(raw)} bytes and the disk has {free} "
                    f"free, {self.reserve_bytes} of them kept in reserve"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(raw)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        return f"sha256:{sha256}"

    def remove(self, ref: str) -> bool:
        """Delete a stored result (retention); False when it was not there."""
        try:
            self.path_for(ref.removeprefix("sha256:")).unlink()
        except FileNotFoundError:
            return False
        return True

    def get(self, ref: str) -> bytes:
        sha = ref.removeprefix("sha256:")
        return self.path_for(sha).read_bytes()
