"""`bench/folded_top.py` on a small folded profile: the top lists and the parts add up."""

from __future__ import annotations

from pathlib import Path

from tests.support.bench import run_bench

PROFILE = """\
main (app/cli.py:1);send (app/providers/calls/wire.py:9);send (httpx2/_client.py:3) 6
main (app/cli.py:1);apply (app/operations/ledger.py:5);execute (app/core/db/txn.py:7) 3
main (app/cli.py:1);handle (starlette/routing.py:2);create (app/operations/services/intake.py:4) 1
main (app/cli.py:1);handle (starlette/routing.py:2);_run (app/core/db/drivers/sqlite_conn.py:8) 2
"""


def test_folded_top_ranks_functions_and_groups_parts(tmp_path: Path) -> None:
    profile = tmp_path / "gw.folded"
    profile.write_text(PROFILE)
    out = run_bench("folded_top.py", str(profile), "--top", "3")
    assert "gw.folded: 12 samples" in out, out
    assert "50.0%  send (httpx2/_client.py)" in out, out  # the top by self
    parts = out.split("by part")[1].splitlines()[1:]
    # create() names no part: its sample goes to the inbound request that called it. The
    # driver under a route is the database's (every module of app/core/db/ is).
    assert [p.split() for p in parts] == [
        ["50.0%", "provider", "calls"],
        ["41.7%", "database"],
        ["8.3%", "inbound", "requests"],
    ], out
