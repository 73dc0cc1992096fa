"""jobgate_client is its own distribution (jobgate_client/pyproject.toml): built offline,
installed alone into a fresh virtual environment, it imports, brings no `app` package and
no `jobgate` command, declares httpx2 as its one dependency, and runs the README's client
example against a live gateway (docs/python-client.md, "Install").

The fresh environment gets the client's dependencies by a path entry to this
environment's site-packages (no download); this repository's own packages are installed
there only as editable finders, which a plain path entry does not activate, so `app`
stays out of reach, as the test checks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import (
    START_TIMEOUT_S,
    gateway_env,
    gateway_process,
    mock_process,
)

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOBGATE_", "PYTHON"))}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the jobgate-client wheel installed, and nothing of the gateway."""
    tmp = tmp_path_factory.mktemp("client-venv")
    wheels = tmp / "wheels"
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", wheels, ROOT / "jobgate_client", cwd=tmp,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    [wheel] = wheels.glob("jobgate_client-*.whl")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    installed = _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
        wheel, cwd=tmp,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp
        ).stdout.strip()
    )
    # The dependencies (httpx2 and what it needs), from this environment, without its .pth files.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield env_dir
    assert not (ROOT / "jobgate_client" / "build").exists()  # nothing left in the checkout
    assert not list((ROOT / "jobgate_client").glob("*.egg-info"))


def test_the_client_installs_alone_without_the_gateway(client_venv: Path, tmp_path: Path) -> None:
    python = client_venv / "bin" / "python"
    probe = textwrap.dedent(
        """
        import importlib.metadata as md, importlib.util, json, jobgate_client
        print(json.dumps({
            "file": jobgate_client.__file__,
            "app": importlib.util.find_spec("app") is not None,
            "fakes": importlib.util.find_spec("jobgate_fakes") is not None,
            "requires": md.requires("jobgate-client"),
            "names": sorted(jobgate_client.__all__)[:3],
        }))
        """
    )
    done = _run(python, "-c", probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import json

    got = json.loads(done.stdout)
    assert got["file"].startswith(str(client_venv)), got  # the installed copy, not the checkout
    assert got["app"] is False and got["fakes"] is False
    assert got["requires"] == ["httpx2<3,>=2.16"]
    assert got["names"]
    assert not (client_venv / "bin" / "jobgate").exists()
    files = sorted(p.name for p in (Path(got["file"]).parent).iterdir())
    assert "pyproject.toml" not in files and "py.typed" in files


def test_the_readme_client_example_runs_from_the_client_alone(
    client_venv: Path, tmp_path: Path, database_url: str
) -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nfrom jobgate_client import")
    example = readme[start + len("```python\n") : readme.index("```", start + 10)]
    example = example.replace('api_key="jgk_..."', "api_key=None")
    with mock_process(tmp_path) as mock_url:
        env = gateway_env(database_url, mock_url, tmp_path)
        with gateway_process(env, tmp_path / "gateway.log") as (_, url):
            program = example.replace("http://127.0.0.1:8080", url)
            done = _run(client_venv / "bin" / "python", "-c", program, cwd=tmp_path,
                        timeout=START_TIMEOUT_S * 3)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("done:"), done.stdout + done.stderr
