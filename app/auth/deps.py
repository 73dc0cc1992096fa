"""Who is calling. Until API keys land, `JOBGATE_AUTH=dev` maps every caller to `dev`."""

from __future__ import annotations

from fastapi import Request

from app.core.errors import ApiError

DEV_PRINCIPAL = "dev"


async def principal(request: Request) -> str:
    """The calling principal; idempotency keys and visibility are scoped to it."""
    settings = request.app.state.settings
    if settings.auth == "dev":
        return DEV_PRINCIPAL
    keys = getattr(request.app.state, "api_keys", None)
    auth = request.headers.get("authorization", "")
    if keys is not None and auth.lower().startswith("bearer "):
        who = await keys.authenticate(auth[7:].strip())
        if who is not None:
            return str(who)
    raise ApiError(
        401,
        "unauthorized",
        "An API key is required: send 'Authorization: Bearer "
        "<key>' (create one with `jobgate keys create`).",
    )
