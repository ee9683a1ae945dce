"""`FetchPage`: a plain HTTP page fetcher that reaches public addresses only and reads a bounded body.

Not the Firecrawl `scrape` of the web source: this fetches one page itself, checks every address the host
resolves to (and every redirect hop) before connecting (`components.tools.public_address`), streams the body up to
a byte cap, and stops the transfer at its deadline, so an endless or trickling body ends with the call.
"""

from __future__ import annotations

import codecs
import time
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from haystack import component

from components.resilience import SourceError
from components.resilience.budget import question_deadline
from components.resilience.transport import READ_SIZE, CappedBody
from components.serialization import InitParameterSerialization
from components.settings import default_setting, setting_or
from components.tools import public_address
from components.validation import positive, positive_int

MAX_REDIRECTS = 5
TIMEOUT_S: float = default_setting("tool_timeout_s")  # the TOOL_TIMEOUT_S setting's default
_TEXT_TYPES = ("text/", "application/xhtml", "application/xml", "application/json")
USER_AGENT = "research-assistant/0.1 (fetch_page tool)"


def check_url(url: str, allow_private: bool) -> str | None:
    """The address to connect to for `url` (None: let the client resolve, when private addresses are allowed).

    `SourceError` unless `url` is http(s) with a host whose every address is public (`public_address.check_url`).
    Connecting to the address checked here (not resolving again) keeps a DNS answer that changes in between from
    reaching an inside address.
    """
    try:
        return public_address.check_url(url, allow_private)
    except public_address.RefusedAddress as exc:
        raise SourceError(str(exc)) from None


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


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise SourceError("The page fetch ran out of time.")
    return left


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
class FetchPage(InitParameterSerialization):
    """Fetches one web page over HTTP(S) and returns its title and text, refusing non-public addresses.

    `allow_private_addresses=None` follows the ALLOW_PRIVATE_ADDRESSES setting and `max_bytes=None` the
    PAGE_MAX_BYTES setting. Every redirect hop is re-checked; the body is streamed and cut at `max_bytes`; the whole
    fetch (redirects included) ends by `timeout_s` or the question's deadline, whichever is first.

    Usage:
    ```python
    FetchPage().run(url="https://example.org/")["text"]
    ```
    """

    def __init__(
        self,
        allow_private_addresses: bool | None = None,
        timeout_s: float = TIMEOUT_S,
        max_chars: int = 50_000,
        max_bytes: int | None = None,
    ) -> None:
        positive("timeout_s", timeout_s)
        # None: ALLOW_PRIVATE_ADDRESSES and PAGE_MAX_BYTES as the tool is built; `to_dict` writes the values used.
        self.allow_private_addresses = bool(setting_or(allow_private_addresses, "allow_private_addresses"))
        self.timeout_s = timeout_s
        self.max_chars = positive_int("max_chars", max_chars)
        self.max_bytes = positive_int("max_bytes", setting_or(max_bytes, "page_max_bytes"))

    @component.output_types(url=str, final_url=str, title=str, text=str, content_type=str, truncated=bool)
    def run(self, url: str) -> dict[str, Any]:
        """Fetch `url`.

        :param url: the http(s) URL of a public web page.

        :returns: `url` asked, `final_url` after redirects, `title`, `text` (at most `max_chars`), `content_type`,
            `truncated`.
        """
        asked = target = (url or "").strip()
        if not target:
            raise SourceError("The URL is empty.")
        allow_private = self.allow_private_addresses
        deadline = min(d for d in (time.monotonic() + self.timeout_s, question_deadline()) if d is not None)
        with httpx.Client(follow_redirects=False, headers={"User-Agent": USER_AGENT}) as client:
            for _ in range(MAX_REDIRECTS + 1):
                request_url, headers, extensions = _pinned_request(target, check_url(target, allow_private))
                extensions["timeout"] = httpx.Timeout(_left(deadline)).as_dict()
                with client.stream("GET", request_url, headers=headers, extensions=extensions) as response:
                    if response.is_redirect and response.headers.get("Location"):
                        target = urljoin(target, response.headers["Location"])
                        continue
                    response.raise_for_status()
                    content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
                    if content_type and not content_type.startswith(_TEXT_TYPES):
                        raise SourceError(f"The page is {content_type}, not text or HTML.")
                    body, cut = self._read(response, deadline)
                break
            else:
                raise SourceError(f"More than {MAX_REDIRECTS} redirects.")
        if content_type in ("text/html", "application/xhtml+xml") or body.lstrip().lower().startswith(
            ("<!doctype", "<html")
        ):
            title, text = page_text(body)
        else:
            title, text = "", body
        return {
            "url": asked,
            "final_url": target,
            "title": title,
            "text": text[: self.max_chars],
            "content_type": content_type,
            "truncated": cut or len(text) > self.max_chars,
        }

    def _read(self, response: httpx.Response, deadline: float) -> tuple[str, bool]:
        """The body as text, at most `max_bytes`, read before `deadline`; (text, whether it was cut short)."""
        limit = self.max_bytes
        decoder = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
        # Each read waits at most until the deadline (the client's timeout is what was left when the request went
        # out); past the deadline or the cap the transfer stops and the connection closes with the `with` block.
        body = CappedBody(response.iter_bytes(READ_SIZE), limit, deadline)
        parts = [decoder.decode(piece) for piece in body]
        if body.cut == "time" and body.size == 0:
            raise SourceError(f"The page sent nothing within {self.timeout_s:g} s.")
        parts.append(decoder.decode(b"", final=True))
        return "".join(parts), body.cut is not None
