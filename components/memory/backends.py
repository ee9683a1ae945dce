"""Making the memory store a configuration names: the embedded PostgreSQL table or Zep.

Nothing is cached here: `MemoryRecall` and `MemoryWriter` each make their store in `warm_up()` (or are given
one). The embedded tables share the process's one connection pool of the database (`components/database.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from components.memory.embedded import EmbeddedMemoryStore, validate_table_name
from components.memory.store import MemoryStore, MemoryUnavailable
from components.memory.zep import ZepMemoryStore

MEMORY_BACKENDS = ("embedded", "zep")


def validate_backend(backend: str | None) -> str | None:
    """`backend` if it names a memory backend (or is None: the settings decide); ValueError otherwise."""
    if backend is not None and backend not in MEMORY_BACKENDS:
        raise ValueError(f"memory backend must be one of {', '.join(MEMORY_BACKENDS)}, not {backend!r}.")
    return backend


def make_memory_store(
    backend: str | None,
    table: str,
    zep_api_url: str | None,
    zep_api_key: str | None,
    timeout_s: float,
    dimension: int = 384,
    settings: Any = None,
) -> MemoryStore:
    """A new store for this configuration, unconnected (it connects on first use); `backend`, `zep_api_url` and
    `zep_api_key` left None are the settings' (`MEMORY_BACKEND`, `ZEP_API_URL`, `ZEP_API_KEY`).
    `MemoryUnavailable` when Zep is chosen but has no URL."""
    from components.settings import get_settings

    settings = settings or get_settings()
    backend = validate_backend(backend) or settings.memory_backend
    if backend == "zep":
        url = zep_api_url or settings.zep_api_url
        if not url:
            raise MemoryUnavailable("The zep memory backend needs ZEP_API_URL.")
        key = zep_api_key or (settings.zep_api_key.get_secret_value() if settings.zep_api_key else None)
        return ZepMemoryStore(url, key, timeout_s=timeout_s)
    return EmbeddedMemoryStore(validate_table_name(table), dimension=dimension, settings=settings)



class MemoryStoreSlot:
    """The store a memory component reads and writes: the one it was given, or one made from its configuration
    the first time it is needed (in `warm_up()`, or in a run when warming up could not make it: a Zep without
    URL is then that run's status, not a pipeline that cannot start). Thread-safe.

    Usage:
    ```python
    slot = MemoryStoreSlot(None, lambda: make_memory_store("embedded", "memory_interactions", None, None, 7.0))
    slot.get().count("default")
    ```
    """

    def __init__(self, given: MemoryStore | None, make: Callable[[], MemoryStore]) -> None:
        if given is not None and not isinstance(given, MemoryStore):
            raise ValueError(f"memory_store must be a MemoryStore or None, not {type(given).__name__}")
        self._store = given
        self._make = make
        self._lock = threading.Lock()

    def get(self) -> MemoryStore:
        """The store, made now if it was not yet; raises `MemoryUnavailable` when it cannot be made."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = self._make()
        return self._store

    def try_get(self) -> MemoryStore | None:
        """The store, or None when it cannot be made yet (the next `get` says why)."""
        try:
            return self.get()
        except MemoryUnavailable:
            return None
