"""The PostgreSQL every embedded store shares: the knowledge base, the graph and memory.

With `DATABASE_URL` unset, an embedded PostgreSQL 16 with pgvector is started from the `pgserver` package in
`RESEARCH_DATA_DIR/pg`. pgserver counts the processes that use a data folder, so the app, the CLI and the HTTP
server share one running server, which stops when the last of them exits.

This module is one of the two explicit process-wide caches of the product (the other is the embedding model,
`components/embedding/model.py`): one started server per data folder (`_SERVERS`) and one connection pool per
database URL (`_POOLS`). Sharing matters here: a server is one per folder by nature, and a pool per store would
open eight connections for every component of every pipeline. The stores themselves (graph, memory, knowledge
base) are made by the components that use them, in `warm_up()`, and borrow connections from this pool.

Who closes them: a `DatabaseLease` (the application runtime holds one, `pipelines/runtime.py`) says "this database
is in use until I close". A server or pool made while a lease of its database is held belongs to the leases: the
last lease to close closes the pools and detaches from the embedded server. One made with no lease held (a script,
a test's session database) stays until `close_pools` / the end of the process, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import threading
import warnings
from pathlib import Path
from typing import Any

from haystack import logging

from components.resilience.errors import first_line
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_SERVERS: dict[Path, object] = {}
_POOLS: dict[str, object] = {}
_LEASES: dict[str, int] = {}  # database key (its configured URL, or the embedded server's folder) -> open leases
# database key -> what was made while it was leased: ("server", folder) and ("pool", url)
_LEASED: dict[str, list[tuple[str, object]]] = {}
_URL_KEYS: dict[str, str] = {}  # an embedded server's URL -> its database key


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
    # pgserver waits for its lock without end; a process stuck holding it is a sentence here, not a hang there.
    with _holding_server_lock(folder):
        pass
    try:
        server = pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as exc:  # noqa: BLE001 - pgserver raises bare assertions and subprocess errors
        log = folder / "log"
        hint = f" See {log} for PostgreSQL's own log." if log.exists() else ""
        raise DatabaseUnavailable(f"The embedded PostgreSQL in {folder} could not start: {exc}.{hint}") from exc
    # pgserver counts this process as a user, and starts the server, when it first makes the server's handle. After a
    # lease's close detached this process while another kept the server running, `get_server` hands that handle back
    # as it was: this process would not be counted (the other's exit would stop the server under it), and the server
    # may meanwhile have stopped with its last user. Both are checked again (idempotent), under pgserver's
    # cross-process lock as `_forget_dead_handles` takes it.
    with _holding_server_lock(folder):
        server.ensure_postgres_running()
        server.global_process_id_list.get_and_add(os.getpid())
    _SERVERS[folder] = server
    _note_made(str(folder), ("server", folder))
    # Exit handlers run last-registered first, so this prune runs before pgserver's own detach: a test or helper
    # process that died without detaching must not keep the server alive after its last real user leaves.
    atexit.register(_forget_dead_handles_at_exit, folder)
    return server.get_uri()


def server_lock(server_class: type) -> Any:
    """The cross-process lock pgserver holds while it starts a server, stops it at its last user's exit, or changes
    its list of users: a POSIX lock (`fasteners.InterProcessLock`, `lockf`) on the file pgserver names in its public
    `lock_path`. The same file and the same kind of lock, so it also excludes pgserver's own start and exit in other
    processes (a `flock` lock, or another file, would not). A POSIX lock belongs to the process, so a fresh one is
    made per use and never held while pgserver takes its own in this process."""
    import fasteners

    return fasteners.InterProcessLock(server_class.lock_path)  # type: ignore[attr-defined]


# How long a start waits for pgserver's lock before saying who holds it: an upper bound on another process's start
# or stop of the server (initdb included), which hold the lock; not fitted.
LOCK_WAIT_S = 60.0


@contextlib.contextmanager
def _holding_server_lock(folder: Path) -> Any:
    """`server_lock`, waited for at most `LOCK_WAIT_S`; past that, `DatabaseUnavailable` saying the lock is held."""
    from pgserver.postgres_server import PostgresServer

    lock = server_lock(PostgresServer)
    if not lock.acquire(timeout=LOCK_WAIT_S):
        raise DatabaseUnavailable(
            f"The embedded PostgreSQL in {folder} cannot start: another process has held its lock file "
            f"{PostgresServer.lock_path} for {LOCK_WAIT_S:g} s; let it finish or end it, then try again."
        )
    try:
        yield
    finally:
        lock.release()


def _forget_dead_handles_at_exit(folder: Path) -> None:
    """`_forget_dead_handles` at exit: best effort, an exit never fails (a lock held elsewhere, a file gone)."""
    with contextlib.suppress(DatabaseUnavailable, OSError, ValueError):
        _forget_dead_handles(folder)


def _forget_dead_handles(folder: Path) -> None:
    """Drop processes that died without saying goodbye from pgserver's list of users of this server.

    pgserver stops the server when its last user exits, but a process killed outright never removes itself, and
    the server would then outlive every later user. Pruning the list before attaching restores the rule.
    """
    import psutil
    from pgserver.utils import DiskList

    path = folder / ".handle_pids.json"
    if not path.exists():
        return
    with _holding_server_lock(folder):
        handles = DiskList(path)
        try:
            pids = handles.get()
        except ValueError:  # a process killed while pgserver rewrote the list left it cut short
            logger.warning("The embedded PostgreSQL's list of users {path} was unreadable; starting it anew", path=path)
            handles.put([])
            return
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        if alive != pids:
            logger.info("Forgetting {count} exited users of the embedded PostgreSQL", count=len(pids) - len(alive))
            handles.put(alive)


_URL_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*)://")


def postgres_url(value: str, setting: str = "DATABASE_URL") -> str:
    """`value` when it is a PostgreSQL connection string (a `postgresql://` or `postgres://` URL, or libpq's
    `key=value` form); otherwise `DatabaseUnavailable` naming `setting` (never the value, which may hold a password),
    instead of the driver's puzzle about a missing "=" once a connection is tried."""
    from psycopg.conninfo import conninfo_to_dict

    # The scheme alone, read by hand: `urlsplit` raises on a password with a bare "[" or "]", which libpq accepts.
    scheme = match.group(1).lower() if (match := _URL_SCHEME.match(value)) else ""
    if scheme in ("postgresql", "postgres"):
        return value
    if not scheme:
        try:
            if conninfo_to_dict(value):
                return value
        except Exception:  # noqa: BLE001, S110 - any parse failure is the sentence below
            pass
    raise DatabaseUnavailable(
        f"{setting} is not a PostgreSQL URL: set it to a postgresql:// URL (such as "
        "postgresql://localhost:5432/research), or leave it empty for the embedded PostgreSQL."
    )


def database_url(settings: Settings | None = None) -> str:
    """The connection string of the knowledge base's PostgreSQL, starting the embedded one if needed."""
    settings = settings or get_settings()
    if settings.database_url is not None:
        return postgres_url(settings.database_url.get_secret_value())
    folder = settings.data_dir / "pg"
    with _LOCK:
        server = _SERVERS.get(folder)
        url = server.get_uri() if server is not None else _start_embedded(folder)  # type: ignore[attr-defined]
        _URL_KEYS[url] = str(folder)
        return url


def _database_key(settings: Settings) -> str:
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    return str(settings.data_dir / "pg")


def _note_made(key: str, resource: tuple[str, object]) -> None:
    """Record a server or pool just made (under `_LOCK`) as the leases' when its database is leased."""
    if _LEASES.get(key, 0) > 0:
        _LEASED.setdefault(key, []).append(resource)


class DatabaseLease:
    """A claim on the settings' database until `close()`: the servers and pools made for it meanwhile are closed
    when its last lease closes (a context manager too). Taking one starts nothing; the database starts on first use.

    Usage:
    ```python
    with DatabaseLease(settings) as lease:
        pool = lease.pool()  # made now, closed at the end of the block (unless another lease still holds it)
    ```
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.key = _database_key(self.settings)
        self.closed = False
        with _LOCK:
            _LEASES[self.key] = _LEASES.get(self.key, 0) + 1

    def url(self) -> str:
        """The database's connection string (starting the embedded server if needed)."""
        return database_url(self.settings)

    def pool(self):  # noqa: ANN201 - psycopg_pool is imported lazily
        """The database's shared connection pool."""
        return connection_pool(self.settings)

    def close(self) -> None:
        """Give the claim up (idempotent); the last lease closes what was made under the leases."""
        with _LOCK:
            if self.closed:
                return
            self.closed = True
            _LEASES[self.key] -= 1
            if _LEASES[self.key] > 0:
                return
            del _LEASES[self.key]
            made = _LEASED.pop(self.key, [])
            pools = [_POOLS.pop(url) for kind, url in made if kind == "pool" and url in _POOLS]
            servers = [_SERVERS.pop(where) for kind, where in made if kind == "server" and where in _SERVERS]
            for url in [url for url, key in _URL_KEYS.items() if key == self.key and servers]:
                del _URL_KEYS[url]
        for pool in pools:
            pool.close()  # type: ignore[attr-defined]
        for server in servers:
            server.cleanup()  # type: ignore[attr-defined]

    def __enter__(self) -> DatabaseLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def describe_database(settings: Settings | None = None) -> str:
    """Where the database is, for status pages: its hosts, ports and database, never the user or password; a
    sentence saying DATABASE_URL cannot be read when it cannot (never raises)."""
    from psycopg.conninfo import conninfo_to_dict

    settings = settings or get_settings()
    if settings.database_url is None:
        return f"embedded PostgreSQL in {settings.data_dir / 'pg'}"
    try:
        # Read as libpq reads it (URL or key=value; a password with "[" or "]", several hosts), not by `urlsplit`.
        parts = conninfo_to_dict(postgres_url(settings.database_url.get_secret_value()))
    except DatabaseUnavailable:
        return "DATABASE_URL cannot be read: it is not a PostgreSQL URL"
    except Exception:  # noqa: BLE001 - the driver's message may quote the password
        return "DATABASE_URL cannot be read as a PostgreSQL connection string"
    hosts = str(parts.get("host") or parts.get("hostaddr") or "").split(",")
    ports = str(parts.get("port") or "").split(",")
    if len(ports) == 1:
        ports = ports * len(hosts)
    places = []
    for host, port in zip(hosts, ports + [""] * len(hosts), strict=False):
        if not host:
            place = "local socket"
        elif host.startswith("/"):
            place = f"local socket in {host}"
        else:
            place = f"[{host}]" if ":" in host else host
        places.append(place + (f":{port}" if port else ""))
    database = parts.get("dbname")
    return f"PostgreSQL at {', '.join(places)}{'/' + database if database else ''}"


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
        _note_made(_URL_KEYS.get(url, url), ("pool", url))
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
