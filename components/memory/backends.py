"""Opening the configured memory store once per process: the embedded PostgreSQL table or Zep."""

from __future__ import annotations

import threading

from components.memory.embedded import EmbeddedMemoryStore, validate_table_name
from components.memory.store import MemoryStore, MemoryUnavailable
from components.memory.zep import ZepMemoryStore

MEMORY_BACKENDS = ("embedded", "zep")

_LOCK = threading.Lock()
_STORES: dict[tuple, MemoryStore] = {}


def validate_backend(backend: str | None) -> str | None:
    """`backend` if it names a memory backend (or is None: the settings decide); ValueError otherwise."""
    if backend is not None and backend not in MEMORY_BACKENDS:
        raise ValueError(f"memory backend must be one of {', '.join(MEMORY_BACKENDS)}, not {backend!r}.")
    return backend


def open_memory_store(
    backend: str | None,
    table: str,
    zep_api_url: str | None,
    zep_api_key: str | None,
    timeout_s: float,
    dimension: int = 384,
) -> MemoryStore:
    """The process-wide store for this configuration; `MemoryUnavailable` when Zep is chosen but not configured."""
    from components.settings import get_settings

    settings = get_settings()
    backend = validate_backend(backend) or settings.memory_backend
    if backend == "zep":
        url = zep_api_url or settings.zep_api_url
        if not url:
            raise MemoryUnavailable("The zep memory backend needs ZEP_API_URL.")
        key = zep_api_key or (settings.zep_api_key.get_secret_value() if settings.zep_api_key else None)
        config: tuple = ("zep", url.rstrip("/"), key, timeout_s)
    else:
        config = ("embedded", validate_table_name(table), dimension, str(settings.data_dir), settings.database_url)
    with _LOCK:
        store = _STORES.get(config)
        if store is None:
            if backend == "zep":
                store = ZepMemoryStore(config[1], config[2], timeout_s=timeout_s)
            else:
                store = EmbeddedMemoryStore(table, dimension=dimension, settings=settings)
            _STORES[config] = store
        return store
