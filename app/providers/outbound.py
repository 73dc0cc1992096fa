"""The gateway's outbound HTTP client: provider calls and completion callbacks.

One `httpx2.AsyncClient` per process, with httpx2's defaults (environment proxies,
TLS from the OS store, `SSL_CERT_FILE`) and one change in how its pool checks idle
connections.

Before every request is assigned, and again as each one ends, httpcore2's pool asks
each idle keep-alive connection whether the server closed it
(`get_extra_info("is_readable")`). Under anyio every such question builds the socket's
whole attribute map, `getpeername` included, before the `poll` that answers it; with
a few dozen idle connections that was about 5% of the gateway's CPU under load
(`bench/end_to_end.py --py-spy`). `SocketCheckingBackend` wraps the anyio backend's
streams so that the question is a `poll` on the socket kept at connect time; reading,
writing, TLS and every other attribute go to the wrapped stream unchanged.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
from httpcore2._utils import is_socket_readable

from app.core.ssrf import Resolver

HTTP_LIMITS = httpx2.Limits(max_connections=200, max_keepalive_connections=50)
# httpcore2's own check (a `poll` of the socket; a socket that is gone counts as
# readable, as the next read returns b""), called here with the socket kept at connect.
is_readable = is_socket_readable


class CheckedStream(httpcore2.AsyncNetworkStream):
    """A connection's stream that answers "is_readable" from the socket it kept."""

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner
        self._sock: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return CheckedStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return is_readable(self._sock)
        return self._inner.get_extra_info(info)


class SocketCheckingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's anyio backend, its streams wrapped in `CheckedStream`.

    Given a `resolver` (tests: names answered without outside DNS), a host name is
    resolved through it first; a name it cannot resolve fails as the system resolver's
    would, with httpcore2's `ConnectError` (nothing was sent)."""

    def __init__(self, resolver: Resolver | None = None) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self._resolver = resolver

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if self._resolver is not None and not _is_address(host):
            try:
                host = (await self._resolver(host, port))[0]
            except (OSError, IndexError) as exc:
                raise httpcore2.ConnectError(f"cannot resolve {host!r}: {exc}") from exc
        stream = await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return CheckedStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options
        )
        return CheckedStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class _Transport(httpx2.AsyncHTTPTransport):
    """httpx2's transport with its direct (unproxied) pool on `SocketCheckingBackend`.

    httpx2 takes no network backend, so the pool it built is replaced by the same pool
    built with one (`tests/unit/test_outbound.py` fails if httpx2 stops keeping it in
    `_pool`)."""

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | str | bool,
        cert: Any,
        trust_env: bool,
        http1: bool,
        http2: bool,
        limits: httpx2.Limits,
        resolver: Resolver | None = None,
    ) -> None:
        # One SSL context (loading the CA store once), for httpx2's pool and its replacement.
        ssl_context = httpx2.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)
        super().__init__(
            verify=ssl_context, trust_env=trust_env, http1=http1, http2=http2, limits=limits
        )
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=http1,
            http2=http2,
            network_backend=SocketCheckingBackend(resolver),
        )


class OutboundClient(httpx2.AsyncClient):
    """`httpx2.AsyncClient` whose default transport is `_Transport`; proxies from the
    environment keep httpx2's own transports (built in `_init_proxy_transport`)."""

    def __init__(self, *, resolver: Resolver | None = None, **kwargs: Any) -> None:
        self._jobgate_resolver = resolver  # read by _init_transport, called by __init__
        super().__init__(**kwargs)

    def _init_transport(
        self,
        verify: ssl.SSLContext | str | bool = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = HTTP_LIMITS,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> httpx2.AsyncBaseTransport:
        if transport is not None:
            return transport
        return _Transport(
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            limits=limits,
            resolver=self._jobgate_resolver,
        )


def outbound_client(
    transport: httpx2.AsyncBaseTransport | None = None, *, resolver: Resolver | None = None
) -> httpx2.AsyncClient:
    """The process's client for provider calls and callbacks (`transport`: tests' fakes;
    `resolver`: tests' names, answered without outside DNS)."""
    return OutboundClient(limits=HTTP_LIMITS, transport=transport, resolver=resolver)
