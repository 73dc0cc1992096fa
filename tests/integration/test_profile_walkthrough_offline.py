"""Step 7 of docs/profiles.md's walk-through, run as a reader runs it: the profile from
steps 1 to 5 saved as `profiles/assemblyai.yaml`, then the shell block as written (the
AssemblyAI fake, `jobgate migrate`, an agent key, `jobgate serve`, one transcript),
with only its two ports changed to free ones and time scaled for the polls."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.processes import START_TIMEOUT_S, free_port

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
WALK = DOC[DOC.index("## Add your provider in ten minutes") : DOC.index("## Templates")]


def test_step_7_runs_offline_as_written(tmp_path: Path) -> None:
    yaml_blocks = re.findall(r"```yaml\n(.*?)```", WALK[: WALK.index("**6. Check it**")], re.S)
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "assemblyai.yaml").write_text("".join(yaml_blocks))
    [script] = re.findall(r"<!-- walkthrough -->\n```sh\n(.*?)```", WALK, re.S)
    fake_port, gateway_port = free_port(), free_port()
    script = script.replace("8091", str(fake_port)).replace("8180", str(gateway_port))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["JOBGATE_TIME_SCALE"] = "0.01"  # the profile polls after 5 s, then 7.5 s
    # Files, not pipes: the background jobs keep their copies open after the script ends.
    with (tmp_path / "out").open("w") as stdout, (tmp_path / "err").open("w") as stderr:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its background jobs are stopped with it, below
        )
        try:
            proc.wait(timeout=START_TIMEOUT_S * 6)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    out, err = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert proc.returncode == 0, err[-3000:]
    body = json.loads(out.strip().splitlines()[-1])
    assert body["done"] is True and body["outcome"] == "succeeded", body
    assert body["provider"] == "assemblyai" and body["guarantees"]["single_create"] == "none"
    assert (tmp_path / "walkthrough-data" / "jobgate.db").exists()  # its own database
