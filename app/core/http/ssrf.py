"""Refuse callback URLs that would make the gateway call into its own network (SSRF).

The host is resolved and EVERY address is checked: a name with one public and
one private address is refused, since the connection may use either. The check
runs at create time and again before each delivery (the name may have been
re-pointed since). A delivery then connects to the address it checked (`pin`):
the URL it sends goes to that IP, with the name kept in the `Host` header and as
the TLS server name, so a resolver that answers differently the second time (DNS
rebinding) is never asked a second time. Redirects are never followed either.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2

from app.core.http import special_addresses
from app.core.http.errors import Invalid

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]


class CallbackForbidden(Exception):
    """The URL may not be called; the message says why (no secrets, just the host)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host` (non-blocking)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # RFC 4291 (deprecated) ::a.b.c.d


def embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries to (IPv4-mapped, 6to4, NAT64,
    IPv4-compatible), or None. Each is a way to reach that IPv4 host."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:  # 2002:AABB:CCDD::/48 is the 6to4 site of AA.BB.CC.DD
        return addr.sixtofour
    if addr in NAT64 or (addr in IPV4_COMPATIBLE and int(addr) > 1):  # not :: or ::1
        return ipaddress.IPv4Address(int(addr) & 0xFFFF_FFFF)
    return None


MULTICAST = (ipaddress.ip_network("224.0.0.0/4"), ipaddress.ip_network("ff00::/8"))
SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")  # deprecated (RFC 3879), still routed in sites
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")  # RFC 4291: all the IPv6 the internet routes


def forbidden_reason(addr: IPAddress) -> str | None:
    """Why an address is not a public destination, or None when it is.

    The IANA special-purpose registries decide (`special_addresses`), with four refusals
    of our own on top: multicast (not a host), IPv6 site-local, IPv6 outside global
    unicast, and the NAT64 prefix (its translator is some network's own; where it leads
    cannot be known from here). An IPv6 form that carries an IPv4 address is judged by
    that address first."""
    if isinstance(addr, ipaddress.IPv6Address) and (inner := embedded_ipv4(addr)) is not None:
        # ::ffff:127.0.0.1, 2002:7f00:1::1, 64:ff9b::7f00:1: loopback in disguise.
        why = forbidden_reason(inner)
        if why is not None or addr.ipv4_mapped is not None:
            return why
    if any(addr in net for net in MULTICAST if net.version == addr.version):
        return "multicast"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr in SITE_LOCAL:
            return "site-local"
        if addr in NAT64:
            return "nat64"
    said = special_addresses.reachable(addr)
    if said is not None:
        return None if said[0] else said[1]
    if isinstance(addr, ipaddress.IPv6Address) and addr not in GLOBAL_UNICAST:
        return "not-global-unicast"
    return None


async def check_url(url: str, *, resolver: Resolver | None = None) -> list[IPAddress]:
    """Every address of the URL's host, all public; else `CallbackForbidden`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallbackForbidden("callback URLs must be absolute http(s) URLs")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise CallbackForbidden("the callback URL has an invalid port") from None
    addresses = await _addresses(host, port, resolver or system_resolver)
    if not addresses:
        raise CallbackForbidden(f"host {host!r} does not resolve")
    for addr in addresses:
        why = forbidden_reason(addr)
        if why is not None:
            raise CallbackForbidden(f"host {host!r} resolves to a {why} address ({addr})")
    return addresses


@dataclass(frozen=True)
class Pinned:
    """A request to a checked URL that cannot be re-resolved: `url` names the checked
    address itself; `host` (the `Host` header) and `extensions` (the TLS server name)
    keep the name, so the receiver and its certificate see the URL as given."""

    url: str
    host: str
    extensions: dict[str, Any] = field(default_factory=dict)


async def pin(url: str, *, resolver: Resolver | None = None) -> Pinned:
    """Check `url` (as `check_url`) and aim it at the first checked address."""
    addresses = await check_url(url, resolver=resolver)
    try:
        given = httpx2.URL(url)
    except httpx2.InvalidURL:
        raise CallbackForbidden("the callback URL is not a valid URL") from None
    name = given.raw_host.decode("ascii")  # IDNA-encoded, as the client would send it
    host = f"[{name}]" if ":" in name else name
    if given.port is not None:
        host += f":{given.port}"
    extensions: dict[str, Any] = {}
    if given.scheme == "https" and not _is_literal(name):
        extensions["sni_hostname"] = name  # the certificate is checked against the name
    return Pinned(str(given.copy_with(host=str(addresses[0]))), host, extensions)


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _addresses(host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass  # a name, not a literal: resolve it
    try:
        found = await resolver(host, port)
    except (OSError, UnicodeError):
        raise CallbackForbidden(f"host {host!r} does not resolve") from None
    # A scope id ("fe80::1%eth0") is not part of the address itself.
    return [ipaddress.ip_address(a.split("%", 1)[0]) for a in found]


async def check_callback_url(
    url: str, *, allow_private: bool, resolver: Resolver | None = None
) -> None:
    """The create-time check: 422 `callback_url_forbidden` unless allowed by settings."""
    if allow_private:
        return
    try:
        await check_url(url, resolver=resolver)
    except CallbackForbidden as exc:
        raise Invalid(
            "callback_url_forbidden",
            f"callback_url refused: {exc}. Callbacks go only to public addresses "
            "(an operator can allow private ones with JOBGATE_ALLOW_PRIVATE_CALLBACKS).",
            {"callback_url": url},
        ) from None
