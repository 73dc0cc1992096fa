"""The OpenAPI document names the providers and kinds this gateway is configured with.

They come from the provider profiles (built-in ones and `JOBGATE_PROFILES_DIR`)
whose credentials are configured, so they are filled in when the document is first
built: an agent or a test generator reading `/openapi.json` sees the values a create
may name instead of "any string", which would answer 422 `unknown_provider`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from app.core.config import Settings
from app.providers.language.loader import load_profiles


def describe_targets(schema: dict[str, Any], settings: Settings) -> None:
    """Add the configured providers and kinds to the create request's schema, in place."""
    env = settings.provider_env()
    profiles = {
        name: p
        for name, p in load_profiles(settings.profiles_dir, env).items()
        if p.unavailable(env) is None  # a create naming it would answer 422 provider_unavailable
    }
    create = schema["components"]["schemas"]["CreateOperationRequest"]["properties"]
    create["provider"]["enum"] = sorted(profiles)
    create["kind"]["enum"] = sorted({kind for p in profiles.values() for kind in p.kinds})
    create["kind"]["description"] = "; ".join(
        f"{name}: {', '.join(sorted(p.kinds))}" for name, p in sorted(profiles.items())
    )


def install(app: FastAPI, settings: Settings) -> None:
    """Build the document once, with the targets, whenever it is first asked for."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            describe_targets(build(), settings)
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
