"""The memory part of `research status`: where memory lives, whether it answers, and how much it holds."""

from __future__ import annotations

from typing import Any

from components.memory.backends import make_memory_store
from components.memory.embedded import DEFAULT_TABLE, EmbeddedMemoryStore
from components.memory.zep import ZepMemoryStore


def memory_status(settings: Any) -> tuple[str, dict[str, Any]]:
    """(detail, counts) for the status page; raises with one sentence when memory cannot be reached."""
    if settings.memory_backend == "zep":
        if not settings.zep_api_url:
            raise RuntimeError("MEMORY_BACKEND is zep but ZEP_API_URL is not set")
        timeout_s = min(settings.tool_timeout_s, 5.0)
        store = make_memory_store("zep", DEFAULT_TABLE, None, None, timeout_s, settings=settings)
        assert isinstance(store, ZepMemoryStore)
        try:
            return f"Zep at {settings.zep_api_url}", {"sessions": store.count_sessions()}
        finally:
            store.close()
    store = make_memory_store("embedded", DEFAULT_TABLE, None, None, settings.tool_timeout_s, settings=settings)
    assert isinstance(store, EmbeddedMemoryStore)
    return f"PostgreSQL table {DEFAULT_TABLE} (with embeddings)", {"interactions": store.count()}
