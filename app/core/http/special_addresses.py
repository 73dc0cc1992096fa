"""The IANA special-purpose address registries, as the callback guard reads them.

A copy of the "IANA IPv4 Special-Purpose Address Registry" and the "IANA IPv6
Special-Purpose Address Registry" (iana.org/assignments/iana-ipv4-special-registry and
iana-ipv6-special-registry), with each block's "Globally Reachable" column: True,
False, or None where the registry says N/A. Python's `ipaddress.is_global` follows an
older copy (it calls 192.0.0.8 and 3fff::/20 global; the registry does not), so the
guard reads this table instead. When the registry gains a block, add its row here and
a case to tests/unit/test_ssrf.py; docs/security.md says what the guard refuses.

`reachable(addr)` is the answer of the most specific block that holds the address and
gives one (a more specific True, such as an anycast service inside a False block,
wins; an N/A block defers to the one around it), or None when no block decides.
Pure.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Block:
    """One row of a registry: the block, its name (the reason a refusal gives), and
    its "Globally Reachable" column (None: N/A)."""

    network: IPNetwork
    name: str
    globally_reachable: bool | None


def _rows(*rows: tuple[str, str, bool | None]) -> tuple[Block, ...]:
    return tuple(Block(ipaddress.ip_network(net), name, g) for net, name, g in rows)


IPV4 = _rows(
    ("0.0.0.0/8", "this-network", False),  # RFC 791
    ("0.0.0.0/32", "unspecified", False),  # "this host on this network", RFC 1122
    ("10.0.0.0/8", "private", False),  # Private-Use, RFC 1918
    ("100.64.0.0/10", "shared", False),  # Shared Address Space (carrier-grade NAT), RFC 6598
    ("127.0.0.0/8", "loopback", False),  # RFC 1122
    ("169.254.0.0/16", "link-local", False),  # RFC 3927
    ("172.16.0.0/12", "private", False),  # RFC 1918
    ("192.0.0.0/24", "ietf-protocol-assignments", False),  # RFC 6890
    ("192.0.0.0/29", "ipv4-service-continuity", False),  # RFC 7335
    ("192.0.0.8/32", "ipv4-dummy", False),  # RFC 7600
    ("192.0.0.9/32", "pcp-anycast", True),  # RFC 7723
    ("192.0.0.10/32", "turn-anycast", True),  # RFC 8155
    ("192.0.0.170/31", "nat64-dns64-discovery", False),  # .170 and .171, RFC 8880
    ("192.0.2.0/24", "documentation", False),  # TEST-NET-1, RFC 5737
    ("192.31.196.0/24", "as112", True),  # RFC 7535
    ("192.52.193.0/24", "amt", True),  # RFC 7450
    # Deprecated 6to4 relay anycast (RFC 7526): N/A in the registry, refused here.
    ("192.88.99.0/24", "deprecated-6to4-relay", False),
    ("192.88.99.2/32", "6a44-relay-anycast", True),  # RFC 6751
    ("192.168.0.0/16", "private", False),  # RFC 1918
    ("192.175.48.0/24", "as112", True),  # Direct Delegation AS112 Service, RFC 7534
    ("198.18.0.0/15", "benchmarking", False),  # RFC 2544
    ("198.51.100.0/24", "documentation", False),  # TEST-NET-2, RFC 5737
    ("203.0.113.0/24", "documentation", False),  # TEST-NET-3, RFC 5737
    ("240.0.0.0/4", "reserved", False),  # RFC 1112
    ("255.255.255.255/32", "limited-broadcast", False),  # RFC 919
)

IPV6 = _rows(
    ("::1/128", "loopback", False),  # RFC 4291
    ("::/128", "unspecified", False),  # RFC 4291
    ("::ffff:0:0/96", "ipv4-mapped", False),  # RFC 4291
    ("64:ff9b::/96", "ipv4-ipv6-translation", True),  # RFC 6052
    ("64:ff9b:1::/48", "ipv4-ipv6-translation-local", False),  # RFC 8215
    ("100::/64", "discard-only", False),  # RFC 6666
    ("2001::/23", "ietf-protocol-assignments", False),  # RFC 2928
    ("2001::/32", "teredo", None),  # RFC 4380
    ("2001:1::1/128", "pcp-anycast", True),  # RFC 7723
    ("2001:1::2/128", "turn-anycast", True),  # RFC 8155
    ("2001:1::3/128", "dns-sd-srp-anycast", True),  # RFC 9665
    ("2001:2::/48", "benchmarking", False),  # RFC 5180
    ("2001:3::/32", "amt", True),  # RFC 7450
    ("2001:4:112::/48", "as112", True),  # RFC 7535
    ("2001:10::/28", "deprecated-orchid", None),  # RFC 4843
    ("2001:20::/28", "orchid-v2", True),  # RFC 7343
    ("2001:30::/28", "drone-remote-id", True),  # RFC 9374
    ("2001:db8::/32", "documentation", False),  # RFC 3849
    ("2002::/16", "6to4", None),  # RFC 3056
    ("2620:4f:8000::/48", "as112", True),  # RFC 7534
    ("3fff::/20", "documentation", False),  # RFC 9637
    ("5f00::/16", "srv6-sids", False),  # RFC 9602
    ("fc00::/7", "private", False),  # Unique-Local, RFC 4193
    ("fe80::/10", "link-local", False),  # Link-Local Unicast, RFC 4291
)

# Most specific first, so the first block that decides is the most specific one.
_BY_SPECIFICITY = {
    4: sorted(IPV4, key=lambda b: -b.network.prefixlen),
    6: sorted(IPV6, key=lambda b: -b.network.prefixlen),
}


def reachable(addr: IPAddress) -> tuple[bool, str] | None:
    """(globally reachable, the block's name) from the most specific block holding
    `addr` that gives an answer; None when the registry does not decide."""
    for block in _BY_SPECIFICITY[addr.version]:
        if block.globally_reachable is not None and addr in block.network:
            return block.globally_reachable, block.name
    return None
