"""`WikipediaSummary`: the lead section of a Wikipedia article through the MediaWiki Action API."""

from __future__ import annotations

from typing import Any

import httpx
from haystack import component

from components.resilience import RetryableError, SourceError
from components.resilience.errors import raise_for_busy
from components.resilience.transport import CappedTransport
from components.serialization import InitParameterSerialization
from components.settings import default_setting, setting_or
from components.validation import positive, positive_int

USER_AGENT = "research-assistant/0.1 (wikipedia_summary tool; https://github.com/)"
MAX_TITLE_CHARS = 255
TIMEOUT_S: float = default_setting("tool_timeout_s")  # the TOOL_TIMEOUT_S setting's default


@component
class WikipediaSummary(InitParameterSerialization):
    """Looks up an article by title (redirects followed) and returns its plain-text introduction and URL.

    Uses `action=query&prop=extracts|info` with `exintro`, `explaintext`, `redirects`, `formatversion=2`.
    `api_url=None` follows the WIKIPEDIA_API_URL setting. A missing article is `found: false`, not an error.

    Usage:
    ```python
    WikipediaSummary().run(title="Haystack (software)")["summary"]
    ```
    """

    def __init__(
        self,
        api_url: str | None = None,
        timeout_s: float = TIMEOUT_S,
        max_chars: int = 4000,
        max_response_bytes: int | None = None,
    ) -> None:
        if api_url is not None and not api_url.startswith(("http://", "https://")):
            raise ValueError("api_url must be an http(s) URL of a MediaWiki api.php")
        self.timeout_s = positive("timeout_s", timeout_s)
        self.max_chars = positive_int("max_chars", max_chars)
        # None: WIKIPEDIA_API_URL and UPSTREAM_MAX_BYTES as the tool is built; `to_dict` writes the values used.
        self.api_url = setting_or(api_url, "wikipedia_api_url")
        self.max_response_bytes = setting_or(max_response_bytes, "upstream_max_bytes")

    @component.output_types(title=str, summary=str, url=str, found=bool)
    def run(self, title: str) -> dict[str, Any]:
        """Summarise the article called `title`.

        :param title: the article's title, e.g. "Alan Turing" (redirects are followed).

        :returns: `title` (after normalisation and redirects), `summary` (plain text), `url`, `found`.
        """
        name = " ".join((title or "").split())
        if not name:
            raise SourceError("The article title is empty.")
        if len(name) > MAX_TITLE_CHARS or any(char in name for char in "#<>[]{}|"):
            raise SourceError(f"{name[:60]!r} is not a valid Wikipedia title.")
        params = {
            "action": "query",
            "format": "json",
            "formatversion": "2",
            "prop": "extracts|info",
            "inprop": "url",
            "exintro": "1",
            "explaintext": "1",
            "redirects": "1",
            "titles": name,
        }
        endpoint = self.api_url
        # Read through the capped transport: an endless answer stops at UPSTREAM_MAX_BYTES or the deadline.
        transport = CappedTransport(self.max_response_bytes, "Wikipedia")
        with httpx.Client(transport=transport, headers={"User-Agent": USER_AGENT}) as client:
            response = client.get(endpoint, params=params, timeout=self.timeout_s)
        raise_for_busy(response.status_code, response.headers, "Wikipedia")
        response.raise_for_status()
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and "error" in body:
            error = body["error"] if isinstance(body["error"], dict) else {}
            if error.get("code") in ("maxlag", "ratelimited"):
                raise RetryableError(f"Wikipedia is busy: {error.get('info', '')}", kind="rate_limited")
            raise SourceError(f"Wikipedia refused the request: {error.get('info') or error.get('code') or 'unknown'}.")
        pages = (body.get("query") or {}).get("pages") if isinstance(body, dict) else None
        if not isinstance(pages, list):
            raise RetryableError("Wikipedia sent a malformed response", kind="malformed")
        page = pages[0] if pages else {}
        if not page or page.get("missing") or page.get("invalid"):
            return {"title": page.get("title", name) if page else name, "summary": "", "url": "", "found": False}
        extract = str(page.get("extract") or "").strip()
        return {
            "title": str(page.get("title") or name),
            "summary": extract[: self.max_chars],
            "url": str(page.get("fullurl") or ""),
            "found": bool(extract),
        }
