"""The bundled profiles and the fakes that answer them: one table for the profile tests
and bench/agent_calls.py."""

from __future__ import annotations

# profile -> (fake, base URL variable, credential variable)
FAKES: dict[str, tuple[str, str, str]] = {
    "openai_batch": ("openai_batch", "JOBGATE_OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic_message_batches": (
        "anthropic_message_batches",
        "JOBGATE_ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
    ),
    "replicate_predictions": (
        "replicate_predictions",
        "JOBGATE_REPLICATE_BASE_URL",
        "REPLICATE_API_TOKEN",
    ),
    "google_translate": (
        "google_translate",
        "JOBGATE_GOOGLE_TRANSLATE_BASE_URL",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
    ),
    "google_document_ai": (
        "google_document_ai",
        "JOBGATE_GOOGLE_DOCUMENT_AI_BASE_URL",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
    ),
    "azure_operation_location": (
        "azure_operation_location",
        "JOBGATE_AZURE_LANGUAGE_ENDPOINT",
        "AZURE_LANGUAGE_KEY",
    ),
    "vertex_veo": ("vertex_veo", "JOBGATE_VERTEX_VEO_BASE_URL", "GOOGLE_OAUTH_ACCESS_TOKEN"),
    "fal_queue": ("fal_queue", "JOBGATE_FAL_QUEUE_BASE_URL", "FAL_KEY"),
}
