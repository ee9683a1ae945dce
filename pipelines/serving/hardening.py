"""ASGI middlewares that keep hostile requests and secrets out: a request check and response redaction.

`RequestCheckMiddleware` reads a request body once, up to `max_bytes` (413 beyond), and answers 422 with one
sentence when a JSON body holds a string that is not valid Unicode (a lone surrogate such as `\\ud800`, which would
otherwise fail deep inside a pipeline as a 500), a NUL character (which PostgreSQL refuses in text, and which would
silently switch off keyword search for a question) or a non-finite number (NaN, Infinity, 1e400).
`RedactingResponseMiddleware` passes every response body through `components.redaction.redact`, fixing
`Content-Length` where it changes; a streamed body goes through a `StreamRedactor`, which holds back the end of each
piece that could be the start of a secret until the next piece shows whether it is one.

Usage:
```python
app.add_middleware(RedactingResponseMiddleware)
app.add_middleware(RequestCheckMiddleware, max_bytes=16_000_000)
```
"""

from __future__ import annotations

import json
import math
from typing import Any

from haystack import logging

from components.redaction import StreamRedactor, redact

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]

DEFAULT_MAX_REQUEST_BYTES = 16_000_000


async def _reply(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _NotFinite(float):
    """A number JSON allows Python to read but no endpoint can use: NaN, Infinity, or one beyond a float (1e400)."""


def _number(text: str) -> float:
    value = float(text)
    return _NotFinite(value) if math.isinf(value) or math.isnan(value) else value


def _invalid_value(value: Any, where: str = "") -> str | None:
    """The one-sentence refusal of the first value in JSON data no endpoint can take, or None: a string that cannot
    be encoded as UTF-8 (a lone surrogate), a string holding a NUL character, a non-finite number."""
    name = where or "the body"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{name} holds an invalid character (a lone surrogate); send valid Unicode."
        if "\x00" in value:
            return f"{name} holds a NUL character; remove it."
        return None
    if isinstance(value, _NotFinite):
        return f"{name} is not a finite number (NaN, Infinity or out of range); send a finite number."
    if isinstance(value, dict):
        for key, item in value.items():
            found = _invalid_value(key, where) or _invalid_value(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _invalid_value(item, f"{where}[{index}]")
            if found:
                return found
    return None


def _parsed_as_json(content_type: bytes | None) -> bool:
    """Whether the endpoints will read a body of this content type as JSON: as FastAPI does, when it has none, or
    when its media type (in any case) is `application/json` or `application/<anything>+json`."""
    if not content_type or not content_type.strip():
        return True
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


class RequestCheckMiddleware:
    """Bounds request bodies and refuses JSON bodies holding invalid Unicode, before any endpoint sees them."""

    def __init__(self, app: Any, max_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _reply(send, 413, f"The request body is over {self.max_bytes:,} bytes.")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _reply(send, 413, f"The request body is over {self.max_bytes:,} bytes.")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _parsed_as_json(headers.get(b"content-type")):
            try:
                problem = _invalid_value(json.loads(body, parse_float=_number, parse_constant=_number))
            except (ValueError, RecursionError):
                problem = None  # malformed JSON: the endpoint's own validation answers
            if problem is not None:
                logger.info("Refused a request to {path}: {problem}", path=scope.get("path"), problem=problem)
                await _reply(send, 422, problem)
                return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class RedactingResponseMiddleware:
    """Redacts known secrets and URL passwords from every HTTP response body (JSON, text and event streams)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        whole = False  # a body with a declared length is held, redacted and sent with its new length
        held: list[bytes] = []
        streamed: StreamRedactor | None = None  # a streamed body: a secret split across pieces is caught whole

        async def redacting_send(message: Message) -> None:
            nonlocal start, whole, streamed
            if message["type"] == "http.response.start":
                start = message
                whole = any(key.lower() == b"content-length" for key, _ in message.get("headers", []))
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            more = message.get("more_body", False)
            if whole:
                held.append(message.get("body", b""))
                if more:
                    return
                body = _redact_bytes(b"".join(held))
                assert start is not None
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            if start is not None:
                await send(start)
                start = None
            streamed = streamed or StreamRedactor()
            text = streamed.feed(message.get("body", b"").decode("utf-8", "surrogateescape"))
            if not more:
                text += streamed.flush()
            await send({**message, "body": text.encode("utf-8", "surrogateescape")})

        await self.app(scope, receive, redacting_send)


def _redact_bytes(body: bytes) -> bytes:
    if not body:
        return body
    text = body.decode("utf-8", "surrogateescape")
    redacted = redact(text)
    return body if redacted == text else redacted.encode("utf-8", "surrogateescape")
