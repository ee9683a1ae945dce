"""A MediaWiki Action API contract server (`GET /w/api.php`) for Wikipedia summaries, on 127.0.0.1.

It answers `action=query&prop=extracts|info&exintro&explaintext&redirects&inprop=url&titles=...` with
`formatversion=2` shapes: `{"batchcomplete": true, "query": {"normalized": [...], "redirects": [...], "pages":
[{"pageid", "ns", "title", "extract", "fullurl", ...}]}}`; a missing title is `{"ns": 0, "title": ..., "missing":
true}`, an invalid one `{"title": ..., "invalid": true, "invalidreason": ...}`. A bad `action` gets MediaWiki's
`{"error": {"code": "badvalue", "info": ...}}` with HTTP 200, as the real API does. Titles are normalised the
MediaWiki way (underscores to spaces, first letter upper case). The extracts are short texts written for tests.
Faults come from the shared machinery. Fixture `wikipedia_server`; manual run:
`python -m tests.contract_servers.wikipedia`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.contract_servers import ContractServer, Reply, contract_fixtures

ARTICLES: dict[str, tuple[int, str]] = {
    "Alan Turing": (
        1208,
        "Alan Turing was an English mathematician and computer scientist, written here for tests. "
        "He formalised computation with the Turing machine.",
    ),
    "Retrieval-augmented generation": (
        72997412,
        "Retrieval-augmented generation is a technique, summarised here "
        "for tests, in which a language model answers from retrieved "
        "documents.",
    ),
    "PostgreSQL": (23824, "PostgreSQL is a free and open-source relational database system, described here for tests."),
}
REDIRECTS = {"Turing": "Alan Turing", "RAG": "Retrieval-augmented generation", "Postgres": "PostgreSQL"}


def _normalise(title: str) -> str:
    text = " ".join(title.replace("_", " ").split())
    return text[:1].upper() + text[1:]


class WikipediaContractServer(ContractServer):
    """Three articles, three redirects, and the MediaWiki query shapes around them."""

    name = "wikipedia"
    malformed_content_type = "text/html"

    @property
    def api_url(self) -> str:
        """The WIKIPEDIA_API_URL for this server."""
        return f"{self.base_url}/w/api.php"

    def settings_lines(self) -> list[str]:
        return [f"MediaWiki contract server: WIKIPEDIA_API_URL={self.api_url} (Ctrl-C stops)"]

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if path != "/w/api.php":
            return Reply(404, b"<html><body>Not Found</body></html>", "text/html")
        params = self.query_params(query)
        if params.get("format") != "json":
            return Reply(200, b'<?xml version="1.0"?><api/>', "text/xml")
        if params.get("action") != "query":
            return Reply(
                200,
                {
                    "error": {
                        "code": "badvalue",
                        "info": f'Unrecognized value for parameter "action": {params.get("action")}.',
                    },
                    "servedby": "contract",
                },
                headers={"MediaWiki-API-Error": "badvalue"},
            )
        titles = [title for title in (params.get("titles") or "").split("|") if title]
        if len(titles) > 50:
            return Reply(200, {"error": {"code": "toomanyvalues", "info": "Too many values supplied for titles."}})
        result: dict[str, Any] = {}
        pages = []
        for raw in titles:
            title = _normalise(raw)
            if title != raw:
                result.setdefault("normalized", []).append({"fromencoded": False, "from": raw, "to": title})
            if any(char in title for char in "#<>[]{}|"):
                pages.append(
                    {
                        "title": raw,
                        "invalidreason": "The requested page title contains invalid characters.",
                        "invalid": True,
                    }
                )
                continue
            if params.get("redirects") is not None and title in REDIRECTS:
                result.setdefault("redirects", []).append({"from": title, "to": REDIRECTS[title]})
                title = REDIRECTS[title]
            if title not in ARTICLES:
                pages.append({"ns": 0, "title": title, "missing": True})
                continue
            pageid, extract = ARTICLES[title]
            page: dict[str, Any] = {
                "pageid": pageid,
                "ns": 0,
                "title": title,
                "contentmodel": "wikitext",
                "pagelanguage": "en",
                "touched": "2026-01-01T00:00:00Z",
                "lastrevid": 1,
                "length": 1,
            }
            if "extracts" in params.get("prop", ""):
                page["extract"] = extract
            if "url" in params.get("inprop", ""):
                url = f"https://en.wikipedia.org/wiki/{quote(title.replace(' ', '_'))}"
                page.update(fullurl=url, editurl=url + "?action=edit", canonicalurl=url)
            pages.append(page)
        result["pages"] = pages
        return Reply(200, {"batchcomplete": True, "query": result})


wikipedia_server_session, wikipedia_server = contract_fixtures(WikipediaContractServer, "wikipedia")


if __name__ == "__main__":
    WikipediaContractServer.serve_by_hand("Serve the MediaWiki contract server on 127.0.0.1.", 8002)
