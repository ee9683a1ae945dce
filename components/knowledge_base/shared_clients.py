"""`SharedClients`: the clients of an embedded engine's folders (Qdrant local mode, milvus-lite), one per folder per
process, shared by every index of that folder."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SharedClient:
    """One embedded engine's client, shared by every index of its folder in this process, and what they agree on: how
    many use it, the lock their calls into it hold, the collections written since their last flush (milvus-lite), and
    the indexes to tell when it is closed under them and the in-memory keyword postings per collection (Qdrant local
    mode)."""

    client: Any
    users: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)
    dirty: set[str] = field(default_factory=set)
    indexes: weakref.WeakSet = field(default_factory=weakref.WeakSet)
    postings: dict[str, Any] = field(default_factory=dict)


class SharedClients:
    """The clients of one embedded engine's folders in this process (Qdrant local mode, milvus-lite), one per resolved
    folder, counted by user: the engines open a folder in one process only, and YAML deserialisation gives every
    component a store object of its own. Each engine's index module keeps one instance, made with `close(key, entry)`,
    which closes a client no longer used."""

    def __init__(self, close: Callable[[str, SharedClient], None]) -> None:
        self._entries: dict[str, SharedClient] = {}
        self._guard = threading.Lock()
        self._close = close

    def acquire(self, key: str, open_client: Callable[[], Any], user: Any = None) -> SharedClient:
        """The folder's entry with one user more (and `user` to tell on `close_all`), its client opened by
        `open_client()` on first use (what that raises, `acquire` raises)."""
        with self._guard:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = SharedClient(open_client())
            entry.users += 1
            if user is not None:
                entry.indexes.add(user)
            return entry

    def release(self, key: str, user: Any = None) -> None:
        """One user fewer of the folder; the last one closes its client."""
        with self._guard:
            entry = self._entries.get(key)
            if entry is None:
                return
            if user is not None:
                entry.indexes.discard(user)
            entry.users -= 1
            if entry.users > 0:
                return
            del self._entries[key]
        self._close(key, entry)

    def close_all(self) -> None:
        """Close every folder's client whoever still uses it (shutdown, or handing the folders to another process)."""
        with self._guard:
            entries, self._entries = self._entries, {}
        for key, entry in entries.items():
            self._close(key, entry)

    def holds(self, key: str) -> bool:
        """Whether this process has the folder `key` open through the cache."""
        with self._guard:
            return key in self._entries
