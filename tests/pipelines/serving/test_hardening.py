"""The server's request check and response redaction, on a small Starlette app in-process."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from components.redaction import StreamRedactor
from components.settings import reload_settings
from pipelines.serving.hardening import RedactingResponseMiddleware, RequestCheckMiddleware

KEY = "sk-MARKER-hardening-1"


async def echo(request: Request) -> JSONResponse:
    body = await request.json()
    return JSONResponse({"echo": body, "note": f"upstream said the key {KEY} is wrong"})


async def stream(request: Request) -> StreamingResponse:
    async def pieces():  # noqa: ANN202
        yield f"data: first piece with {KEY}\n\n".encode()
        yield b"data: second piece\n\n"

    return StreamingResponse(pieces(), media_type="text/event-stream")


async def stream_split(request: Request) -> StreamingResponse:
    """The key sent four characters at a time, as `/v1/chat/completions` streams an answer."""
    text = f"data: the key is {KEY}, the key.\n\ndata: [DONE]\n\n"

    async def pieces():  # noqa: ANN202
        for start in range(0, len(text), 4):
            yield text[start : start + 4].encode()

    return StreamingResponse(pieces(), media_type="text/event-stream")


@pytest.fixture()
def client(monkeypatch) -> TestClient:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    reload_settings()
    app = Starlette(
        routes=[
            Route("/echo", echo, methods=["POST"]),
            Route("/stream", stream, methods=["POST"]),
            Route("/stream-split", stream_split, methods=["POST"]),
        ]
    )
    app.add_middleware(RedactingResponseMiddleware)
    app.add_middleware(RequestCheckMiddleware, max_bytes=10_000)
    yield TestClient(app)
    monkeypatch.undo()
    reload_settings()


def test_valid_requests_pass_through_and_responses_are_redacted(client: TestClient) -> None:
    response = client.post("/echo", json={"question": "Grüße, naïve café \U0001f600"})
    assert response.status_code == 200
    assert response.json()["echo"] == {"question": "Grüße, naïve café \U0001f600"}
    assert KEY not in response.text and "[redacted]" in response.text
    assert int(response.headers["content-length"]) == len(response.content)


def test_streamed_responses_are_redacted_piece_by_piece(client: TestClient) -> None:
    response = client.post("/stream", json={})
    assert response.status_code == 200 and KEY not in response.text and "second piece" in response.text


def test_a_key_split_across_streamed_pieces_is_redacted_whole(client: TestClient) -> None:
    response = client.post("/stream-split", json={})
    assert response.status_code == 200
    assert response.text == "data: the key is [redacted], the key.\n\ndata: [DONE]\n\n"


def test_the_stream_redactor_holds_back_only_what_could_start_a_secret() -> None:
    redactor = StreamRedactor([KEY])
    assert redactor.feed("plain text sk-MAR") == "plain text "  # "sk-MAR" could be the key's start: held
    assert redactor.feed("KER-hard") == ""
    assert redactor.feed("ening-1 done sk-") == "[redacted] done "
    assert redactor.feed("x") == "sk-x"  # "sk-x" cannot grow into the key: passed on
    assert redactor.feed(" sk-MAR") == " "
    assert redactor.flush() == "sk-MAR"  # the text ended: not the key
    assert redactor.feed("sk-MARKER-har") == "" and redactor.flush() == "[redacted]"  # a key cut by the end


@pytest.mark.parametrize(
    "pieces",
    [
        ["cannot reach postgres://analyst:s3cr", "et-pw@db.internal/kb"],
        ["cannot reach postgres:", "//analyst:s3cret-pw@db.internal/kb"],
        ["cannot reach postgres://analyst:s3cret-pw", "@db.internal/kb"],
    ],
)
def test_a_urls_password_split_across_pieces_is_redacted(pieces: list[str]) -> None:
    """A connection string the settings do not name (no secret is configured) still loses its password when a
    stream splits it; a URL without credentials passes on as it comes."""
    redactor = StreamRedactor([])
    streamed = "".join(redactor.feed(piece) for piece in pieces) + redactor.flush()
    assert "s3cret" not in streamed and "s3cr" not in streamed
    assert streamed.startswith("cannot reach postgres://analyst:") and streamed.endswith("@db.internal/kb")
    plain = StreamRedactor([])
    assert plain.feed("see https://example.org/a ") == "see https://example.org/a "


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"question": "\\ud800"}', "question"),
        ('{"filters": {"ids": ["ok", "\\udfff x"]}}', "filters.ids[1]"),
        ('{"messages": [{"role": "user", "content": "a\\ud83d"}]}', "messages[0].content"),
    ],
)
def test_lone_surrogates_are_a_422_naming_the_field(client: TestClient, body: str, field: str) -> None:
    response = client.post("/echo", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field} holds an invalid character")


def test_a_surrogate_pair_is_valid(client: TestClient) -> None:
    response = client.post("/echo", content='{"q": "\\ud83d\\ude00"}', headers={"Content-Type": "application/json"})
    assert response.status_code == 200 and response.json()["echo"]["q"] == "\U0001f600"


def test_bodies_over_the_limit_are_a_413(client: TestClient) -> None:
    response = client.post("/echo", json={"question": "x" * 20_000})
    assert response.status_code == 413

    def chunks():  # no Content-Length: counted while it arrives
        for _ in range(30):
            yield b" " * 1_000

    response = client.post("/echo", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
