"""The gateway's outbound HTTP client: provider calls and completion callbacks.

One `httpx2.AsyncClient` per process, with httpx2's defaults (environment proxies,
TLS from the OS store, `SSL_CERT_FILE`) and its public pool settings (`HTTP_LIMITS`).
httpcore2's pool checks an idle keep-alive connection before reusing it, so a
connection the server closed is never reused (tests/unit/test_outbound.py).

Given a `resolver` (tests: names answered without outside DNS), `ResolvingTransport`
sends each request to the address the resolver gives, the name kept in the `Host`
header and as the TLS server name (httpcore2's public `sni_hostname` extension), as
`app/core/http/ssrf.py`'s `pin` does for callbacks.
"""

from __future__ import annotations

import ipaddress

import httpx2

from app.core.http.ssrf import Resolver

HTTP_LIMITS = httpx2.Limits(max_connections=200, max_keepalive_connections=50)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class ResolvingTransport(httpx2.AsyncBaseTransport):
    """httpx2's transport, each host name first resolved through `resolver`; a name it
    cannot resolve fails as the system resolver's would, with `ConnectError` (nothing
    was sent)."""

    def __init__(self, resolver: Resolver, limits: httpx2.Limits = HTTP_LIMITS) -> None:
        self._resolver = resolver
        self._inner = httpx2.AsyncHTTPTransport(limits=limits)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        if not _is_address(host):
            port = request.url.port or (443 if request.url.scheme == "https" else 80)
            try:
                address = (await self._resolver(host, port))[0]
            except (OSError, IndexError) as exc:
                raise httpx2.ConnectError(
                    f"cannot resolve {host!r}: {exc}", request=request
                ) from exc
            request.url = request.url.copy_with(host=address)
            request.extensions = {**request.extensions, "sni_hostname": host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def outbound_client(
    transport: httpx2.AsyncBaseTransport | None = None, *, resolver: Resolver | None = None
) -> httpx2.AsyncClient:
    """The process's client for provider calls and callbacks (`transport`: tests' fakes;
    `resolver`: tests' names, answered without outside DNS)."""
    if transport is None and resolver is not None:
        transport = ResolvingTransport(resolver)
    return httpx2.AsyncClient(limits=HTTP_LIMITS, transport=transport)
