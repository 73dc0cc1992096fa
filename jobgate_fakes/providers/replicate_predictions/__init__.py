"""A local fake of Replicate's predictions API, built from its public reference.

Follows (references read 2026-12-01):
- HTTP API reference https://replicate.com/docs/reference/http (predictions.create,
  .get, .cancel, .list; models.predictions.create), "Create a prediction" (sync mode,
  `Prefer: wait`), "Rate limits" (429 body), "Webhooks" (setup, receive, verify:
  `webhook-id`/`webhook-timestamp`/`webhook-signature`, events start/output/logs/completed)
  and the changelog entry of 2025-10-16 ("Set deadlines for predictions": `Cancel-After`,
  status `aborted`);
- github.com/replicate/replicate-python at 0110c2c5639763a44e73d69011eaec28a15334f7
  (2025-06-02, replicate 1.0.7): `prediction.py` (fields, `Prefer: wait[=n]`), `pagination.py`
  (`next`/`previous`/`results`), `exceptions.py` (problem details), `webhook.py`
  (signature check, secret at /v1/webhooks/default/secret).

The fake serves one model, `jobgate/echo` (version in `model.VERSION`); its inputs
set the behaviour (see `model`). Client reference: the `webhook` URL (Replicate's
documented way to pass your own metadata is query parameters on it). Replicate
documents no idempotency key: every create makes a prediction.
"""

from jobgate_fakes.providers.replicate_predictions.app import create_app

__all__ = ["create_app"]
