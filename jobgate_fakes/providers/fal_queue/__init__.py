"""A local fake of the fal.ai queue (`queue.fal.run`), built from its public client and docs.

Follows (references read 2026-12-06):
- github.com/fal-ai/fal at c6f0afaaceec981d2461474a81467552adb0b084 (2026-08-21):
  `projects/fal_client/src/fal_client/client.py` (submit: `POST
  queue.fal.run/<owner>/<app>[/<path>]` with the arguments as the JSON body, answered
  `request_id`, `response_url`, `status_url`, `cancel_url`; status: `GET
  status_url?logs=` → `IN_QUEUE` with `queue_position`, `IN_PROGRESS` with `logs`,
  `COMPLETED` with `logs`, `metrics` and, when the app failed, `error` and `error_type`;
  result: `GET response_url`; cancel: `PUT cancel_url`; `from_request_id` builds the
  URLs from `<owner>/<alias>` alone, so an app's sub-path is not in them; errors are
  `{"detail": ...}`; 408, 409 and 429 are retried by the client, the submit included),
  `auth.py` (`Authorization: Key <FAL_KEY>`), `projects/fal/src/fal/cli/api.py` ("the
  result endpoint answering at all means the request reached a terminal state": a failed
  request's result read answers the app's HTTP error),
  `projects/fal/src/fal/exceptions/_base.py` (FieldException: 422 with a pydantic-style
  `detail` list; RequestCancelledException: "Request cancelled by the client.") and
  `projects/fal/src/fal/toolkit/image/` (`has_nsfw_concepts`, one flag per image; a
  flagged image is replaced by a black one);
- the queue docs https://docs.fal.ai/model-apis/model-endpoints/queue (the status
  answers carry `response_url`; cancel answers 202 `CANCELLATION_REQUESTED`, or 400
  `ALREADY_COMPLETED` once the request is done).

Not documented, so the fake's own choice: a cancelled request reads `COMPLETED` with
`error: "Request cancelled by the client."` (RequestCancelledException's message) and
`error_type: "request_cancelled"` (a guess: the bundled profile reads it as cancelled
and says so; were fal's word another, the request would read `failed`, never a
success); a 429 is plain text ("Too Many Requests"), with a `Retry-After` header only
when the fault asks for one.

The fake serves every app (an app id starting with `missing` is 404), each behaving as
the image app in `model`. fal documents no idempotency key: every submit is a request.
"""

from jobgate_fakes.providers.fal_queue.app import create_app

__all__ = ["create_app"]
