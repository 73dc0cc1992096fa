"""`/docs` works offline: the page and every asset it loads come from the gateway itself
(app/health/api_docs.py), and the Swagger UI it loads can read the OpenAPI document."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from swagger_ui_bundle import swagger_ui_path

from tests.conftest import Gateway


class _Refs(HTMLParser):
    """Every src and href in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]


async def test_the_docs_page_references_no_other_host_and_its_assets_are_served(
    gateway: Gateway,
) -> None:
    page = await gateway.http.get("/docs")
    assert page.status_code == 200
    html = page.text
    parser = _Refs()
    parser.feed(html)
    assert parser.refs, html
    for ref in parser.refs:
        assert ref.startswith("/") and not ref.startswith("//"), ref
        asset = await gateway.http.get(ref)
        assert asset.status_code == 200, ref
        assert len(asset.content) > 100, ref
    # No URL to any host anywhere in the page (scripts included), and no validator badge.
    assert re.findall(r"https?://", html) == [], re.findall(r"https?://\S+", html)
    assert "validatorUrl" in html and "null" in html
    assert "'/openapi.json'" in html or '"/openapi.json"' in html
    script = (await gateway.http.get("/docs/assets/swagger-ui-bundle.js")).text
    assert "SwaggerUIBundle" in script
    # Swagger UI 5 reads OpenAPI 3.1, which FastAPI writes; version 4 shows no operations.
    assert (await gateway.http.get("/openapi.json")).json()["openapi"].startswith("3.1")
    assert Path(str(swagger_ui_path)).name.startswith("swagger-ui-5.")


async def test_redoc_from_a_cdn_is_not_offered(gateway: Gateway) -> None:
    assert (await gateway.http.get("/redoc")).status_code == 404
