"""A web site of a few fixed pages on 127.0.0.1, for tests that fetch, follow redirects or must not load a URL.

Each path answers with its `Reply`; `/go?to=URL` redirects (302) to URL, so a test chooses every hop in the URL it
fetches; any other path is a 404. Every request is in `requests` (with its headers), faults come from the shared
machinery.
"""

from __future__ import annotations

from tests.contract_servers import ContractServer, Reply


def html_page(html: bytes | str) -> Reply:
    """A 200 HTML page."""
    return Reply(200, html.encode() if isinstance(html, str) else html, "text/html; charset=utf-8")


class PageServer(ContractServer):
    """The pages in `routes` (path -> reply), redirects at `/go?to=URL`, 404 elsewhere."""

    name = "pages"

    def __init__(self, routes: dict[str, Reply] | None = None, port: int = 0) -> None:
        super().__init__(port)
        self.routes = dict(routes or {})

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if path == "/go" and "to" in self.query_params(query):
            return Reply(302, b"", "text/plain", headers={"Location": self.query_params(query)["to"]})
        return self.routes.get(path) or Reply(404, b"not found", "text/plain")
