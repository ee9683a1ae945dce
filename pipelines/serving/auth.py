"""`BearerTokenMiddleware`: one optional bearer token in front of every endpoint of the HTTP server.

The token comes from the `API_TOKEN` setting (an environment variable); it is compared in constant time and is
never logged. Without a token the middleware is not installed and the launcher keeps the server on loopback.
"""

from __future__ import annotations

import hmac
import json

from haystack import logging
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(host: str) -> bool:
    """True when `host` only accepts connections from this machine."""
    return host.strip().lower() in LOOPBACK_HOSTS or host.strip().startswith("127.")


class BearerTokenMiddleware:
    """Pure ASGI middleware: HTTP and WebSocket requests without `Authorization: Bearer <token>` get 401.

    CORS preflight requests (`OPTIONS` with `Access-Control-Request-Method`) pass, so browsers can ask first;
    they carry no data and run no pipeline.

    Usage:
    ```python
    app.add_middleware(BearerTokenMiddleware, token=settings.api_token.get_secret_value())
    ```
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token or not token.strip():
            raise ValueError("token must be a non-empty string")
        self.app = app
        self._expected = token.strip().encode("utf-8")

    def _authorised(self, scope: Scope) -> bool:
        for key, value in scope.get("headers") or []:
            if key.lower() == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self._expected):
                    return True
        return False

    @staticmethod
    def _is_preflight(scope: Scope) -> bool:
        if scope.get("method") != "OPTIONS":
            return False
        return any(key.lower() == b"access-control-request-method" for key, _ in scope.get("headers") or [])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._is_preflight(scope) or self._authorised(scope):
            await self.app(scope, receive, send)
            return
        logger.info("Rejected an unauthenticated request to {path}", path=scope.get("path", ""))
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"detail": "Missing or invalid bearer token: send 'Authorization: Bearer <API_TOKEN>'."})
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="research-assistant"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body.encode("utf-8")})
