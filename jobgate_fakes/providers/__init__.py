"""Local fakes of real provider APIs, built from their public references (docs/provider-fakes.md).

Each fake is a FastAPI app (`create_app(settings)`) that answers like its provider:
paths, field names, states, error bodies, pagination, auth headers and rate-limit
headers. Behaviour is deterministic from the create input (documented per fake),
never from wall time, and a control API under `/_fake/` queues faults and exposes
counters. `jobgate fake-provider NAME` serves one as a process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from jobgate_fakes.providers.settings import FakeSettings

# Fake name (as the bundled profile it answers is named) -> the module that builds it.
FAKES = {
    "openai_batch": "jobgate_fakes.providers.openai_batch",
    "anthropic_message_batches": "jobgate_fakes.providers.anthropic_batches",
    "replicate_predictions": "jobgate_fakes.providers.replicate_predictions",
    "google_translate": "jobgate_fakes.providers.google_translate",
    "azure_operation_location": "jobgate_fakes.providers.azure_language",
    "google_document_ai": "jobgate_fakes.providers.google_document_ai",
    "assemblyai_transcripts": "jobgate_fakes.providers.assemblyai_transcripts",
    "vertex_veo": "jobgate_fakes.providers.vertex_veo",
    "fal_queue": "jobgate_fakes.providers.fal_queue",
}
DEFAULT_PORT = 8090


def create_app(name: str, settings: FakeSettings | None = None) -> FastAPI:
    """Build the fake called `name` (KeyError for an unknown name)."""
    module = importlib.import_module(FAKES[name])
    app: FastAPI = module.create_app(settings)
    return app


def run(name: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
    """Serve one fake with uvicorn until interrupted (`jobgate fake-provider NAME`)."""
    import uvicorn

    uvicorn.run(create_app(name), host=host, port=port)
