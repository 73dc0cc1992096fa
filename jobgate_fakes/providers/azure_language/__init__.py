"""A local fake of an Azure `Operation-Location` API: AI Language analyze-text jobs (2023-04-01).

Follows (references read 2026-12-01):
- the Azure REST API guidelines for long-running operations
  (https://github.com/microsoft/api-guidelines/blob/vNext/azure/Guidelines.md#long-running-operations);
- REST reference https://learn.microsoft.com/rest/api/language/analyze-text/analyze-text-submit-job
  (job status, cancel job), api-version 2023-04-01;
- github.com/Azure/azure-rest-api-specs,
  `specification/cognitiveservices/data-plane/Language/stable/2023-04-01/`: `common.json`
  (JobState, Error, InnerErrorModel, DocumentError, ErrorCode/InnerErrorCode enums,
  version 19c7e45e29f47336b01f0cac5ffb0aceb156d612) and the examples
  SuccessfulAnalyzeTextJobsMultipleTaskSubmitRequest/StatusRequest/CancelRequest;
- github.com/Azure/azure-sdk-for-python, azure-ai-textanalytics `_generated/v2023_04_01`
  (`State` enum at 1b4e70be2d40136f3071014b02a290f70984aabe, operations at
  c206532c930ff67990e13bc7228b12e1376053b6: 202 + Operation-Location, `:cancel`).

Endpoints: `POST /language/analyze-text/jobs`, `GET /language/analyze-text/jobs/{jobId}`
(`top`, `skip`, `showStats`), `POST /language/analyze-text/jobs/{jobId}:cancel`.

Client reference: `displayName`. The service documents no idempotency header (no
`Repeatability-Request-ID`); the fake honours none and every submit makes a job.
"""

from jobgate_fakes.providers.azure_language.app import create_app

__all__ = ["create_app"]
