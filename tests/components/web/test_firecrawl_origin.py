"""The Firecrawl client sends only to its API's origin, through the capped transport, by firecrawl-py's public API."""

import pytest

from components.resilience import SourceError
from components.web.firecrawl_access import FirecrawlAccess, api_origin, pinned_url

API = "https://firecrawl.quorvane.test"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://firecrawl.quorvane.test",
        "firecrawl.quorvane.test",
        "https://",
        "https://a.test/?x=1",
        "https://user:secret@a.test",
        "https://a.test/#top",
    ],
)
def test_an_api_url_that_is_not_a_plain_http_url_is_refused(url: str) -> None:
    with pytest.raises(SourceError, match="FIRECRAWL_API_URL must be an http"):
        FirecrawlAccess(api_key="fc-test", api_url=url, request_timeout_s=1, max_bytes=1000)


def test_paths_resolve_on_the_api_and_absolute_urls_stay_on_its_origin() -> None:
    assert api_origin(API + "/") == API
    assert pinned_url(API, "/v2/search") == API + "/v2/search"
    assert pinned_url(API, API + "/v2/crawl/7?skip=10") == API + "/v2/crawl/7?skip=10"
    for elsewhere in (
        "https://metadata.quorvane.test/v2/crawl/7",
        "//metadata.quorvane.test/x",
        "http://firecrawl.quorvane.test/v2/x",
        "https://firecrawl.quorvane.test:8443/v2/x",
    ):
        with pytest.raises(SourceError, match="outside its API's origin"):
            pinned_url(API, elsewhere)


def test_the_client_sends_through_the_capped_client_with_the_key() -> None:
    access = FirecrawlAccess(api_key="fc-test", api_url=API + "/", request_timeout_s=2, max_bytes=1000)
    http = access._client.http_client
    assert type(http).__name__ == "CappedHttpClient"
    assert (http.api_url, http.timeout, http.max_retries) == (API, 2, 1)
    assert http.headers() == {"Content-Type": "application/json", "Authorization": "Bearer fc-test"}
    assert "Authorization" not in FirecrawlAccess(None, API, 2, 1000)._client.http_client.headers()


def test_a_redirect_elsewhere_is_not_followed(firecrawl_server) -> None:
    """An API answering with a redirect (to another origin: here another port) is refused in one sentence; nothing
    is sent to where it points."""
    from tests.contract_servers import ContractServer, Reply

    class Redirecting(ContractServer):
        def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
            return Reply(307, b"", headers={"Location": firecrawl_server.url + path})

    with Redirecting() as redirecting:
        access = FirecrawlAccess(firecrawl_server.api_key, redirecting.base_url, request_timeout_s=5, max_bytes=10_000)
        with pytest.raises(SourceError, match="redirect"):
            access.search("quorvane", limit=2)
        assert len(redirecting.requests) == 1
    assert firecrawl_server.requests == []
