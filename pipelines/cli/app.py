"""`research app`: ingest the demo corpus into an empty knowledge base, then start the Streamlit app."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("app", help="start the Streamlit app (ingests the demo corpus on first start)")
    parser.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--no-demo", action="store_true", help="do not ingest the demo corpus into an empty base")
    parser.set_defaults(func=run, logs_are_output=True)  # a server's log is what its operator reads


def run(args: argparse.Namespace) -> int:
    if not args.no_demo:
        from ingest.demo import ensure_demo_corpus

        report = ensure_demo_corpus()
        if report is not None:
            print(f"Demo corpus ingested: {report.summary()}")
        from components.database import release_embedded

        release_embedded()  # exec skips exit handlers: detach from the embedded PostgreSQL first
    entry = Path(__file__).resolve().parents[2] / "app" / "main.py"
    print(f"Opening the app on http://{args.host}:{args.port}")
    sys.stdout.flush()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(entry),
        "--server.port",
        str(args.port),
        "--server.address",
        args.host,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    os.chdir(entry.parents[1])  # so .streamlit/config.toml applies
    os.execv(sys.executable, command)
    return 0  # not reached
