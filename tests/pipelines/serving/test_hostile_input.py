"""Bad input over HTTP is a 422 with one sentence, never a 5xx or a silent change: non-finite numbers, booleans as
numbers, NUL characters, bad dates, and URLs of inside addresses given to URL ingestion (never sent to Firecrawl)."""

from __future__ import annotations

import httpx
import pytest

from tests.pipelines.serving.conftest import RunningServer

pytestmark = pytest.mark.integration


def post_raw(server: RunningServer, path: str, body: str) -> httpx.Response:
    headers = {**server.headers, "Content-Type": "application/json"}
    return httpx.post(server.base_url + path, content=body.encode("ascii"), headers=headers, timeout=120)


NUMBER_FIELDS = [
    ("/research/run", '{"question": "Who won Super Bowl 50?", "top_k": VALUE}'),
    ("/documents/run", '{"limit": VALUE}'),
    ("/documents/run", '{"offset": VALUE}'),
    ("/entity_search/run", '{"query": "Denver Broncos", "limit": VALUE}'),
    ("/entity_relationships/run", '{"entity_name": "Denver Broncos", "depth": VALUE}'),
]


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize(("path", "body"), NUMBER_FIELDS)
def test_a_non_finite_number_is_a_422(server: RunningServer, path: str, body: str, value: str) -> None:
    response = post_raw(server, path, body.replace("VALUE", value))
    assert response.status_code == 422, response.text
    assert "not a finite number" in response.json()["detail"]


@pytest.mark.parametrize(("path", "body"), NUMBER_FIELDS)
def test_a_boolean_is_not_a_number(server: RunningServer, path: str, body: str) -> None:
    response = post_raw(server, path, body.replace("VALUE", "true"))
    assert response.status_code == 422, response.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/documents/run", '{"search": "Super\\u0000Bowl"}'),
        ("/research/run", '{"question": "Who won\\u0000 Super Bowl 50?"}'),
        ("/entity_search/run", '{"query": "Denver\\u0000"}'),
        ("/ingestion/run", '{"text": "a\\u0000b", "title": "nul"}'),
    ],
)
def test_a_nul_character_is_a_422_not_a_database_error(server: RunningServer, path: str, body: str) -> None:
    response = post_raw(server, path, body)
    assert response.status_code == 422, response.text
    assert "NUL character" in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/entity_timeline/run", {"entity_name": "Denver Broncos", "start_date": "2019-13-45"}),
        ("/entity_timeline/run", {"entity_name": "Denver Broncos", "end_date": "last tuesday-ish"}),
        ("/entity_timeline/run", {"entity_name": "Denver Broncos", "as_of": "2019-02-30"}),
        ("/entity_relationships/run", {"entity_name": "Denver Broncos", "as_of": "not a date"}),
        ("/entity_search/run", {"query": "Denver Broncos", "as_of": "2019-99"}),
        ("/research/run", {"question": "Who won Super Bowl 50?", "as_of": "2019-02-30"}),
        ("/ingestion/run", {"text": "Some text.", "title": "dated", "date": "2019-02-30"}),
    ],
)
def test_a_bad_date_is_a_422(server: RunningServer, path: str, body: dict) -> None:
    response = httpx.post(server.base_url + path, json=body, headers=server.headers, timeout=120)
    assert response.status_code == 422, response.text


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:5432/",
        "http://[::1]/",
        "http://10.0.0.1/admin",
        "http://0x7f.1/",
    ],
)
def test_url_ingestion_of_an_inside_address_is_refused(server: RunningServer, url: str) -> None:
    response = httpx.post(server.base_url + "/ingestion/run", json={"url": url}, headers=server.headers, timeout=60)
    assert response.status_code == 422, response.text
    assert "fetching it is refused" in response.json()["detail"]


@pytest.mark.parametrize(
    "content_type", [None, "Application/JSON", "APPLICATION/JSON; charset=utf-8", "application/x+JSON"]
)
@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/research/run", '{"question": "Who won Super Bowl 50?", "top_k": NaN}', "not a finite number"),
        ("/documents/run", '{"search": "Super\\u0000Bowl"}', "NUL character"),
    ],
)
def test_bad_json_is_checked_whatever_the_content_type_says(
    server: RunningServer, content_type: str | None, path: str, body: str, said: str
) -> None:
    """FastAPI reads a body as JSON whatever the case of its media type (and, if not strict, with none at all)."""
    headers = dict(server.headers)
    if content_type is not None:
        headers["Content-Type"] = content_type
    request = httpx.Request("POST", server.base_url + path, content=body.encode("ascii"), headers=headers)
    assert content_type is not None or "content-type" not in request.headers
    with httpx.Client(timeout=120) as client:
        response = client.send(request)
    assert response.status_code == 422, response.text
    assert said in response.json()["detail"], response.text


@pytest.mark.parametrize("offset", [2**63, 2**64 + 5, 10**9 + 1])
def test_an_offset_beyond_the_bound_is_a_422_naming_it(server: RunningServer, offset: int) -> None:
    response = post_raw(server, "/documents/run", f'{{"offset": {offset}}}')
    assert response.status_code == 422, response.text
    assert response.json()["detail"] == "offset must be between 0 and 1,000,000,000"


def test_the_largest_offset_allowed_is_an_empty_page(server: RunningServer) -> None:
    response = post_raw(server, "/documents/run", f'{{"offset": {10**9}}}')
    assert response.status_code == 200, response.text
    assert response.json()["result"]["documents"] == []
