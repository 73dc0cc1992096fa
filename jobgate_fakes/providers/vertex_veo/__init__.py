"""A local fake of Vertex AI's long-running predictions for Veo video generation.

Follows (references read 2026-12-06):
- github.com/googleapis/python-genai at 66807187f2123c6676175ac991f4e34eb09200d1
  (2026-08-21): `google/genai/models.py` (`generate_videos` on Vertex: `POST
  {model}:predictLongRunning` with `instances[0].prompt` / `image`, `parameters`
  (`sampleCount`, `storageUri`, `durationSeconds`, `seed`, `aspectRatio`, ...) and a
  top-level `labels`), `google/genai/operations.py` and `_operations_converters.py`
  (the status read is `POST {model}:fetchPredictOperation` with `{"operationName":
  <the operation's name>}`; there is no GET of these operations; the answer is a
  google.longrunning.Operation whose `response` holds `videos[]` (`gcsUri` or
  `bytesBase64Encoded`, `mimeType`), `raiMediaFilteredCount` and
  `raiMediaFilteredReasons`);
- the Vertex AI REST reference for `projects.locations.publishers.models.predictLongRunning`
  and `.fetchPredictOperation`, and the Veo video generation API page
  (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation);
- googleapis `google/longrunning/operations.proto`, `google/rpc/status.proto` (errors,
  through jobgate_fakes/providers/googleapis.py).

Endpoints: `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:predictLongRunning`
→ `{"name": ".../operations/<id>"}`; `POST .../models/{model}:fetchPredictOperation` with
`{"operationName"}` → the Operation. A GET of the operation name is not routed (404),
as on Vertex. The fake offers no cancel: python-genai has none for these operations.

Client reference: `labels` (every `key=value` pair counts). `predictLongRunning` has no
request id and the fake honours none: a create sent twice makes two operations.
Behaviour is deterministic from the request (see `model`).
"""

from jobgate_fakes.providers.vertex_veo.app import create_app

__all__ = ["create_app"]
