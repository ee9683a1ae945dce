"""Which proxy a request goes through, by the environment's HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY.

httpx reads these only when it makes its own transport, so a client given `CappedTransport` would lose them; the
transport reads them here instead. The variables are read by the standard library's `urllib.request.getproxies()`
(a lower-case name wins over its upper-case twin), and a URL's proxy is chosen as httpx's default client chooses it:

- NO_PROXY first. `*` sends everything directly. Any other comma-separated entry is a host name, an IP address or
  an IP range in CIDR form (`10.0.0.0/8`, `fd00::/8`), each optionally with a port (`quorvane.test:8443`,
  `[::1]:8080`) or a scheme (`http://quorvane.test`), compared case-insensitively. A host name covers itself and
  every name under it (`quorvane.test` covers `api.quorvane.test` but not `notquorvane.test`); with a leading dot
  (`.quorvane.test`, or `*.quorvane.test`) only the names under it. A URL matched by an entry is sent directly.
- Then the scheme's own proxy (HTTP_PROXY for http://, HTTPS_PROXY for https://), then ALL_PROXY. A proxy written
  without a scheme (`127.0.0.1:3128`) is an http:// proxy.

Where this deliberately differs from httpx 0.28's own reading: a CIDR range covers every address in it (httpx
compares the host with the range's first address only); an entry's port also matches a URL that leaves the scheme's
default port implicit (`quorvane.test:443` covers `https://quorvane.test/`; httpx only `https://quorvane.test:443/`);
`localhost` covers the names under it like any host name (httpx: `localhost` itself only).

Usage:
```python
proxies = EnvironmentProxies.from_environment()
proxies.proxy_for("https://api.quorvane.test/v1")  # "http://127.0.0.1:3128", or None: directly
```
"""

from __future__ import annotations

import ipaddress
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class NoProxyEntry:
    """One NO_PROXY entry: a host name (`network` None) or an IP range, with an optional scheme and port."""

    host: str = ""
    network: IPNetwork | None = None
    subdomains_only: bool = False
    scheme: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> NoProxyEntry | None:
        """The entry written as `text` (None when it names nothing: empty, or a port that is not a number)."""
        text = text.strip().lower()
        scheme = None
        if "://" in text:
            scheme, text = text.split("://", 1)
            text = text.rstrip("/")
        host, port = text, None
        if text.startswith("["):  # [IPv6 address or range], optionally :port
            host, _, rest = text[1:].partition("]")
            if rest:
                if not rest.startswith(":") or not rest[1:].isdigit():
                    return None
                port = int(rest[1:])
        elif text.count(":") == 1:  # name:port or IPv4:port (a bare IPv6 address has several colons)
            host, port_text = text.split(":")
            if not port_text.isdigit():
                return None
            port = int(port_text)
        try:
            return cls(network=ipaddress.ip_network(host, strict=False), scheme=scheme, port=port)
        except ValueError:
            pass
        subdomains_only = host.startswith((".", "*."))
        name = host.removeprefix("*").removeprefix(".").rstrip(".")
        if not name or "*" in name:
            return None
        return cls(host=name, subdomains_only=subdomains_only, scheme=scheme, port=port)

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        """Whether a URL with this (lower-case) scheme, host and port (explicit or the scheme's default) is covered."""
        if self.scheme is not None and self.scheme != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            try:
                return ipaddress.ip_address(host) in self.network
            except ValueError:
                return False
        return host.endswith(f".{self.host}") or (host == self.host and not self.subdomains_only)


@dataclass(frozen=True)
class EnvironmentProxies:
    """The proxies by scheme (`http`, `https`, `all`) and the NO_PROXY entries; `bypass_all` for NO_PROXY=*."""

    proxies: Mapping[str, str] = field(default_factory=dict)
    no_proxy: tuple[NoProxyEntry, ...] = ()
    bypass_all: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> EnvironmentProxies:
        """From `urllib.request.getproxies()`'s form: {"http": url, "https": url, "all": url, "no": "a,b"}."""
        proxies = {
            scheme: url if "://" in url else f"http://{url}"
            for scheme in ("http", "https", "all")
            if (url := settings.get(scheme, "").strip())
        }
        written = [entry.strip() for entry in settings.get("no", "").split(",")]
        if "*" in written:
            return cls(bypass_all=True)
        entries = tuple(entry for entry in map(NoProxyEntry.parse, written) if entry is not None)
        return cls(proxies=proxies, no_proxy=entries)

    @classmethod
    def from_environment(cls) -> EnvironmentProxies:
        """The proxies of the process's environment (on macOS and Windows also the system's, as httpx reads them)."""
        return cls.from_settings(urllib.request.getproxies())

    def urls(self) -> set[str]:
        """Every proxy a request may go through."""
        return set() if self.bypass_all else set(self.proxies.values())

    def proxy_for(self, url: httpx.URL | str) -> str | None:
        """The proxy URL a request to `url` goes through (None: directly)."""
        if self.bypass_all or not self.proxies:
            return None
        url = httpx.URL(url)
        scheme = url.scheme.lower()
        host = url.host.lower().rstrip(".")
        port = url.port if url.port is not None else DEFAULT_PORTS.get(scheme)
        if any(entry.matches(scheme, host, port) for entry in self.no_proxy):
            return None
        return self.proxies.get(scheme) or self.proxies.get("all")
