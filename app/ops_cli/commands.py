"""`jobgate ops list|show|wait|cancel|resolve|approve|deny|attention`, against a gateway or
a database.

Every command is one or a few calls on an `OpsBackend`: REST calls through
`jobgate_client` (`--url`, `--key`), or with `--database-url` the same services the
REST API calls, straight on the database (`local.py`; no gateway is contacted).
Output is a table or summary for a person, or the API's JSON with `--json`, the same
either way. Exit codes: 0 ok (for `wait`: succeeded or completed_with_errors); 1
`wait` ended in another done state (failed, cancelled, needs attention); 2 the call
was refused (unknown id, bad key, forbidden, ...), or the gateway or database could
not be reached or the database is not at the head migration; 3 `wait --timeout`
passed and the operation is still running.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, get_args

from app.ops_cli import render, timeline
from app.ops_cli.backend import BackendUnavailable, OpsBackend
from app.ops_cli.progress import ProgressLine
from jobgate_client import Client
from jobgate_client.errors import ApiError, GatewayUnavailable
from jobgate_client.types import Decision

DEFAULT_URL = "http://127.0.0.1:8080"
TTY_WAIT_CHUNK_S = 2.0  # on a terminal, re-ask this often so the progress line moves
WAIT_CHUNK_S = 60.0  # otherwise one /wait holds this long before asking again
EXIT_NOT_SUCCEEDED, EXIT_REFUSED, EXIT_STILL_RUNNING = 1, 2, 3
SUCCESS = frozenset({"succeeded", "completed_with_errors"})


def _out(text: str) -> None:
    print(text)  # noqa: T201


def _err(text: str) -> None:
    print(text, file=sys.stderr)  # noqa: T201


def _json(value: Any) -> None:
    _out(json.dumps(value, indent=2, ensure_ascii=False))


def _client(args: argparse.Namespace) -> Client:
    url = args.url or os.environ.get("JOBGATE_URL") or DEFAULT_URL
    key = args.key or os.environ.get("JOBGATE_API_KEY") or None
    return Client(url, key)


def cmd_list(jg: OpsBackend, args: argparse.Namespace) -> int:
    page = jg.list(
        status=args.status,
        state=args.state,
        provider=args.provider,
        in_flight=True if args.in_flight else None,
        trace_id=args.trace_id,
        label=args.label,
        limit=args.limit,
        cursor=args.cursor,
    )
    if args.json:
        _json(page)
    else:
        _out(render.table(render.OP_HEADERS, [render.op_row(op) for op in page["items"]]))
        if page.get("next_cursor"):
            _err(f"more: jobgate ops list --cursor {page['next_cursor']}")
    return 0


def cmd_show(jg: OpsBackend, args: argparse.Namespace) -> int:
    op = jg.get(args.operation_id)
    history = jg.history(args.operation_id)
    if args.json:
        _json({"operation": op, "history": history["items"]})
        return 0
    rows = [dict(item) for item in history["items"]]
    _out(render.summary(op))
    _out("")
    _out(f"timeline ({len(rows)} history rows; repeated polls folded):")
    for line in timeline.render(timeline.fold(rows)):
        _out("  " + line)
    return 0


def cmd_wait(
    jg: OpsBackend,
    args: argparse.Namespace,
    *,
    monotonic: Callable[[], float] = time.monotonic,
) -> int:
    bar = ProgressLine(sys.stderr)
    chunk = TTY_WAIT_CHUNK_S if bar.enabled else WAIT_CHUNK_S
    started = monotonic()
    op = jg.get(args.operation_id)
    try:
        while not op["done"]:
            bar.update(op, monotonic() - started)
            left = args.timeout - (monotonic() - started)
            if left <= 0:
                break
            op = jg.wait(args.operation_id, timeout=min(chunk, left))
    finally:
        bar.finish()
    if args.json:
        _json(op)
    else:
        _out(render.table(render.OP_HEADERS, [render.op_row(op)]))
        _out(op["message"])
    if not op["done"]:
        return EXIT_STILL_RUNNING
    return 0 if op["status"] in SUCCESS else EXIT_NOT_SUCCEEDED


def cmd_cancel(jg: OpsBackend, args: argparse.Namespace) -> int:
    op = jg.cancel(args.operation_id, args.reason)
    if args.json:
        _json(op)
    else:
        _out(f"{op['operation_id']}: {op['status']} ({op['state']})")
        _out(op["message"])
    return 0


def cmd_resolve(jg: OpsBackend, args: argparse.Namespace) -> int:
    op = jg.resolve(
        args.operation_id,
        args.decision,
        args.reason,
        remote_job_id=args.remote_job_id,
        result_deadline_seconds=args.result_deadline_seconds,
        force=args.force,
    )
    if args.json:
        _json(op)
    else:
        _out(f"{op['operation_id']}: {args.decision} recorded; now {op['status']} ({op['state']})")
        _out(op["message"])
    return 0


def cmd_decide(jg: OpsBackend, args: argparse.Namespace) -> int:
    approve = args.ops_command == "approve"
    decide = jg.approve if approve else jg.deny
    op = decide(args.operation_id, args.reason)
    if args.json:
        _json(op)
    else:
        verb = "approved" if approve else "denied"
        _out(f"{op['operation_id']}: {verb}; now {op['status']} ({op['state']})")
        _out(op["message"])
    return 0


def cmd_attention(jg: OpsBackend, args: argparse.Namespace) -> int:
    inbox = jg.attention(limit=args.limit)
    if args.json:
        _json(inbox)
        return 0
    rows = [[*render.op_row(item["operation"])[:3], item["why"]] for item in inbox["items"]]
    _out(render.table(("OPERATION", "STATUS", "STATE", "WHY"), rows))
    return 0


OPERATOR_KEY_HINT = (
    "jobgate ops: it needs an operator key, in --key or $JOBGATE_API_KEY (create one with "
    "`jobgate keys create --name NAME --role operator`; an agent key sees only its own)"
)


def run(args: argparse.Namespace) -> int:
    """Dispatch one `ops` command; refusals and connection errors become one line, exit 2."""
    try:
        if args.database_url:
            return _on_database(args)
        with _client(args) as jg:
            return int(args.ops_func(jg, args))
    except ApiError as exc:
        _err(f"jobgate ops: {exc.status} {exc.code}: {exc.message}")
        if exc.status in (401, 403):
            _err(OPERATOR_KEY_HINT)
    except GatewayUnavailable as exc:
        _err(f"jobgate ops: the gateway did not answer: {exc}")
    except BackendUnavailable as exc:
        _err(f"jobgate ops: {exc}")
    return EXIT_REFUSED


def _on_database(args: argparse.Namespace) -> int:
    if args.url or args.key:  # a key would suggest a role the database path never checks
        _err("jobgate ops: --database-url talks to no gateway: drop --url and --key")
        return EXIT_REFUSED
    from app.ops_cli import local  # imports the gateway's services: only when asked for

    with local.open_database(args.database_url) as jg:
        return int(args.ops_func(jg, args))


def add_parser(sub: Any) -> None:
    """Register `jobgate ops ...` on the top-level subparsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help=f"the gateway (default: $JOBGATE_URL, else {DEFAULT_URL})")
    common.add_argument("--key", help="an operator API key (default: $JOBGATE_API_KEY)")
    common.add_argument(
        "--database-url",
        help="work straight on this database (SQLAlchemy URL) as operator cli:<OS user>; "
        "no gateway is contacted",
    )
    common.add_argument("--json", action="store_true", help="print the API's JSON")
    common.add_argument(
        "-v", "--verbose", action="store_true", help="also print the INFO log lines"
    )

    ops = sub.add_parser("ops", help="operations from a terminal: list, show, wait, ...")
    ops_sub = ops.add_subparsers(dest="ops_command", required=True)

    def command(name: str, func: Any, text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = ops_sub.add_parser(name, parents=[common], help=text)
        p.set_defaults(func=run, ops_func=func)
        return p

    lst = command("list", cmd_list, "operations, newest first")
    lst.add_argument("--status")
    lst.add_argument("--state")
    lst.add_argument("--provider")
    lst.add_argument("--in-flight", action="store_true", help="only those not done")
    lst.add_argument("--trace-id")
    lst.add_argument("--label", help="key=value")
    lst.add_argument("--limit", type=int, default=50)
    lst.add_argument("--cursor", help="the `more:` cursor of the previous page")

    show = command("show", cmd_show, "one operation and its timeline (polls folded)")
    show.add_argument("operation_id")

    wait = command("wait", cmd_wait, "hold until done (progress on a terminal)")
    wait.add_argument("operation_id")
    wait.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")

    cancel = command("cancel", cmd_cancel, "record the intent to cancel")
    cancel.add_argument("operation_id")
    cancel.add_argument("--reason", default="cancelled by an operator (jobgate ops)")

    resolve = command("resolve", cmd_resolve, "an operator's decision on a needs-attention one")
    resolve.add_argument("operation_id")
    resolve.add_argument("--decision", required=True, choices=get_args(Decision))
    resolve.add_argument("--reason", required=True)
    resolve.add_argument("--remote-job-id")
    resolve.add_argument("--result-deadline-seconds", type=float)
    resolve.add_argument(
        "--force",
        action="store_true",
        help="accept_job only: take the job although the provider shows nothing that proves "
        "it is this operation's (recorded as accepted without proof)",
    )

    for verb, text in (
        ("approve", "approve a create the policy held (docs/policy.md): it is sent"),
        ("deny", "deny a create the policy held: it ends failed, never sent"),
    ):
        decide = command(verb, cmd_decide, text)
        decide.add_argument("operation_id")
        decide.add_argument("--reason", required=True)

    attention = command("attention", cmd_attention, "the attention inbox, oldest first")
    attention.add_argument("--limit", type=int, default=50)
