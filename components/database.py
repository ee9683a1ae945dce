"""The PostgreSQL every embedded store shares: the knowledge base, the graph and memory.

With `DATABASE_URL` unset, an embedded PostgreSQL 16 with pgvector is started from the `pgserver` package in
`RESEARCH_DATA_DIR/pg`. pgserver counts the processes that use a data folder, so the app, the CLI and the HTTP
server share one running server, which stops when the last of them exits.

This module is one of the two explicit process-wide caches of the product (the other is the embedding model,
`components/embedding/model.py`): one started server per data folder (`_SERVERS`) and one connection pool per
database URL (`_POOLS`). Sharing matters here: a server is one per folder by nature, and a pool per store would
open eight connections for every component of every pipeline. The stores themselves (graph, memory, knowledge
base) are made by the components that use them, in `warm_up()`, and borrow connections from this pool.
"""

from __future__ import annotations

import atexit
import threading
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from haystack import logging

from components.resilience.errors import first_line
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_SERVERS: dict[Path, object] = {}
_POOLS: dict[str, object] = {}


class DatabaseUnavailable(RuntimeError):
    """The knowledge base's PostgreSQL cannot be started or reached; the message says what to do."""


def _start_embedded(folder: Path) -> str:
    # pgserver's cross-process lock lives in the user's runtime folder, so every process of the user (app, CLI,
    # server) agrees on it; without XDG_RUNTIME_DIR platformdirs falls back to /tmp/runtime-<uid> and says so.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pgserver
    folder.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(folder)
    try:
        server = pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as exc:  # noqa: BLE001 - pgserver raises bare assertions and subprocess errors
        log = folder / "log"
        hint = f" See {log} for PostgreSQL's own log." if log.exists() else ""
        raise DatabaseUnavailable(f"The embedded PostgreSQL in {folder} could not start: {exc}.{hint}") from exc
    _SERVERS[folder] = server
    # Exit handlers run last-registered first, so this prune runs before pgserver's own detach: a test or helper
    # process that died without detaching must not keep the server alive after its last real user leaves.
    atexit.register(_forget_dead_handles, folder)
    return server.get_uri()


def _forget_dead_handles(folder: Path) -> None:
    """Drop processes that died without saying goodbye from pgserver's list of users of this server.

    pgserver stops the server when its last user exits, but a process killed outright never removes itself, and
    the server would then outlive every later user. Pruning the list before attaching restores the rule.
    """
    import psutil
    from pgserver.postgres_server import PostgresServer
    from pgserver.utils import DiskList

    path = folder / ".handle_pids.json"
    if not path.exists():
        return
    with PostgresServer._lock:
        handles = DiskList(path)
        pids = handles.get()
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        if alive != pids:
            logger.info("Forgetting {count} exited users of the embedded PostgreSQL", count=len(pids) - len(alive))
            handles.put(alive)


def database_url(settings: Settings | None = None) -> str:
    """The connection string of the knowledge base's PostgreSQL, starting the embedded one if needed."""
    settings = settings or get_settings()
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    folder = settings.data_dir / "pg"
    with _LOCK:
        server = _SERVERS.get(folder)
        if server is not None:
            return server.get_uri()  # type: ignore[attr-defined]
        return _start_embedded(folder)


def describe_database(settings: Settings | None = None) -> str:
    """Where the database is, for status pages: never the password."""
    settings = settings or get_settings()
    if settings.database_url is None:
        return f"embedded PostgreSQL in {settings.data_dir / 'pg'}"
    parts = urlsplit(settings.database_url.get_secret_value())
    host = parts.hostname or "local socket"
    return f"PostgreSQL at {host}{':' + str(parts.port) if parts.port else ''}{parts.path or ''}"


def connection_pool(settings: Settings | None = None):  # noqa: ANN201 - psycopg_pool is imported lazily
    """The process-wide connection pool for the settings' database, with pgvector types registered."""
    return connection_pool_for(database_url(settings))


def connection_pool_for(url: str):  # noqa: ANN201 - psycopg_pool is imported lazily
    """The process-wide connection pool for the database at `url`, with pgvector types registered.

    This is the one cache of pools (made once per database URL; `close_pools` ends them): the knowledge base (its
    document registry and the pgvector chunk index's own SQL), the graph and memory share one pool per database
    instead of opening connections of their own.
    """
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool

    with _LOCK:
        pool = _POOLS.get(url)
        if pool is not None:
            return pool
        _ensure_extension(url)

        def configure(conn) -> None:  # noqa: ANN001
            register_vector(conn)

        try:
            pool = ConnectionPool(
                url, min_size=1, max_size=8, kwargs={"autocommit": True}, configure=configure, open=True, timeout=10
            )
            pool.wait(timeout=10)
        except Exception as exc:  # noqa: BLE001
            reason = first_line(exc, 1000)
            raise DatabaseUnavailable(f"Cannot connect to the knowledge base's PostgreSQL: {reason}") from exc
        _POOLS[url] = pool
        return pool


def _ensure_extension(url: str) -> None:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            # Two processes creating the extension at once race; an advisory lock serialises them.
            conn.execute("SELECT pg_advisory_lock(726354)")
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            finally:
                conn.execute("SELECT pg_advisory_unlock(726354)")
    except psycopg.errors.FeatureNotSupported as exc:
        raise DatabaseUnavailable("The PostgreSQL server has no pgvector extension; install pgvector there.") from exc
    except psycopg.OperationalError as exc:
        reason = first_line(exc, 1000)
        raise DatabaseUnavailable(f"Cannot connect to the knowledge base's PostgreSQL: {reason}") from exc


def close_pools() -> None:
    """Close every pool of this process (tests, and before a forked worker starts)."""
    with _LOCK:
        for pool in _POOLS.values():
            pool.close()  # type: ignore[attr-defined]
        _POOLS.clear()


def release_embedded() -> None:
    """Close this process's pools and detach from the embedded PostgreSQL (stopping it if no other process uses it).

    For a process about to replace itself (`exec`): its exit handlers will not run, so it detaches now.
    """
    close_pools()
    with _LOCK:
        for server in _SERVERS.values():
            server.cleanup()  # type: ignore[attr-defined]
        _SERVERS.clear()
