"""A local fake of Google Cloud Document AI v1 `batchProcess`, a google.longrunning method.

Follows (references read 2026-12-03):
- github.com/googleapis/googleapis at f8291d2b89f0017ab078a4c7378069bae5686f6f (2026-08-22):
  `google/cloud/documentai/v1/document_processor_service.proto` (BatchProcessRequest,
  BatchProcessMetadata with IndividualProcessStatus and State, BatchProcessResponse,
  HumanReviewStatus, the REST bindings of BatchProcessDocuments) and `document_io.proto`
  (BatchDocumentsInputConfig, GcsDocuments, GcsPrefix, DocumentOutputConfig), both
  last changed at 280bed6c219637610d09cebf696958dd99fd2f76 (2026-04-01);
  `documentai_v1.yaml` (the google.longrunning.Operations bindings: get, cancel, list;
  no delete); `google/longrunning/operations.proto`, `google/rpc/status.proto`,
  `code.proto` and `error_details.proto`;
- the REST reference
  https://cloud.google.com/document-ai/docs/reference/rest/v1/projects.locations.processors/batchProcess
  (and .../projects.locations.processors.processorVersions/batchProcess),
  https://cloud.google.com/document-ai/docs/reference/rest/Shared.Types/BatchProcessMetadata,
  https://cloud.google.com/document-ai/docs/long-running-operations (operations; per-
  document statuses once the operation ends), https://cloud.google.com/document-ai/limits
  (5,000 files per batch request), https://cloud.google.com/document-ai/quotas and
  https://cloud.google.com/document-ai/docs/file-types;
- Google's samples in github.com/GoogleCloudPlatform/python-docs-samples `documentai/snippets`
  (`batch_process_documents_sample.py`: `outputGcsDestination` is
  `gs://BUCKET/PREFIX/OPERATION_ID/INDEX`; `list_operations_sample*.py`: the filter
  `TYPE=BATCH_PROCESS_DOCUMENTS AND STATE=...`).

Endpoints: `POST /v1/projects/{p}/locations/{l}/processors/{id}:batchProcess` and
`.../processors/{id}/processorVersions/{v}:batchProcess` → an Operation;
`GET /v1/projects/{p}/locations/{l}/operations/{id}` (and `/v1/projects/{p}/operations/{id}`);
`POST /v1/{name}:cancel`;
`GET /v1/projects/{p}/locations/{l}/operations?filter=&pageSize=&pageToken=`.

Client reference: `labels` (every `key=value` pair counts). BatchProcessRequest has no
`requestId` or other idempotency field, and the fake honours none: a create sent
twice makes two operations.
"""

from jobgate_fakes.providers.google_document_ai.app import create_app

__all__ = ["create_app"]
