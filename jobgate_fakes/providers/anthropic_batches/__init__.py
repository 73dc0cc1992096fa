"""A local fake of the Anthropic Message Batches API, built from its public reference.

Follows (references read 2026-12-01):
- API reference https://docs.anthropic.com/en/api/creating-message-batches and the
  retrieve/list/cancel/delete/results pages (platform.claude.com/docs/en/api/messages/batches),
  "Errors" (https://docs.anthropic.com/en/api/errors) and "Rate limits" (response headers);
- the SDK types of github.com/anthropics/anthropic-sdk-python at
  009b035305e0724ce108ebd796935f91711fc6e1 (2026-08-07, anthropic 0.121.0):
  `types/messages/message_batch*.py`, `batch_create_params.py`, `batch_list_params.py`,
  `types/shared/error_*.py`,
  `pagination.py` (`first_id`/`last_id`, `before_id`/`after_id`), `_client.py`
  (`x-api-key`, `anthropic-version: 2023-06-01`).

Endpoints: `POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`,
`GET /v1/messages/batches?before_id=&after_id=&limit=`, `POST .../{id}/cancel`,
`GET .../{id}/results` (JSONL, at `results_url`), `DELETE .../{id}`.

Deterministic behaviour (batchwork.py): `params.model` starting with `fail` ends
`errored`; `params.max_tokens` sets the hours (status reads) a request takes; over 24
hours it ends `expired`. Client reference: each request's `custom_id`. Anthropic
documents no idempotency key for this endpoint; every create makes a batch.
No webhooks (the API has none).
"""

from jobgate_fakes.providers.anthropic_batches.app import create_app

__all__ = ["create_app"]
