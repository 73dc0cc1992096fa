"""The SSRF guard for callback URLs: every resolved address must be public."""

from __future__ import annotations

import ipaddress

import pytest

from app.core.http.errors import DomainError, as_api_error
from app.core.http.ssrf import (
    CallbackForbidden,
    check_callback_url,
    check_url,
    forbidden_reason,
    pin,
)


def resolver_for(*addresses: str):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


async def failing_resolver(host: str, port: int) -> list[str]:
    raise OSError("Name or service not known")


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fec0::1", "site-local"),
        ("feff::1", "site-local"),
        ("0.0.0.0", "unspecified"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("100.64.0.1", "shared"),
        ("224.0.0.1", "multicast"),
        # Python's is_global calls these global; the IANA registries do not.
        ("192.0.0.8", "ipv4-dummy"),
        ("3fff::1", "documentation"),
        ("3fff:fff:ffff::1", "documentation"),  # the last of 3fff::/20
        ("192.0.0.171", "nat64-dns64-discovery"),
        ("192.0.0.1", "ipv4-service-continuity"),
        ("192.0.0.200", "ietf-protocol-assignments"),
        ("192.0.2.10", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "limited-broadcast"),
        ("0.1.2.3", "this-network"),
        ("2001:db8::1", "documentation"),
        ("2001:2::1", "benchmarking"),
        ("2001::1", "ietf-protocol-assignments"),  # Teredo: N/A, decided by 2001::/23
        ("2001:10::1", "ietf-protocol-assignments"),  # deprecated ORCHID: N/A, the same
        ("5f00::1", "srv6-sids"),
        ("100::1", "discard-only"),
        ("64:ff9b:1::1", "ipv4-ipv6-translation-local"),  # RFC 8215
        ("ff02::1", "multicast"),
        ("4000::1", "not-global-unicast"),  # unallocated
        ("::ffff:192.0.0.8", "ipv4-dummy"),  # the mapped form of a refused IPv4
    ],
)
def test_non_public_addresses_are_named(address: str, why: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) == why


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "2606:4700:4700::1111",
        # A globally reachable block inside a refused one: the more specific row wins.
        "192.0.0.9",  # PCP anycast
        "192.0.0.10",  # TURN anycast
        "192.88.99.2",  # 6a44 relay anycast, inside the deprecated 6to4 relay block
        "2001:1::1",  # PCP anycast, inside 2001::/23
        "2001:4:112::1",  # AS112
        "2001:20::1",  # ORCHIDv2
        "3000::1",  # global unicast in no special block
        "3fff:1000::1",  # just past 3fff::/20
    ],
)
def test_public_addresses_pass(address: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) is None


async def test_literals_need_no_lookup() -> None:
    await check_url("https://93.184.216.34/hook", resolver=failing_resolver)
    with pytest.raises(CallbackForbidden, match="loopback"):
        await check_url("http://127.0.0.1:8080/hook", resolver=failing_resolver)


async def test_every_resolved_address_is_checked() -> None:
    await check_url("https://hooks.example/x", resolver=resolver_for("93.184.216.34"))
    mixed = resolver_for("93.184.216.34", "10.0.0.7")
    with pytest.raises(CallbackForbidden, match="private"):
        await check_url("https://hooks.example/x", resolver=mixed)
    scoped = resolver_for("fe80::1%eth0")
    with pytest.raises(CallbackForbidden, match="link-local"):
        await check_url("https://hooks.example/x", resolver=scoped)


async def test_unresolvable_or_odd_urls_are_refused() -> None:
    with pytest.raises(CallbackForbidden, match="does not resolve"):
        await check_url("https://nowhere.invalid/x", resolver=failing_resolver)
    with pytest.raises(CallbackForbidden, match="does not resolve"):
        await check_url("https://empty.example/x", resolver=resolver_for())
    with pytest.raises(CallbackForbidden):
        await check_url("ftp://93.184.216.34/x")
    with pytest.raises(CallbackForbidden):
        await check_url("https://93.184.216.34:99999/x")


async def test_localhost_is_resolved_by_the_system_and_refused() -> None:
    with pytest.raises(CallbackForbidden, match="loopback"):
        await check_url("http://localhost:8080/x")


async def test_create_time_check_is_a_422_unless_allowed() -> None:
    with pytest.raises(DomainError) as info:
        await check_callback_url("http://10.0.0.1/x", allow_private=False)
    err = as_api_error(info.value)  # the one place a domain refusal gets its HTTP status
    assert err.status == 422 and err.code == "callback_url_forbidden"
    await check_callback_url("http://10.0.0.1/x", allow_private=True)


# IPv6 forms that carry an IPv4 address: each reaches that IPv4 host, so each is judged by it.


async def test_6to4_wrapping_a_non_global_ipv4_is_refused() -> None:
    # 2002:WWXX:YYZZ::/48 is the 6to4 site of W.X.Y.Z: these are 169.254.169.254 and 127.0.0.1.
    with pytest.raises(CallbackForbidden, match="link-local"):
        await check_url("http://[2002:a9fe:a9fe::1]/", resolver=failing_resolver)
    with pytest.raises(CallbackForbidden, match="loopback"):
        await check_url("http://[2002:7f00:1::1]/", resolver=failing_resolver)
    assert forbidden_reason(ipaddress.ip_address("2002:a00:1::1")) == "private"  # 10.0.0.1
    assert forbidden_reason(ipaddress.ip_address("2002:808:808::1")) is None  # 8.8.8.8


async def test_nat64_is_refused() -> None:
    with pytest.raises(CallbackForbidden, match="loopback"):
        await check_url("http://[64:ff9b::7f00:1]/", resolver=failing_resolver)
    assert forbidden_reason(ipaddress.ip_address("64:ff9b::a9fe:a9fe")) == "link-local"
    # The well-known prefix is reserved, so even a public IPv4 behind it is refused.
    assert forbidden_reason(ipaddress.ip_address("64:ff9b::808:808")) is not None


async def test_ipv4_mapped_forms_of_non_global_ipv4_are_refused() -> None:
    with pytest.raises(CallbackForbidden, match="link-local"):
        await check_url("http://[::ffff:169.254.169.254]/", resolver=failing_resolver)
    assert forbidden_reason(ipaddress.ip_address("::ffff:a9fe:a9fe")) == "link-local"
    assert forbidden_reason(ipaddress.ip_address("::ffff:100.64.0.1")) == "shared"


async def test_ipv4_compatible_forms_of_non_global_ipv4_are_refused() -> None:
    with pytest.raises(CallbackForbidden, match="loopback"):
        await check_url("http://[::127.0.0.1]/", resolver=failing_resolver)
    assert forbidden_reason(ipaddress.ip_address("::a9fe:a9fe")) == "link-local"
    assert forbidden_reason(ipaddress.ip_address("::10.1.2.3")) == "private"


async def test_the_guard_refuses_the_registry_forms_offline() -> None:
    """Literal hosts, no lookup, nothing sent: the guard alone, on URL forms."""
    for url in ("http://192.0.0.8/x", "http://[3fff::1]:8443/x", "https://[::ffff:c000:8]/"):
        with pytest.raises(CallbackForbidden, match="resolves to a"):
            await check_url(url, resolver=failing_resolver)
    named = resolver_for("93.184.216.34", "3fff::42")  # one refused address is enough
    with pytest.raises(CallbackForbidden, match="documentation"):
        await check_url("https://hooks.example/x", resolver=named)


async def test_a_pinned_url_names_the_checked_address_and_keeps_the_name() -> None:
    found = await pin(
        "https://u:p@hooks.example:8443/x?t=1", resolver=resolver_for("93.184.216.34")
    )
    assert found.url == "https://u:p@93.184.216.34:8443/x?t=1"
    assert found.host == "hooks.example:8443"
    assert found.extensions == {"sni_hostname": "hooks.example"}  # TLS checks the name


async def test_pinning_ipv6_idna_and_literals() -> None:
    v6 = await pin("http://hooks.example/x", resolver=resolver_for("2606:4700:4700::1111"))
    assert v6.url == "http://[2606:4700:4700::1111]/x" and v6.host == "hooks.example"
    assert v6.extensions == {}  # plain http: no TLS name
    idn = await pin("https://bücher.example/x", resolver=resolver_for("93.184.216.34"))
    assert idn.host == "xn--bcher-kva.example"
    assert idn.extensions == {"sni_hostname": "xn--bcher-kva.example"}
    literal = await pin("https://[2606:4700:4700::1111]:444/x", resolver=failing_resolver)
    assert literal.host == "[2606:4700:4700::1111]:444" and literal.extensions == {}
    with pytest.raises(CallbackForbidden, match="site-local"):
        await pin("http://[fec0::1]/x", resolver=failing_resolver)
