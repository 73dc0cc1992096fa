"""A local fake of the OpenAI Batch API (files + batches), built from its public reference.

Follows (references read 2026-12-01):
- API reference https://platform.openai.com/docs/api-reference/batch and /files
  (developers.openai.com/api/reference/resources/batches), the Batch guide
  https://platform.openai.com/docs/guides/batch, and the webhook events reference
  https://platform.openai.com/docs/api-reference/webhook-events;
- the SDK types of github.com/openai/openai-python at e43b422412a9e96c9cc5192c61fffbe2d7e04836
  (2026-08-21, openai 3.3.1): `types/batch.py`, `batch_create_params.py`, `batch_request_counts.py`,
  `batch_error.py`, `file_object.py`, `types/webhooks/batch_*_webhook_event.py`,
  `lib/_webhooks.py` (Standard Webhooks signature), `pagination.py` (`after` cursor).

Endpoints: `POST /v1/files` (multipart, purpose `batch`), `GET /v1/files/{id}`,
`GET /v1/files/{id}/content`, `POST /v1/batches`, `GET /v1/batches/{id}`,
`POST /v1/batches/{id}/cancel`, `GET /v1/batches?after=&limit=`.

Deterministic behaviour (batchwork.py): a request's `body.model` starting with `fail`
fails; its `max_tokens` sets how many status reads it takes. Client reference: batch
`metadata` (every `key=value` pair counts). OpenAI documents no idempotency key for
these endpoints; the fake ignores `Idempotency-Key` and every create makes a batch.

Not modelled: file list/delete, `output_expires_after`, `usage`, batch-size limits,
the dashboard's webhook retries (one attempt each). docs/provider-fakes.md has the rest.
"""

from jobgate_fakes.providers.openai_batch.app import create_app

__all__ = ["create_app"]
