"""Reading an upstream's answer with a byte cap and a deadline, and closing the connection when either is reached.

One mechanism for every HTTP client of the product: `CappedBody` counts the body's pieces as they arrive and stops
at the byte limit or at the call's deadline (its timeout, or the question's budget: `question_deadline()`). The page
fetcher reads through it directly; the hosted services' client libraries read through it by a transport plugged
into them: `CappedTransport` for httpx (Zep, the OpenAI-compatible chat model) and `CappedAdapter` for requests
(Firecrawl, arXiv). A call abandoned by the guard at its timeout therefore stops reading at its next piece and closes
its connection instead of buffering an endless body into memory.

Usage:
```python
client = httpx.Client(transport=CappedTransport(max_bytes=2_000_000, service="Zep"))
session = capped_session(max_bytes=2_000_000, service="arXiv")
```
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from components.resilience.budget import question_deadline
from components.resilience.errors import RetryableError, ServiceUnreachable, SourceError
from components.resilience.proxies import EnvironmentProxies

READ_SIZE = 64 * 1024


class BodyTooLarge(SourceError):
    """An upstream answer longer than the byte limit; its reading stopped at the limit and the connection closed."""


class BodyTooSlow(RetryableError):
    """An upstream answer still arriving at the call's deadline; its reading stopped and the connection closed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="timeout")


def call_deadline(timeout_s: float | None = None) -> float | None:
    """The earlier of now + `timeout_s` and the question's deadline (None when neither is set)."""
    candidates = [question_deadline()]
    if timeout_s is not None:
        candidates.append(time.monotonic() + timeout_s)
    found = [deadline for deadline in candidates if deadline is not None]
    return min(found) if found else None


class CappedBody:
    """The pieces of a body, at most `limit` bytes in all, read until `deadline` (`time.monotonic()`, or None).

    Iterating yields the pieces (the last one trimmed to the limit) and stops at the limit or the deadline;
    afterwards `cut` says why it stopped early ("size", "time" or None) and `size` how many bytes arrived.
    """

    def __init__(self, pieces: Iterable[bytes], limit: int, deadline: float | None = None) -> None:
        self._pieces = pieces
        self.limit = limit
        self.deadline = deadline
        self.size = 0
        self.cut: str | None = None

    def __iter__(self) -> Iterator[bytes]:
        for piece in self._pieces:
            kept = self.take(piece)
            if kept:
                yield kept
            if self.cut is not None:
                return

    def take(self, piece: bytes) -> bytes:
        """Count one more piece: what of it to keep (trimmed at the limit); `cut` is set when reading must stop."""
        self.size += len(piece)
        over = self.size - self.limit
        if over > 0:
            self.cut = "size"
            return piece[: max(len(piece) - over, 0)]
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.cut = "time"
        return piece

    def refusal(self, service: str) -> SourceError | RetryableError | None:
        """The error for a body cut short (None when it was read whole)."""
        service = service[:1].upper() + service[1:]  # the message begins with it
        if self.cut == "size":
            return BodyTooLarge(
                f"{service} sent more than its {self.limit:,}-byte limit in one answer; the reading stopped there."
            )
        if self.cut == "time":
            return BodyTooSlow(f"{service} was still sending its answer at the deadline; the reading stopped.")
        return None


class _CappedStream(httpx.SyncByteStream):
    """An httpx response body read through `CappedBody`; raises its refusal and closes the connection when cut."""

    def __init__(self, inner: httpx.SyncByteStream, limit: int, deadline: float | None, service: str) -> None:
        self._inner = inner
        self._limit = limit
        self._deadline = deadline
        self._service = service

    def __iter__(self) -> Iterator[bytes]:
        body = CappedBody(self._inner, self._limit, self._deadline)
        try:
            yield from body
        finally:
            if body.cut is not None:
                self._inner.close()
        refusal = body.refusal(self._service)
        if refusal is not None:
            raise refusal

    def close(self) -> None:
        self._inner.close()


class _AsyncCappedStream(httpx.AsyncByteStream):
    """`_CappedStream` for an async client."""

    def __init__(self, inner: httpx.AsyncByteStream, limit: int, deadline: float | None, service: str) -> None:
        self._inner = inner
        self._body = CappedBody((), limit, deadline)
        self._service = service

    async def __aiter__(self) -> Any:
        async for piece in self._inner:
            kept = self._body.take(piece)
            if kept:
                yield kept
            if self._body.cut is not None:
                await self._inner.aclose()
                raise self._body.refusal(self._service)  # type: ignore[misc]

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport whose responses are read through `CappedBody`: at most `max_bytes` each, and not past the
    request's read timeout or the question's deadline. Bodies are asked for uncompressed, so the limit counts what
    is kept in memory. A refused connection is `ServiceUnreachable` naming the service, as for web and arXiv.

    Without an `inner` transport, requests go through the proxies of the environment (HTTP_PROXY, HTTPS_PROXY,
    ALL_PROXY, NO_PROXY, read when the transport is made; see `components.resilience.proxies`) as httpx's own default
    transport sends them (`trust_env=False`: always directly); every answer, proxied or not, is read under the same
    cap and deadline."""

    def __init__(
        self, max_bytes: int, service: str, inner: httpx.BaseTransport | None = None, trust_env: bool = True
    ) -> None:
        self.max_bytes = max_bytes
        self.service = service
        self._inner = inner or httpx.HTTPTransport()
        self.proxies = EnvironmentProxies.from_environment() if inner is None and trust_env else EnvironmentProxies()
        # One transport per proxy, as httpx mounts them; the async ones are made when an async client first sends.
        self._proxied = {url: httpx.HTTPTransport(proxy=url) for url in self.proxies.urls()}
        self._async_inner: httpx.AsyncHTTPTransport | None = None
        self._async_proxied: dict[str, httpx.AsyncHTTPTransport] = {}

    def proxy_for(self, url: httpx.URL) -> str | None:
        """The proxy URL a request to `url` goes through (None: directly), chosen as httpx's own client chooses it
        (see `components.resilience.proxies`)."""
        return self.proxies.proxy_for(url)

    def _sync_transport(self, url: httpx.URL) -> httpx.BaseTransport:
        proxy = self.proxy_for(url)
        return self._inner if proxy is None else self._proxied[proxy]

    def _async_transport(self, url: httpx.URL) -> httpx.AsyncBaseTransport:
        proxy = self.proxy_for(url)
        if proxy is None:
            if self._async_inner is None:
                self._async_inner = httpx.AsyncHTTPTransport()
            return self._async_inner
        if proxy not in self._async_proxied:
            self._async_proxied[proxy] = httpx.AsyncHTTPTransport(proxy=proxy)
        return self._async_proxied[proxy]

    def _prepare(self, request: httpx.Request) -> float | None:
        request.headers["Accept-Encoding"] = "identity"
        return call_deadline((request.extensions.get("timeout") or {}).get("read"))

    @contextlib.contextmanager
    def _connecting(self) -> Iterator[None]:
        """A refused or unresolved connection as `ServiceUnreachable` naming the service (not worth a retry within
        the budget); a connect timeout stays a timeout."""
        try:
            yield
        except httpx.ConnectTimeout:
            raise
        except httpx.ConnectError as exc:
            what = "its name does not resolve" if "name" in str(exc).lower() else "nothing answers there"
            raise ServiceUnreachable(f"cannot reach {self.service}: {what}") from exc

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = self._prepare(request)
        with self._connecting():
            response = self._sync_transport(request.url).handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _CappedStream(response.stream, self.max_bytes, deadline, self.service)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = self._prepare(request)
        with self._connecting():
            response = await self._async_transport(request.url).handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _AsyncCappedStream(response.stream, self.max_bytes, deadline, self.service)
        return response

    def close(self) -> None:
        self._inner.close()
        for transport in self._proxied.values():
            transport.close()

    async def aclose(self) -> None:
        for transport in [self._async_inner, *self._async_proxied.values()]:
            if transport is not None:
                await transport.aclose()


class CappedAdapter(HTTPAdapter):
    """A requests adapter that reads every body through `CappedBody` (decompressed bytes count): at most
    `max_bytes`, and not past the request's timeout or the question's deadline."""

    def __init__(self, max_bytes: int, service: str) -> None:
        super().__init__(max_retries=0)
        self.max_bytes = max_bytes
        self.service = service

    def send(
        self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None, **kwargs: Any
    ) -> requests.Response:
        read_timeout = timeout[1] if isinstance(timeout, tuple) else timeout
        deadline = call_deadline(read_timeout)
        response = super().send(request, stream=True, timeout=timeout, **kwargs)
        body = CappedBody(response.raw.stream(READ_SIZE, decode_content=True), self.max_bytes, deadline)
        try:
            content = b"".join(body)
        except (ReadTimeoutError, ProtocolError) as exc:
            # As requests does when it reads a body: the HTTP library's errors become requests' own, so a body cut
            # short is the dropped connection (or the timeout) its callers handle.
            response.close()
            late = isinstance(exc, ReadTimeoutError)
            raise (requests.exceptions.ReadTimeout if late else requests.exceptions.ConnectionError)(
                exc, request=request
            ) from exc
        except BaseException:
            response.close()
            raise
        refusal = body.refusal(self.service)
        if refusal is not None:
            response.close()
            raise refusal
        response.close()  # the connection goes back to the pool; the body is kept
        response.raw = ReadBody(response.raw, content)
        return response


class ReadBody:
    """A requests response's `raw` once `CappedAdapter` has read its body under the cap: reading it gives the kept
    (already decoded) bytes, from which requests makes `content`; anything else (headers, what requests reads for
    cookies, closing) is the original urllib3 response's. `raw` is the public place requests reads a body from."""

    def __init__(self, original: Any, content: bytes) -> None:
        self.original = original
        self.body = io.BytesIO(content)

    def stream(self, amt: int = READ_SIZE, decode_content: bool | None = None) -> Iterator[bytes]:
        while piece := self.body.read(amt):
            yield piece

    def read(self, amt: int | None = None, decode_content: bool | None = None, **_: Any) -> bytes:
        return self.body.read(-1 if amt is None else amt)

    def __getattr__(self, name: str) -> Any:
        if name == "original":  # not yet set (a copy being made)
            raise AttributeError(name)
        return getattr(self.original, name)


def capped_session(max_bytes: int, service: str, session: requests.Session | None = None) -> requests.Session:
    """`session` (or a new one) reading every http(s) answer through `CappedAdapter`."""
    session = session or requests.Session()
    adapter = CappedAdapter(max_bytes, service)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def capped_client_kwargs(max_bytes: int, service: str) -> dict[str, Any]:
    """`http_client_kwargs` for Haystack's OpenAI-compatible generators: their sync and async httpx clients on
    `CappedTransport` (`max_bytes`: the caller's UPSTREAM_MAX_BYTES)."""
    return {"transport": CappedTransport(max_bytes, service)}
