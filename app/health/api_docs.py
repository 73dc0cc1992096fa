"""`/docs`: Swagger UI served from the installed `swagger_ui_bundle` package, never a CDN.

FastAPI's default page loads its scripts and styles from a CDN and its favicon from
another host, so on a machine without internet it is blank. Here the page is FastAPI's
own (`get_swagger_ui_html`) with every asset URL on this gateway, under
`/docs/assets/`. The package is swagger-ui-bundle-v2 (Swagger UI 5, which renders the
OpenAPI 3.1 document FastAPI writes; the original swagger-ui-bundle ships Swagger UI 4).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

ASSETS = "/docs/assets"


def install(app: FastAPI) -> None:
    """Serve `/docs` and its assets; the app must be built with `docs_url=None`."""
    app.mount(ASSETS, StaticFiles(directory=Path(str(swagger_ui_path))), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            # No validator badge: it would send the document's URL to validator.swagger.io.
            swagger_ui_parameters={"validatorUrl": None},
        )
