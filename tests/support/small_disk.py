"""A small disk of the test's own: a tmpfs mounted under the test's folder, to fill up.

Mounting needs the privilege to mount (root in the CI machines); where it is missing the
test is skipped, saying so. `fill` leaves a disk with no free byte, `free` gives it back.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(where: Path, size_mib: int) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip() or mount.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> Path:
    """Write a filler file until the disk refuses another byte; returns the filler."""
    filler = disk / "filler"
    chunk = b"\0" * (1 << 16)
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    try:  # the last partial chunk
        with filler.open("ab") as fh:
            while True:
                fh.write(b"\0")
                fh.flush()
    except OSError:
        pass
    assert shutil.disk_usage(disk).free < (1 << 16)
    return filler


def free(filler: Path) -> None:
    filler.unlink()
