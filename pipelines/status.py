"""One health report for the CLI, the app's Status page and the HTTP server: configuration, reachability, counts.

Each part is probed on its own, so one unreachable backend never hides the others; secrets are never included.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from components.database import describe_database
from components.embedding import resolve_model_path
from components.graph.factory import graph_store_from_settings, open_extractor
from components.graph.ingest_hook import GraphIngestHook
from components.knowledge_base.factory import open_knowledge_base
from components.memory.status import memory_status
from components.redaction import redact_data
from components.resilience.errors import first_line
from components.settings import Settings, get_settings
from components.tools.registry import tool_status


def _probe(name: str, optional: bool, fn: Callable[[Settings], tuple[str, dict[str, Any]]], settings: Settings) -> dict:
    started = time.monotonic()
    try:
        detail, counts = fn(settings)
        reachable = True
    except Exception as exc:  # noqa: BLE001 - a status page reports every failure as a sentence
        detail, counts, reachable = f"unreachable: {first_line(exc)}", {}, False
    return {
        "name": name,
        "reachable": reachable,
        "optional": optional,
        "detail": detail,
        "counts": counts,
        "probe_ms": round((time.monotonic() - started) * 1000, 1),
    }


def _knowledge_base(settings: Settings) -> tuple[str, dict[str, Any]]:
    store = open_knowledge_base(settings)
    where = describe_database(settings) if settings.kb_backend == "pgvector" else settings.kb_backend
    detail = f"{settings.kb_backend}, collection {settings.kb_collection!r} ({where})"
    counts = {"documents": store.count_documents(), "chunks": store.count_chunks()}
    unlisted = store.count_index_chunks() - counts["chunks"]
    if unlisted > 0:  # left by a crash between the index write and the document record; search never returns them
        counts["chunks without a document"] = unlisted
    return detail, counts


def _embedder(settings: Settings) -> tuple[str, dict[str, Any]]:
    resolve_model_path(settings.embedding_model)
    return f"{settings.embedding_model} (local, offline)", {}


def _generator(settings: Settings) -> tuple[str, dict[str, Any]]:
    if settings.generator == "extractive":
        return "extractive answers from the evidence (offline)", {}
    if not settings.openai_base_url and not settings.openai_api_key:
        raise RuntimeError("GENERATOR=openai needs OPENAI_BASE_URL or OPENAI_API_KEY")
    return f"OpenAI-compatible chat model {settings.openai_model} at {settings.openai_base_url or 'api.openai.com'}", {}


def _graph(settings: Settings) -> tuple[str, dict[str, Any]]:
    store = graph_store_from_settings(settings.kb_collection, settings)
    try:
        counts = store.counts()
        # Documents left without a graph because extraction failed: how many, and how to extract them again.
        note = GraphIngestHook(store=store, extractor=open_extractor(settings)).ingest_note()
    finally:
        store.close()
    if settings.graph_backend == "neo4j":
        where = f"Neo4j at {settings.neo4j_uri}"
    else:
        where = "tables in the knowledge base's PostgreSQL"
    return f"{where}, extractor {settings.graph_extractor}" + (f". {note}" if note else ""), {
        "entities": counts.get("entities", 0),
        "facts": counts.get("facts", 0),
    }


def _reachable(url: str, timeout_s: float = 2.0) -> None:
    """Raise a one-sentence error unless a TCP connection to `url`'s host and port opens within `timeout_s`."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout_s):
            return
    except OSError as exc:
        raise RuntimeError(f"{parts.hostname}:{port} cannot be reached ({exc.strerror or exc})") from exc


def _web(settings: Settings) -> tuple[str, dict[str, Any]]:
    url = settings.firecrawl_api_url or "https://api.firecrawl.dev"
    if settings.firecrawl_api_key is None and settings.firecrawl_api_url is None:
        raise RuntimeError("not configured: set FIRECRAWL_API_KEY (or FIRECRAWL_API_URL for a self-hosted Firecrawl)")
    _reachable(url)
    return f"Firecrawl at {url}", {}


def _arxiv(settings: Settings) -> tuple[str, dict[str, Any]]:
    _reachable(settings.arxiv_api_url)
    return f"arXiv API at {settings.arxiv_api_url} (one request every {settings.arxiv_min_interval_s:g} s)", {}


def _memory(settings: Settings) -> tuple[str, dict[str, Any]]:
    return memory_status(settings)


PARTS: list[tuple[str, bool, Callable[[Settings], tuple[str, dict[str, Any]]]]] = [
    ("knowledge base", False, _knowledge_base),
    ("embedder", False, _embedder),
    ("generator", False, _generator),
    ("knowledge graph", True, _graph),
    ("memory", True, _memory),
    ("web", True, _web),
    ("arXiv", True, _arxiv),
]


def collect_status(settings: Settings | None = None) -> dict[str, Any]:
    """The health report: `parts` (name, reachable, detail, counts), `tools` (with telemetry), `healthy`."""
    settings = settings or get_settings()
    parts = [_probe(name, optional, fn, settings) for name, optional, fn in PARTS]
    tools = tool_status(settings=settings)
    healthy = all(part["reachable"] for part in parts if not part["optional"])
    # Probe details quote connection errors, which may carry a DSN or an upstream's echo of a key.
    return redact_data({"healthy": healthy, "parts": parts, "tools": tools, "data_dir": str(settings.data_dir)})
