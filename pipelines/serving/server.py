"""The Hayhooks server of the research assistant: every served pipeline, the chat endpoint, MCP and the token.

`create_app()` builds Hayhooks' own FastAPI app over the wrapper folders in `pipelines/serving/wrappers/` (one
folder per served pipeline, each with a `pipeline_wrapper.py`), then adds what the project needs on top:

- the deserialisation allowlist and sequential startup (parallel startup raced on lazy imports),
- the bearer-token middleware when `API_TOKEN` is set (every endpoint, MCP included),
- Hayhooks' MCP server mounted at `/mcp` (streamable HTTP), so one process serves REST, chat and MCP tools;
  `hayhooks mcp run --pipelines-dir <wrappers>` serves the same tools stand-alone,
- bounded request bodies, a 422 for invalid Unicode, and secrets redacted from every response and log line
  (`pipelines.serving.hardening`, `components.redaction`),
- SIGTERM stops the server as Ctrl-C does, so the embedded PostgreSQL is released on the way out.

Usage:
```python
from pipelines.serving.server import serve

serve(host="127.0.0.1", port=1416)  # blocks; `research serve` calls this
```
"""

from __future__ import annotations

import json
import os
import signal
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from haystack import logging

from components.settings import Settings, get_settings
from pipelines.catalog import ALLOWED_MODULES
from pipelines.runtime import setup
from pipelines.serving.auth import BearerTokenMiddleware, is_loopback
from pipelines.serving.hardening import RedactingResponseMiddleware, RequestCheckMiddleware
from pipelines.serving.mcp_tools import with_registry_tools

logger = logging.getLogger(__name__)

WRAPPERS_DIR = Path(__file__).resolve().parent / "wrappers"

APP_TITLE = "Research assistant"
APP_DESCRIPTION = (
    "Cited answers from the knowledge base, the knowledge graph, the web, arXiv and conversation memory. "
    "Every pipeline runs at `POST /{name}/run`; the research pipeline also answers on the OpenAI-compatible "
    "`/v1/chat/completions` (model `research`, streaming supported) and every pipeline is an MCP tool at `/mcp`."
)


class ServingError(ValueError):
    """The server cannot start with the settings given; the message says what to change."""


def served_pipeline_names() -> list[str]:
    """The names of the wrapper folders, i.e. the endpoints `POST /{name}/run` the server offers."""
    return sorted(
        path.name
        for path in WRAPPERS_DIR.iterdir()
        if path.is_dir() and (path / "pipeline_wrapper.py").exists() and not path.name.startswith(("_", "."))
    )


def configure_hayhooks(host: str, port: int) -> None:
    """Set the HAYHOOKS_* and Haystack environment this project serves with, before Hayhooks reads it.

    Values the operator set in the environment win, except the pipelines folder, host and port. Hayhooks reads
    its settings once at import, so they are also written to its settings object if it is already loaded.
    """
    forced = {
        "HAYHOOKS_PIPELINES_DIR": str(WRAPPERS_DIR),
        "HAYHOOKS_HOST": host,
        "HAYHOOKS_PORT": str(port),
    }
    defaults = {
        "HAYHOOKS_STARTUP_DEPLOY_STRATEGY": "sequential",
        "HAYHOOKS_SHOW_TRACEBACKS": "false",
        # The local trace dashboard writes a credential under ~/.cache; the project keeps everything in its folder.
        "HAYHOOKS_TRACING_ENABLED": "false",
        "HAYHOOKS_MONITORING_ENABLED": "false",
        # No browser origin may call the server unless the operator lists it (JSON list of origins).
        "HAYHOOKS_CORS_ALLOW_ORIGINS": "[]",
        # Haystack refuses to deserialise modules the catalog does not allow.
        "HAYSTACK_DESERIALIZATION_ALLOWLIST": ",".join(ALLOWED_MODULES),
        "HAYSTACK_TELEMETRY_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    os.environ.update(forced)
    for key, value in defaults.items():
        os.environ.setdefault(key, value)

    from hayhooks.settings import StartupDeployStrategy
    from hayhooks.settings import settings as hayhooks_settings

    hayhooks_settings.pipelines_dir = str(WRAPPERS_DIR)
    hayhooks_settings.host = host
    hayhooks_settings.port = port
    hayhooks_settings.startup_deploy_strategy = StartupDeployStrategy(os.environ["HAYHOOKS_STARTUP_DEPLOY_STRATEGY"])
    hayhooks_settings.show_tracebacks = os.environ["HAYHOOKS_SHOW_TRACEBACKS"].lower() == "true"
    hayhooks_settings.tracing_enabled = os.environ["HAYHOOKS_TRACING_ENABLED"].lower() == "true"
    hayhooks_settings.monitoring_enabled = os.environ["HAYHOOKS_MONITORING_ENABLED"].lower() == "true"
    hayhooks_settings.cors_allow_origins = _origins(os.environ["HAYHOOKS_CORS_ALLOW_ORIGINS"])


def _origins(value: str) -> list[str]:
    """Allowed browser origins from a JSON list (as Hayhooks reads it) or a comma-separated list."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value.split(",")
    if isinstance(parsed, str):
        parsed = [parsed]
    if not isinstance(parsed, list):
        raise ServingError('HAYHOOKS_CORS_ALLOW_ORIGINS must list origins, e.g. ["https://app.example.org"]')
    return [str(origin).strip() for origin in parsed if str(origin).strip()]


def check_bind(host: str, settings: Settings, allow_remote_without_token: bool = False) -> None:
    """Refuse to listen beyond this machine without a token unless the operator asked for it explicitly."""
    if settings.api_token is None and not is_loopback(host) and not allow_remote_without_token:
        raise ServingError(
            f"Refusing to serve on {host} without API_TOKEN: set API_TOKEN, bind to 127.0.0.1, "
            "or pass --allow-remote-without-token."
        )


def _token(settings: Settings) -> str | None:
    return settings.api_token.get_secret_value() if settings.api_token is not None else None


def _add_bearer_security_to_openapi(app: Any) -> None:
    """Declare the bearer scheme in the OpenAPI document, so /docs offers an 'Authorize' button."""
    from fastapi import FastAPI

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = FastAPI.openapi(app)
        schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearerAuth"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "The server's API_TOKEN.",
        }
        schema["security"] = [{"bearerAuth": []}]
        return schema

    app.openapi = openapi


# Hayhooks' endpoints and MCP tools that deploy or remove pipelines: they run uploaded code, so they are off
# unless the operator asks for them (`--allow-deploy`). `/draw` goes too: it calls an outside rendering service.
DEPLOY_PATHS = frozenset({"/deploy_files", "/deploy-yaml", "/undeploy/{pipeline_name}", "/draw/{pipeline_name}"})
DEPLOY_TOOLS = frozenset({"deploy_pipeline", "undeploy_pipeline"})


def _remove_deploy_routes(app: Any) -> None:
    from hayhooks.server.routers import deploy_router, draw_router, undeploy_router

    removed = (deploy_router, undeploy_router, draw_router)

    def is_deploy(route: Any) -> bool:
        # FastAPI includes routers by reference; older versions copy their routes.
        included = getattr(route, "original_router", None)
        return any(included is router for router in removed) or getattr(route, "path", None) in DEPLOY_PATHS

    app.router.routes[:] = [route for route in app.router.routes if not is_deploy(route)]
    app.openapi_schema = None


def _without_deploy_tools(server: Any) -> Any:
    """The MCP server with the deploy/undeploy tools neither listed nor callable."""
    from mcp import types

    list_tools = server.request_handlers[types.ListToolsRequest]
    call_tool = server.request_handlers[types.CallToolRequest]

    async def list_without_deploy(request: Any) -> Any:
        result = await list_tools(request)
        result.root.tools = [tool for tool in result.root.tools if tool.name not in DEPLOY_TOOLS]
        return result

    async def call_without_deploy(request: Any) -> Any:
        if request.params.name in DEPLOY_TOOLS:
            return types.ServerResult(
                types.CallToolResult(
                    content=[types.TextContent(type="text", text="Deploying pipelines is disabled on this server.")],
                    isError=True,
                )
            )
        return await call_tool(request)

    server.request_handlers[types.ListToolsRequest] = list_without_deploy
    server.request_handlers[types.CallToolRequest] = call_without_deploy
    return server


def _mcp_server(allow_deploy: bool, settings: Settings) -> Any:
    from hayhooks.server.utils.mcp_utils import create_mcp_server

    server = create_mcp_server("research-assistant")
    server = server if allow_deploy else _without_deploy_tools(server)
    # The tool registry over MCP: every tool the profile grants is an MCP tool too, beside the pipelines.
    return with_registry_tools(server, settings=settings)


def _mount_mcp(app: Any, settings: Settings, allow_deploy: bool = False) -> None:
    """Serve Hayhooks' MCP server (the same registry as the REST routes) at `/mcp` with streamable HTTP."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    session_manager = StreamableHTTPSessionManager(
        app=_mcp_server(allow_deploy, settings), event_store=None, json_response=False, stateless=True
    )

    async def handle_streamable_http(scope, receive, send) -> None:  # noqa: ANN001 - ASGI callables
        await session_manager.handle_request(scope, receive, send)

    hayhooks_lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application):  # noqa: ANN001, ANN202
        async with hayhooks_lifespan(application) as state:
            async with session_manager.run():
                yield state

    app.router.lifespan_context = lifespan
    app.mount("/mcp", app=handle_streamable_http, name="mcp")


def create_app(
    settings: Settings | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    with_mcp: bool = True,
    allow_deploy: bool = False,
) -> Any:
    """The FastAPI app: Hayhooks with every wrapper deployed at startup, MCP at `/mcp`, the token if set."""
    settings = settings or get_settings()
    setup()
    configure_hayhooks(host or settings.hayhooks_host, port or settings.hayhooks_port)
    from hayhooks.server.app import create_app as create_hayhooks_app

    app = create_hayhooks_app()
    app.title = APP_TITLE
    app.description = APP_DESCRIPTION
    if not allow_deploy:
        _remove_deploy_routes(app)
    if with_mcp:
        _mount_mcp(app, settings, allow_deploy)
    _harden(app)
    token = _token(settings)
    if token:
        app.add_middleware(BearerTokenMiddleware, token=token)
        _add_bearer_security_to_openapi(app)
    return app


def _harden(app: Any) -> None:
    """Request checks and response redaction, inside the token check (added last, it runs first)."""
    app.add_middleware(RedactingResponseMiddleware)
    app.add_middleware(RequestCheckMiddleware)


def create_mcp_app(
    settings: Settings | None = None, *, host: str | None = None, port: int | None = None, allow_deploy: bool = False
) -> Any:
    """What `hayhooks mcp run` serves (SSE at `/sse`, streamable HTTP at `/mcp`), with the token if set."""
    settings = settings or get_settings()
    setup()
    configure_hayhooks(host or settings.hayhooks_host, port or settings.hayhooks_port)
    from hayhooks.server.utils.deploy_utils import deploy_pipelines
    from hayhooks.server.utils.mcp_utils import create_starlette_app

    deploy_pipelines()
    app = create_starlette_app(_mcp_server(allow_deploy, settings))
    _harden(app)
    token = _token(settings)
    if token:
        app.add_middleware(BearerTokenMiddleware, token=token)
    return app


def serve(
    host: str | None = None,
    port: int | None = None,
    *,
    mcp_only: bool = False,
    allow_remote_without_token: bool = False,
    allow_deploy: bool = False,
    settings: Settings | None = None,
) -> None:
    """Run the server until interrupted (blocks)."""
    import uvicorn

    settings = settings or get_settings()
    host = host or settings.hayhooks_host
    port = port or settings.hayhooks_port
    check_bind(host, settings, allow_remote_without_token)
    if mcp_only:
        app = create_mcp_app(settings, host=host, port=port, allow_deploy=allow_deploy)
    else:
        app = create_app(settings, host=host, port=port, allow_deploy=allow_deploy)

    from hayhooks.server.logger import intercept_stdlib_logging
    from hayhooks.settings import settings as hayhooks_settings

    intercept_stdlib_logging(
        hayhooks_settings.intercepted_loggers,
        access_log_excluded_path_prefixes=hayhooks_settings.access_log_excluded_path_prefixes,
    )
    logger.info(
        "Serving on {host}:{port} (token required: {secured})", host=host, port=port, secured=bool(_token(settings))
    )
    _exit_on_sigterm()
    uvicorn.run(app, host=host, port=port, log_config=None, timeout_graceful_shutdown=5)


def _exit_on_sigterm() -> None:
    """Make SIGTERM end the process through its exit handlers, as Ctrl-C does.

    uvicorn shuts down gracefully on SIGTERM and then raises the signal again under the handler found at start;
    the default one kills the process without exit handlers, leaving the embedded PostgreSQL running.
    """

    def stop(signum: int, frame: Any) -> None:  # noqa: ARG001 - the signal handler's signature
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
