"""`research serve` and `research export-yaml`: the HTTP/MCP server, and pipelines as Hayhooks YAML files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="serve every pipeline over HTTP (Hayhooks), the OpenAI-compatible chat endpoint and MCP",
        description=(
            "Start Hayhooks with every pipeline of the catalog: POST /{name}/run, /v1/chat/completions (model "
            "'research') and MCP tools at /mcp. With API_TOKEN set, every request needs 'Authorization: Bearer "
            "<token>'; without it the server only binds to 127.0.0.1."
        ),
    )
    serve.add_argument("--host", default=None, help="address to bind (default: HAYHOOKS_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default: HAYHOOKS_PORT, 1416)")
    serve.add_argument(
        "--mcp-only",
        action="store_true",
        help="serve only MCP (SSE at /sse, streamable HTTP at /mcp), as `hayhooks mcp run` does",
    )
    serve.add_argument(
        "--allow-remote-without-token",
        action="store_true",
        help="bind beyond this machine without API_TOKEN (anyone who reaches the port can use it)",
    )
    serve.add_argument(
        "--allow-deploy",
        action="store_true",
        help="keep Hayhooks' deploy/undeploy endpoints and MCP tools (they run uploaded code; off by default)",
    )
    serve.set_defaults(func=run_serve, logs_are_output=True)  # a server's log is what its operator reads

    export = subparsers.add_parser(
        "export-yaml",
        help="write a pipeline of the catalog as a standalone Hayhooks YAML file",
        description="Write pipeline NAME as a Hayhooks YAML file (with inputs and outputs) for `hayhooks run`.",
    )
    export.add_argument("name", help="the pipeline's name in pipelines.yaml (e.g. research, documents)")
    export.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: standard output)")
    export.set_defaults(func=run_export)


def run_serve(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError
    from pipelines.serving.server import ServingError, serve

    if args.port is not None and not 1 <= args.port <= 65535:
        raise UserError("--port must be between 1 and 65535")
    try:
        serve(
            host=args.host,
            port=args.port,
            mcp_only=args.mcp_only,
            allow_remote_without_token=args.allow_remote_without_token,
            allow_deploy=args.allow_deploy,
        )
    except ServingError as exc:
        raise UserError(str(exc)) from exc
    return 0


def run_export(args: argparse.Namespace) -> int:
    from pipelines.catalog import CatalogError
    from pipelines.cli import UserError
    from pipelines.runtime import process_runtime
    from pipelines.serving.export import export_hayhooks_yaml

    catalog = process_runtime().catalog
    if args.name not in catalog.names():
        raise UserError(f"There is no pipeline '{args.name}'; the catalog has: {', '.join(catalog.names())}.")
    try:
        text = export_hayhooks_yaml(args.name, catalog)
    except CatalogError as exc:
        raise UserError(str(exc)) from exc
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"Cannot write {args.output}: {exc.strerror or exc}") from exc
    print(f"Wrote {args.output} (deploy it with: hayhooks run --pipelines-dir {args.output.parent})")
    return 0
