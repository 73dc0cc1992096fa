"""A provider whose every job follows the script its create input carries: for tests that
must reach one exact provider answer (e.g. each row of the outcome table) through the
real HTTP path and the real driver.

`POST /jobs` takes `{"running_reads": N, "final": {...}, "output": [...], "errors": [...]}`
(or that script under `"wrapped"`, as a test adapter's create body sends it) and answers
202 `{"id", "state": "running"}`. `GET /jobs/{id}` answers `running` for the first N
reads (1 by default), then `{"id": ..., **final}`. `GET /jobs/{id}/output` and `/errors`
serve the script's lines as JSON Lines; `GET /jobs/{id}/received` the create body as it
came; `GET /jobs/{id}/reads` how many status and output reads it answered. A script's
`"refuse": {"status": {"code": 400, "body": ...}, "output": {...}}` answers every status
read (after its running reads) or every output read so, for the reads that keep failing.
It never imports the gateway.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

# The profile that drives it; `{counts}` is a `counts:` section or nothing (itemless).
PROFILE = """\
version: 2
name: {name}
base_url: http://127.0.0.1:9
base_url_env: JOBGATE_SCRIPTED_URL
kinds:
  run:
    create: {{method: POST, path: /jobs, body: $input}}
status: {{method: GET, path: "/jobs/{{job_id}}"}}
{result}
pointers: {{job_id: /id, state: /state{inline}}}
states: {{running: running, succeeded: succeeded, partial: succeeded_partial,
          failed: failed, cancelled: cancelled}}
{counts}
"""
COUNTS = """\
counts:
  source: status
  total: /counts/total
  succeeded: /counts/succeeded
  failed: /counts/failed
  not_processed: /counts/not_processed
"""


DOCUMENTS = """\
result:
  safe_to_repeat: true{job_failed}
  documents:
    - {name: output, path: "/jobs/{job_id}/output", format: jsonl, role: output}
    - {name: errors, path: "/jobs/{job_id}/errors", format: jsonl, role: errors,
        items: {id: /id, error: /error}}
"""


def profile_yaml(
    name: str,
    *,
    itemless: bool,
    inline: bool = False,
    job_failed: list[int] | None = None,
    unit: str | None = None,
) -> str:
    """The profile text: `itemless` leaves `counts` out (a job that is one piece of work);
    `inline` reads the result from the final status answer instead of documents;
    `job_failed` gives `result.job_failed_statuses`; `unit` gives `counts.unit`."""
    declared = f"\n  job_failed_statuses: {job_failed}" if job_failed else ""
    counts = COUNTS + (f"  unit: {unit}\n" if unit else "")
    return PROFILE.format(
        name=name,
        counts="" if itemless else counts,
        result="" if inline else DOCUMENTS.replace("{job_failed}", declared),
        inline=', inline_result: "", result: {data: ""}' if inline else "",
    )


def create_app() -> FastAPI:
    app = FastAPI()
    jobs: dict[str, dict[str, Any]] = {}

    @app.post("/jobs")
    async def create(request: Request) -> JSONResponse:
        job_id = f"job-{len(jobs) + 1}"
        body = await request.json()
        jobs[job_id] = {
            "script": body.get("wrapped", body),
            "reads": 0,
            "output_reads": 0,
            "received": body,
        }
        return JSONResponse({"id": job_id, "state": "running"}, status_code=202)

    def refused(job: dict[str, Any], read: str) -> JSONResponse | None:
        said = (job["script"].get("refuse") or {}).get(read)
        if said is None:
            return None
        return JSONResponse(said.get("body"), status_code=int(said["code"]))

    @app.get("/jobs/{job_id}")
    async def status(job_id: str) -> JSONResponse:
        job = jobs[job_id]
        job["reads"] += 1
        if job["reads"] <= int(job["script"].get("running_reads", 1)):
            return JSONResponse({"id": job_id, "state": "running"})
        return refused(job, "status") or JSONResponse({"id": job_id, **job["script"]["final"]})

    @app.get("/jobs/{job_id}/reads")
    async def reads(job_id: str) -> JSONResponse:
        job = jobs[job_id]
        return JSONResponse({"status": job["reads"], "output": job["output_reads"]})

    def lines(job_id: str, name: str) -> Response:
        body = "".join(json.dumps(line) + "\n" for line in jobs[job_id]["script"].get(name, []))
        return Response(body, media_type="application/jsonl")

    @app.get("/jobs/{job_id}/received")
    async def received(job_id: str) -> JSONResponse:
        return JSONResponse(jobs[job_id]["received"])

    @app.get("/jobs/{job_id}/output")
    async def output(job_id: str) -> Response:
        jobs[job_id]["output_reads"] += 1
        return refused(jobs[job_id], "output") or lines(job_id, "output")

    @app.get("/jobs/{job_id}/errors")
    async def errors(job_id: str) -> Response:
        return lines(job_id, "errors")

    return app
