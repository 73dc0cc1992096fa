"""A PostgreSQL cluster of a test's own (initdb + pg_ctl), on a free port on 127.0.0.1,
that the test may stop and start; the machine's shared server is never touched.

initdb refuses to run as root, so the cluster runs as the `postgres` user (`runuser`)
in a temporary directory it owns.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
OWNER = "postgres"


def available() -> bool:
    """The binaries are here and this process may run them as the cluster's owner."""
    return (BIN / "initdb").exists() and shutil.which("runuser") is not None and os.getuid() == 0


class Cluster:
    def __init__(self, root: Path, port: int) -> None:
        self.root, self.port = root, port
        self.data = root / "data"

    def _run(self, *args: str) -> None:
        subprocess.run(["runuser", "-u", OWNER, "--", *args], check=True, capture_output=True)

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(BIN / "pg_ctl"), "-D", str(self.data), "-o", opts,
            "-l", str(self.root / "server.log"), "-w", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: open sessions are ended, as a restart of the server ends them."""
        self._run(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{OWNER}@127.0.0.1:{self.port}/{database}"

    def createdb(self, name: str) -> str:
        self._run(str(BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), name)
        return self.url(name)


@contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A started cluster, stopped and removed at the end."""
    root = Path(tempfile.mkdtemp(prefix="jobgate-pg-"))
    shutil.chown(root, OWNER, OWNER)
    cluster = Cluster(root, free_port())
    try:
        cluster._run(str(BIN / "initdb"), "-D", str(cluster.data), "-U", OWNER, "--auth=trust")
        cluster.start()
        yield cluster
    finally:
        try:
            cluster.stop()
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(root, ignore_errors=True)
