"""The process's one set-up, and the runtime that owns what a running application shares.

`setup()` is the only place that changes process-wide behaviour, once per process (idempotent), called by every
entry point: the CLI (before any command), the HTTP server and MCP app, the Hayhooks wrappers, the Streamlit app,
the evaluations and the benchmarks, each through `Runtime.start()` or directly. It

- redacts and bounds every log record (a log record factory and Hayhooks' loguru patcher, `components/redaction.py`);
- puts our packages on Haystack's deserialisation allowlist (`ALLOWED_MODULES`);
- wraps Haystack's tracer in the per-component timer (`pipelines/timing.py`; without it `timings` hold only the total);
- from then on, freezes the heap once each pipeline is warmed (`pipelines/heap.py`): the models, parsers and pipelines a
  warm-up loads live as long as the process, and a full garbage collection would otherwise walk all of them again,
  seconds in the middle of one question.

Nothing else patches: constructing a catalog or a pipeline changes no process-wide state.

A `Runtime` owns what the pipelines of one application share, from `start()` to `close()` (or its `with` block):
its pipeline catalog (built from its settings' catalog file on first use, warmed per pipeline on first use, never
shared with another runtime) and a lease on its database (the embedded PostgreSQL and the connection pool its
components borrow from; the last lease to close closes them, `components/database.py`). Two runtimes in one process
have two catalogs. The caches that stay process-wide are pure functions of their arguments and are documented where
they live: models loaded by name (the embedding model, which each component loads in `warm_up()` by the name its
init parameters give, `components/embedding/model.py`; the spaCy pipeline, `components/text/language.py`), and
analyses of a text (its parse, its terms), which callers cannot change.

Usage:
```python
with Runtime() as runtime:  # setup(), then the settings' catalog and database
    result = runtime.catalog.research("Who founded the archive?", sources=["kb"])
# the catalog is dropped, and the pools and embedded server it made are closed
```

An entry point that serves one application for its whole life (a CLI command, the HTTP server's wrappers) uses
`process_runtime()`, started on first use and closed by `close_process_runtime()` (the CLI after each command, and at
exit).
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from components.redaction import install_log_redaction
from components.settings import Settings, get_settings

_SETUP_LOCK = threading.Lock()
_SET_UP: set[str] = set()  # which parts of `setup` ran: "logging", "pipelines"


def setup(pipelines: bool = True) -> None:
    """The process-wide set-up (idempotent; each part runs once per process).

    `pipelines=False` does only the log redaction, which needs no Haystack import: the CLI does that before every
    command, so a command that never runs a pipeline (`research --help`, `ask` through the server) stays fast; a
    command that runs pipelines starts a `Runtime`, whose `start()` completes the set-up.
    """
    with _SETUP_LOCK:
        if "logging" not in _SET_UP:
            # Every process that answers questions (CLI, app, server, a notebook) keeps secrets out of its logs.
            install_log_redaction()
            _SET_UP.add("logging")
        if not pipelines or "pipelines" in _SET_UP:
            return
        from pipelines import heap, timing  # late: they load Haystack; `setup(pipelines=False)` must not
        from pipelines.catalog import allow_our_modules  # late: the catalog loads Haystack, the graph and generation

        allow_our_modules()
        timing.install()
        heap.freeze_after_warm_ups()
        _SET_UP.add("pipelines")


def is_set_up(part: str = "pipelines") -> bool:
    """Whether `setup` has done `part` ("logging" or "pipelines") in this process."""
    return part in _SET_UP


class RuntimeClosed(RuntimeError):
    """The runtime was used before `start()` or after `close()`."""


class Runtime:
    """What one application's pipelines share, from `start()` to `close()`; see the module's docstring."""

    def __init__(self, settings: Settings | None = None, *, pipelines_file: Any = None) -> None:
        self.settings = settings or get_settings()
        self.pipelines_file = pipelines_file  # None: PIPELINES_FILE, ./pipelines.yaml or the package's
        self._catalog: Any = None
        self._lease: Any = None  # a `DatabaseLease` from `start()`
        self._lock = threading.Lock()
        self.started = False
        self.closed = False

    def start(self) -> Runtime:
        """Set the process up (`setup`) and claim the settings' database (started on first use); returns self."""
        with self._lock:
            if self.closed:
                raise RuntimeClosed("this runtime was closed; start a new one")
            if not self.started:
                setup()
                from components.database import DatabaseLease  # late: loads Haystack; see `setup(pipelines=False)`

                self._lease = DatabaseLease(self.settings)
                self.started = True
        return self

    def _check_open(self) -> None:
        if not self.started or self.closed:
            raise RuntimeClosed("start the runtime before using it" if not self.closed else "this runtime was closed")

    @property
    def catalog(self) -> Any:
        """This runtime's pipeline catalog (a `PipelineCatalog`), made on first use."""
        self._check_open()
        with self._lock:
            if self._catalog is None:
                from pipelines.catalog import PipelineCatalog  # late: loads Haystack, the graph and generation

                self._catalog = PipelineCatalog(self.pipelines_file, settings=self.settings)
            return self._catalog

    def database_url(self) -> str:
        """The connection string of this runtime's database (the embedded PostgreSQL starts now if needed)."""
        self._check_open()
        return self._lease.url()  # type: ignore[union-attr]

    def connection_pool(self) -> Any:
        """The connection pool of this runtime's database, shared by its stores."""
        self._check_open()
        return self._lease.pool()  # type: ignore[union-attr]

    def close(self) -> None:
        """Drop the catalog (closing what its components opened) and give the database up (idempotent)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            catalog, self._catalog = self._catalog, None
            lease, self._lease = self._lease, None
        try:
            if catalog is not None:
                catalog.close()
        finally:
            if lease is not None:
                lease.close()

    def __enter__(self) -> Runtime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


_PROCESS: list[Runtime] = []
_PROCESS_LOCK = threading.Lock()
_PROCESS_EXIT: list[bool] = []  # whether `close_process_runtime` is registered to run at exit


def process_runtime() -> Runtime:
    """The runtime of this process's entry point (a CLI command, the HTTP server), started on first call."""
    with _PROCESS_LOCK:
        if not _PROCESS:
            if not _PROCESS_EXIT:
                atexit.register(close_process_runtime)
                _PROCESS_EXIT.append(True)
            _PROCESS.append(Runtime().start())
        return _PROCESS[0]


def close_process_runtime() -> None:
    """Close the entry point's runtime, if one was started (the next `process_runtime()` starts a new one)."""
    with _PROCESS_LOCK:
        runtime = _PROCESS.pop() if _PROCESS else None
    if runtime is not None:
        runtime.close()
