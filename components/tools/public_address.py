"""Which network addresses the product may fetch from: globally routable unicast addresses only.

The one address policy: `check_url` is applied before every URL the product fetches (the page fetcher, before every
connection and every redirect hop) or asks a service to fetch (URL ingestion and web scraping through Firecrawl). A
host is resolved once and every address it resolves to must be public; the caller then connects to the checked
address itself, so a DNS answer that changes in between cannot reach an inside address. IP literals in any notation
the C library accepts (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`, `[::ffff:127.0.0.1]`) are parsed here,
never resolved.

Refused: loopback, private (RFC 1918, unique-local fc00::/7, site-local fec0::/10), link-local, carrier-grade NAT
(100.64.0.0/10), multicast, reserved and unspecified addresses, benchmarking and documentation ranges, IPv4-mapped
and IPv4-compatible IPv6, 6to4 / Teredo / NAT64 addresses embedding an IPv4 address that is itself refused, and
the cloud metadata endpoints (some of which are public unicast, e.g. Azure's 168.63.129.16).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import unicodedata
from urllib.parse import SplitResult, urlsplit, urlunsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata and platform endpoints, refused even where the range itself would pass.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server (public unicast)
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS DNS over IPv6
    )
)
METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data"})

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class RefusedAddress(ValueError):
    """A host or address the fetcher may not reach; the message is one sentence for the analyst."""


def parse_literal(host: str) -> IPAddress | None:
    """`host` as an IP address when it is a literal in any notation (brackets, octal, hex, short forms), else None."""
    text = host.strip().strip("[]")
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(text)
    if text and all(part.strip() for part in text.split(".")) and text.replace(".", "").isalnum():
        try:
            # inet_aton takes the legacy forms (127.1, 0x7f.1, 2130706433, 0177.0.0.1) a resolver would accept.
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, with the mechanism's name."""
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        found += [("Teredo", server), ("Teredo", client)]
    if ip in _NAT64:
        found.append(("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    return found


def refused_reason(ip: IPAddress) -> str | None:
    """Why `ip` may not be fetched (a phrase such as 'a loopback address'), or None for a public unicast address."""
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return "an IPv4-mapped IPv6 address"
        if ip in _IPV4_COMPATIBLE and int(ip) > 1:
            return "an IPv4-compatible IPv6 address"
        for mechanism, inner in _embedded_ipv4(ip):
            inner_reason = refused_reason(inner)
            if inner_reason is not None:
                return f"a {mechanism} address embedding {inner_reason}"
        if ip.is_site_local:
            return "a site-local address"
        if ip in ipaddress.IPv6Network("fc00::/7"):
            return "a unique-local address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.IPv4Network("100.64.0.0/10"):
        return "a carrier-grade NAT address"
    if ip.is_private:
        return "a private address"
    return "a reserved address" if ip.is_reserved or not ip.is_global else None


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (the one place the fetcher asks DNS; tests replace it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def public_addresses(host: str, port: int) -> list[IPAddress]:
    """Every address of `host`, all of them public; `RefusedAddress` when any is not (or it does not resolve)."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if not name:
        raise RefusedAddress("The URL has no host.")
    if name in METADATA_HOSTS or name == "localhost" or name.endswith((".localhost", ".internal")):
        raise RefusedAddress(f"{host} is a local or metadata host name; fetching it is refused.")
    literal = parse_literal(name)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = [ipaddress.ip_address(address.split("%", 1)[0]) for address in resolve(name, port)]
        except (OSError, UnicodeError, ValueError):
            addresses = []
        if not addresses:
            raise RefusedAddress(f"The host {host!r} does not resolve.")
    for address in addresses:
        reason = refused_reason(address)
        if reason is not None:
            raise RefusedAddress(
                f"{host} resolves to {reason} ({address}); "
                "fetching it is refused unless ALLOW_PRIVATE_ADDRESSES is set."
            )
    return addresses


def _ambiguous(url: str) -> bool:
    """True when `url` holds a backslash, whitespace or a control character: parsers disagree on such a URL (WHATWG
    parsers, a scraping service's among them, read `\\` as `/`, Python's `urlsplit` does not), so the host checked
    here could differ from the host fetched there."""
    return any(char == "\\" or char.isspace() or unicodedata.category(char) == "Cc" for char in url)


def _split(url: str) -> SplitResult:
    """`url` split, or `RefusedAddress` when it cannot be read the same way by every URL parser."""
    if _ambiguous(url):
        raise RefusedAddress(
            f"{url[:200]!r} contains a backslash, whitespace or a control character; fetching it is refused."
        )
    try:
        return urlsplit(url)
    except ValueError:
        raise RefusedAddress(f"{url[:200]!r} is not a valid URL.") from None


def canonical_url(url: str) -> str:
    """`url` rebuilt from its parsed parts (scheme, host, explicit port, path, query, fragment; user info left out):
    what a service is asked to fetch, so that it reaches the host `check_url` checked. `RefusedAddress` as there."""
    parts = _split(url)
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:
        raise RefusedAddress(f"{url[:200]!r} has an invalid host or port.") from None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_url(url: str, allow_private: bool) -> str | None:
    """The address to connect to for `url` (None when private addresses are allowed: let the client resolve).

    `RefusedAddress` (one sentence) unless `url` is http(s) with a host whose every address is public; a URL with a
    backslash, whitespace or a control character anywhere is refused whatever its host.
    """
    parts = _split(url)
    if parts.scheme not in ("http", "https"):
        raise RefusedAddress(f"Only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}.")
    try:
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RefusedAddress(f"{url[:200]!r} has an invalid host or port.") from None
    if not host:
        raise RefusedAddress(f"{url[:200]!r} has no host.")
    if allow_private:
        return None
    return str(public_addresses(host, port)[0])
