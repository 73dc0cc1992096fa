"""`make run`: the mock provider and the gateway (with its observer) side by side.

Prints where they listen and a ready curl that starts and follows a mock
operation, last, once both answer; Ctrl-C stops both. `make run AUTH=keys` runs the
gateway with API keys: the run creates an agent and an operator key (or reuses the ones
it made before for this data directory), keeps them in `make-run-keys.env` there, and
its curl sends the agent key. Request logs are off (no uvicorn
access log, the HTTP client's per-request lines silenced): what remains is one line per
operation transition and provider call, and warnings.

The banner means it: both ports are checked free before anything starts, and the
gateway counts as up only when `/v1/healthz` answers as jobgate (`"service": "jobgate"`)
while the process this run started is alive. Anything that fails to start ends the run
with one line and a non-zero code (docs/operations.md, "Exit codes"); so does a child
that dies later. When its parent ends (`kill <make's pid>` does not reach this process),
it stops both children too, instead of leaving them on their ports.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2

HOST = os.environ.get("HOST", "127.0.0.1")
PORT = int(os.environ.get("PORT", "8080"))
MOCK_PORT = int(os.environ.get("MOCK_PORT", "8081"))
START_TIMEOUT_S = 120.0  # a first start migrates the SQLite default; slow machines take a while
FAILED = 1  # `make run` could not start, or a child died: the line printed says which
KEYS_FILE = "make-run-keys.env"  # in JOBGATE_DATA_DIR: the keys a keys-mode run made


def fail(line: str) -> None:
    """One line on stderr, then exit non-zero."""
    print(f"make run: {line}", file=sys.stderr, flush=True)  # noqa: T201
    sys.exit(FAILED)


def require_free(host: str, port: int, variable: str) -> None:
    """Refuse a port another process listens on before starting anything."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            fail(
                f"port {port} on {host} is not free ({exc.strerror or exc}); "
                f"choose another: make run {variable}=<port>"
            )


def _answers(url: str, check: str) -> bool:
    try:
        reply = httpx2.get(url, timeout=1.0)
    except httpx2.HTTPError:
        return False
    if reply.status_code != 200:
        return False
    try:
        body = reply.json()
    except ValueError:
        return False
    if check == "jobgate":
        return isinstance(body, dict) and body.get("service") == "jobgate"
    return isinstance(body, dict)


def wait_up(url: str, proc: subprocess.Popen[bytes], name: str, check: str) -> None:
    """Until `url` answers as `check` says while `proc` lives; else one line and exit."""
    ends = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < ends:
        if proc.poll() is not None:
            fail(f"the {name} exited with code {proc.returncode} before answering; see above")
        if _answers(url, check):
            if proc.poll() is not None:  # someone else answered while ours was dying
                fail(f"the {name} exited with code {proc.returncode}; see above")
            return
        time.sleep(0.1)
    fail(f"the {name} did not answer at {url} within {START_TIMEOUT_S:.0f} s")


@dataclass(frozen=True)
class RunKeys:
    """The agent and operator keys a keys-mode run uses, and the file that holds them."""

    path: Path
    how: str  # "created" or "reused"
    agent_name: str
    operator_name: str


def _whoami(base: str, key: str) -> str | None:
    """The role the gateway gives `key`, or None when it refuses it."""
    try:
        reply = httpx2.get(
            f"{base}/v1/whoami", headers={"Authorization": f"Bearer {key}"}, timeout=5.0
        )
    except httpx2.HTTPError:
        return None
    return str(reply.json().get("role")) if reply.status_code == 200 else None


def _read_keys(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, sep, value = line.removeprefix("export ").partition("=")
            if sep and not line.startswith("#"):
                found[name.strip()] = value.split("#")[0].strip()
    return found


def _create_key(env: dict[str, str], name: str, role: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "keys", "create", "--name", name, "--role", role],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    if done.returncode != 0:
        fail(f"could not create the {role} key: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout.strip()


def run_keys(base: str, env: dict[str, str]) -> RunKeys:
    """The keys this keys-mode run needs: the ones in the data directory's keys file when
    the gateway still takes them, else two new ones (names carry the time: a revoked
    key's name is never reused)."""
    path = Path(env.get("JOBGATE_DATA_DIR", "./data")) / KEYS_FILE
    kept = _read_keys(path)
    agent, operator = kept.get("JOBGATE_API_KEY", ""), kept.get("JOBGATE_OPERATOR_KEY", "")
    names = kept.get("JOBGATE_KEY_NAMES", "").split(",")
    if (
        agent
        and operator
        and len(names) == 2
        and _whoami(base, agent) == "agent"
        and _whoami(base, operator) == "operator"
    ):
        return RunKeys(path, "reused", names[0], names[1])
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    names = [f"make-run-agent-{stamp}", f"make-run-operator-{stamp}"]
    agent = _create_key(env, names[0], "agent")
    operator = _create_key(env, names[1], "operator")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(
        "# Keys `make run AUTH=keys` created for this data directory; the database holds\n"
        "# only their hashes. `source` this file; delete it to get new keys next run.\n"
        f"export JOBGATE_API_KEY={agent}\n"
        f"export JOBGATE_OPERATOR_KEY={operator}\n"
        f"export JOBGATE_KEY_NAMES={names[0]},{names[1]}\n",
        encoding="utf-8",
    )
    return RunKeys(path, "created", names[0], names[1])


def main() -> int:
    """Start both, print the banner once both answer, run until Ctrl-C or a child dies."""
    require_free(HOST, PORT, "PORT")
    require_free("127.0.0.1", MOCK_PORT, "MOCK_PORT")
    env = dict(os.environ)
    mock_url = f"http://127.0.0.1:{MOCK_PORT}"
    env.setdefault("JOBGATE_MOCK_PROVIDER_URL", mock_url)
    # The mock signs its job webhooks and the gateway verifies them: one shared secret
    # for this run, so webhooks work out of the box.
    env.setdefault("JOBGATE_MOCK_WEBHOOK_URL", f"http://{HOST}:{PORT}/v1/webhooks/mock")
    env.setdefault(
        "JOBGATE_MOCK_WEBHOOK_SECRET", "whsec_" + base64.b64encode(os.urandom(24)).decode()
    )
    py = sys.executable
    children: list[subprocess.Popen[bytes]] = []
    try:
        mock = subprocess.Popen(
            [py, "-m", "app.cli", "mock-provider", "--port", str(MOCK_PORT), "--no-access-log"],
            env=env,
        )
        children.append(mock)
        wait_up(f"{mock_url}/_mock/stats", mock, "mock provider", "json")
        gateway = subprocess.Popen(
            [
                py,
                "-m",
                "app.cli",
                "serve",
                "--host",
                HOST,
                "--port",
                str(PORT),
                "--no-access-log",  # one line per transition instead; the banner stays in view
            ],
            env=env,
        )
        children.append(gateway)
        base = f"http://{HOST}:{PORT}"
        wait_up(f"{base}/v1/healthz", gateway, "gateway", "jobgate")
        keys = run_keys(base, env) if env.get("JOBGATE_AUTH") == "keys" else None
        print(banner(base, mock_url, keys), flush=True)  # noqa: T201
        return run_until_stopped(gateway, mock)
    finally:
        for proc in children:
            if proc.poll() is None:
                proc.terminate()
        for proc in children:
            proc.wait(30)


def banner(base: str, mock_url: str, keys: RunKeys | None = None) -> str:
    """What `make run` prints once both answer: where they are and a curl that works in
    the mode it runs in (in keys mode: with the agent key it created or reused)."""
    auth = ""
    header = ""
    first = ""
    if keys is not None:
        auth = f"""
Keys mode: every /v1 call needs a key. This run {keys.how} two keys, kept (mode 600) in
{keys.path}:
  agent    {keys.agent_name!r}: $JOBGATE_API_KEY, for the curl below, the client, MCP
  operator {keys.operator_name!r}: $JOBGATE_OPERATOR_KEY, to sign in at {base}/login
    (and for `jobgate ops`: JOBGATE_API_KEY=$JOBGATE_OPERATOR_KEY jobgate ops list)
"""
        header = ' -H "Authorization: Bearer $JOBGATE_API_KEY"'
        first = f"  source {keys.path}\n"
    return f"""
jobgate is running ({"keys" if keys else "dev"} mode).
  gateway + observer : {base}      (API docs: {base}/docs, operators: {base}/operations)
  mock provider      : {mock_url}   (counters: {mock_url}/_mock/stats)
{auth}
Start a mock report job that takes three polls, then wait for its honest answer:

{first}  OP=$(curl -s -X POST {base}/v1/operations{header} \\
        -H 'Content-Type: application/json' -H "Idempotency-Key: demo-$RANDOM" \\
        -d '{{"provider":"mock","kind":"report","input":{{"scenario":{{"name":"slow","polls":3}}}}}}' \\
       | python3 -c '{SHOW_ID}')
  curl -s{header} "{base}/v1/operations/$OP/wait?timeout=60" | python3 -m json.tool

Ctrl-C stops everything.
"""


# Prints the body's message (or the error's) on stderr and the operation id on stdout;
# an error body (a refused key, say) exits 1 instead of a KeyError traceback.
SHOW_ID = (
    'import json,sys; b=json.load(sys.stdin); e=b.get("error"); '
    'print((e or b)["message"], file=sys.stderr); '
    'sys.exit(1) if e else print(b["operation_id"])'
)


def run_until_stopped(gateway: subprocess.Popen[bytes], mock: subprocess.Popen[bytes]) -> int:
    """0 after Ctrl-C or SIGTERM; a child that dies on its own ends the run non-zero."""
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    parent = os.getppid()
    while not stop:
        if os.getppid() != parent:  # `make` (or the shell) was killed: no orphans on the ports
            print("make run: its parent process ended; stopping", file=sys.stderr, flush=True)  # noqa: T201
            return 0
        for name, proc in (("gateway", gateway), ("mock provider", mock)):
            if proc.poll() is not None:
                print(  # noqa: T201
                    f"make run: the {name} exited with code {proc.returncode}; see above",
                    file=sys.stderr,
                    flush=True,
                )
                return FAILED
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
