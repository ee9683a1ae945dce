"""`FetchPage`: a plain HTTP page fetcher that refuses private, loopback and link-local addresses.

Not the Firecrawl `scrape` of the web source: this fetches one page itself, checks every address the host
resolves to (and every redirect hop) before connecting, and returns the page's readable text.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from haystack import component, default_from_dict, default_to_dict, logging

from components.resilience import SourceError

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5
_TEXT_TYPES = ("text/", "application/xhtml", "application/xml", "application/json")
USER_AGENT = "research-assistant/0.1 (fetch_page tool)"


def refused_address_reason(address: str) -> str | None:
    """Why `address` (an IP) may not be fetched, or None when it is a public address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return "a reserved address"
    return None


def check_url(url: str, allow_private: bool) -> str | None:
    """The address to connect to for `url` (None: let the client resolve, when private addresses are allowed).

    `SourceError` unless `url` is http(s) with a host whose every address may be fetched. Connecting to the address
    checked here (not resolving again) keeps a DNS answer that changes in between from reaching a private address.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise SourceError(f"Only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}.")
    host = parts.hostname
    if not host:
        raise SourceError(f"{url!r} has no host.")
    if allow_private:
        return None
    try:
        infos = socket.getaddrinfo(
            host, parts.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError):
        raise SourceError(f"The host {host!r} does not resolve.") from None
    addresses = [str(info[4][0]) for info in infos]
    for address in addresses:
        reason = refused_address_reason(address)
        if reason is not None:
            raise SourceError(
                f"{host} resolves to {reason}; fetching it is refused unless ALLOW_PRIVATE_ADDRESSES is set."
            )
    return addresses[0]


def _pinned_request(url: str, address: str | None) -> tuple[str, dict[str, str], dict[str, str]]:
    """(URL to request, extra headers, httpx extensions) that connect to `address` while naming the original host."""
    if address is None:
        return url, {}, {}
    parts = urlsplit(url)
    ip_host = f"[{address}]" if ":" in address else address
    netloc = ip_host if parts.port is None else f"{ip_host}:{parts.port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    host_header = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {}
    return pinned, {"Host": host_header}, extensions


def page_text(html: str) -> tuple[str, str]:
    """The title and readable text of an HTML page (scripts, styles and navigation dropped)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for tag in soup(["script", "style", "noscript", "nav", "footer", "header", "svg", "form"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    text = "\n".join(line.strip() for line in soup.get_text("\n").splitlines() if line.strip())
    return title, text


@component
class FetchPage:
    """Fetches one web page over HTTP(S) and returns its title and text, refusing non-public addresses.

    `allow_private_addresses=None` follows the ALLOW_PRIVATE_ADDRESSES setting. Every redirect is re-checked.

    Usage:
    ```python
    FetchPage().run(url="https://example.org/")["text"]
    ```
    """

    def __init__(
        self, allow_private_addresses: bool | None = None, timeout_s: float = 7.0, max_chars: int = 50_000
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if max_chars < 1:
            raise ValueError("max_chars must be positive")
        self.allow_private_addresses = allow_private_addresses
        self.timeout_s = timeout_s
        self.max_chars = max_chars

    def _allow_private(self) -> bool:
        if self.allow_private_addresses is not None:
            return self.allow_private_addresses
        from components.settings import get_settings

        return get_settings().allow_private_addresses

    @component.output_types(url=str, final_url=str, title=str, text=str, content_type=str, truncated=bool)
    def run(self, url: str) -> dict[str, Any]:
        """Fetch `url`.

        :param url: the http(s) URL of a public web page.

        :returns: `url` asked, `final_url` after redirects, `title`, `text` (at most `max_chars`), `content_type`,
            `truncated`.
        """
        target = (url or "").strip()
        if not target:
            raise SourceError("The URL is empty.")
        allow_private = self._allow_private()
        with httpx.Client(timeout=self.timeout_s, follow_redirects=False, headers={"User-Agent": USER_AGENT}) as client:
            for _ in range(MAX_REDIRECTS + 1):
                request_url, headers, extensions = _pinned_request(target, check_url(target, allow_private))
                response = client.get(request_url, headers=headers, extensions=extensions)
                if response.is_redirect and response.headers.get("Location"):
                    target = urljoin(target, response.headers["Location"])
                    continue
                response.raise_for_status()
                break
            else:
                raise SourceError(f"More than {MAX_REDIRECTS} redirects.")
        content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type and not content_type.startswith(_TEXT_TYPES):
            raise SourceError(f"The page is {content_type}, not text or HTML.")
        body = response.text
        if content_type in ("text/html", "application/xhtml+xml") or body.lstrip().lower().startswith(
            ("<!doctype", "<html")
        ):
            title, text = page_text(body)
        else:
            title, text = "", body
        return {
            "url": (url or "").strip(),
            "final_url": target,
            "title": title,
            "text": text[: self.max_chars],
            "content_type": content_type,
            "truncated": len(text) > self.max_chars,
        }

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            allow_private_addresses=self.allow_private_addresses,
            timeout_s=self.timeout_s,
            max_chars=self.max_chars,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FetchPage:
        return default_from_dict(cls, data)
