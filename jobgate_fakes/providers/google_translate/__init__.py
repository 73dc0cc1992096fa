"""A local fake of a Google long-running method (AIP-151): Translation v3 `batchTranslateText`.

Follows (references read 2026-12-01):
- AIP-151 (https://google.aip.dev/151), AIP-158 (pagination) and AIP-193 (errors);
- github.com/googleapis/googleapis at f8291d2b89f0017ab078a4c7378069bae5686f6f (2026-08-22):
  `google/longrunning/operations.proto` (Operation, List/Get/Cancel/Delete),
  `google/rpc/status.proto`, `google/rpc/error_details.proto` (ErrorInfo, RetryInfo),
  `google/cloud/translate/v3/translation_service.proto` (BatchTranslateTextRequest,
  BatchTranslateMetadata, BatchTranslateResponse; last changed at
  1b141494162fee2993345d056cf709ebf1d0402c) and `translate_v3.yaml` (REST bindings);
- REST reference https://cloud.google.com/translate/docs/reference/rest/v3/projects.locations/batchTranslateText
  and .../projects.locations.operations.

Endpoints: `POST /v3/projects/{p}/locations/{l}:batchTranslateText`,
`GET /v3/{name}`, `POST /v3/{name}:cancel`, `DELETE /v3/{name}`,
`GET /v3/projects/{p}/locations/{l}/operations?filter=&pageSize=&pageToken=`.

Client reference: `labels` (every `key=value` pair counts). The request has no
`requestId` or other idempotency field, and the fake honours none; but, as the
reference says, an `outputUriPrefix` can serve only one job, so a create sent again
with the same prefix is refused with INVALID_ARGUMENT while the first job exists.
"""

from jobgate_fakes.providers.google_translate.app import create_app

__all__ = ["create_app"]
