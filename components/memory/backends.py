"""Making the memory store a configuration names: the embedded PostgreSQL table or Zep.

Nothing is cached here: `MemoryRecall` and `MemoryWriter` each make their store in `warm_up()` (or are given
one), through `MemoryComponent`. The embedded tables share the process's one connection pool of the database
(`components/database.py`).
"""

from __future__ import annotations

import threading
from typing import Any

from haystack import logging
from haystack.utils import Secret

from components.embedding import EmbeddingModel, get_embedding_model
from components.memory.embedded import EmbeddedMemoryStore, validate_table_name
from components.memory.store import Interaction, MemoryStore, MemoryUnavailable
from components.memory.zep import ZepMemoryStore
from components.redaction import cut
from components.resilience import SourceGuard
from components.resilience.guard import BreakerPolicy, GuardedComponent, guard_policy_from_settings
from components.settings import get_settings
from components.text.language import use_language_pipeline

logger = logging.getLogger(__name__)

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
    settings: Any = None,
) -> MemoryStore:
    """A new store for this configuration, unconnected (it connects on first use); `backend`, `zep_api_url` and
    `zep_api_key` left None are the settings' (`MEMORY_BACKEND`, `ZEP_API_URL`, `ZEP_API_KEY`).
    `MemoryUnavailable` when Zep is chosen but has no URL."""
    settings = settings or get_settings()
    backend = validate_backend(backend) or settings.memory_backend
    if backend == "zep":
        url = zep_api_url or settings.zep_api_url
        if not url:
            raise MemoryUnavailable("The zep memory backend needs ZEP_API_URL.")
        key = zep_api_key or (settings.zep_api_key.get_secret_value() if settings.zep_api_key else None)
        return ZepMemoryStore(url, key, timeout_s=timeout_s)
    return EmbeddedMemoryStore(table, settings=settings)


class MemoryComponent(GuardedComponent):
    """What `MemoryRecall` and `MemoryWriter` share: the store's configuration (their init parameters of the same
    names), the store made from it the first time it is needed (in `warm_up()`, or in a run when warming up could
    not make it: a Zep without URL is then that run's status, not a pipeline that cannot start) or the one given
    (tests, notebooks; never serialised), the embedding model, and the source's guard. Thread-safe.
    """

    in_process_parameters = ("memory_store",)
    SOURCE = "memory"  # the name of the component's guard and statuses

    def __init__(
        self,
        backend: str | None = None,
        table: str = "memory_interactions",
        zep_api_url: str | None = None,
        zep_api_key: Secret = Secret.from_env_var("ZEP_API_KEY", strict=False),  # noqa: B008
        embedding_model: str | None = None,
        timeout_s: float | None = None,
        retries: int | None = None,
        memory_store: MemoryStore | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        spacy_model: str | None = None,
    ) -> None:
        """The parameters of both components (a subclass's `__init__` takes them as `**shared`):

        :param backend: `embedded` or `zep` (None: MEMORY_BACKEND).
        :param table: the embedded backend's table.
        :param zep_api_url: Zep's URL (None: ZEP_API_URL); `zep_api_key` its key, an env-var secret.
        :param embedding_model: the model that embeds the remembered turns (None: EMBEDDING_MODEL).
        :param timeout_s: how long one call may take (None: TOOL_TIMEOUT_S); `retries` (None: TOOL_RETRIES).
        :param memory_store: a store to use instead (tests, notebooks; never serialised).
        :param breaker: the source's circuit breaker (`BreakerPolicy.from_settings`).
        :param spacy_model: the spaCy pipeline whose lemmas the turns' terms are read with (None: SPACY_MODEL).
        """
        if memory_store is not None and not isinstance(memory_store, MemoryStore):
            raise ValueError(f"memory_store must be a MemoryStore or None, not {type(memory_store).__name__}")
        if embedding_model is not None and not embedding_model:
            raise ValueError("embedding_model must name the embedding model, or be None for EMBEDDING_MODEL")
        # A None takes the setting in force as the component is built; `to_dict` writes the values used.
        settings = get_settings()
        self.backend = validate_backend(backend) or settings.memory_backend
        self.table = validate_table_name(table)
        self.zep_api_url = zep_api_url or settings.zep_api_url
        self.zep_api_key = zep_api_key
        self.embedding_model = embedding_model or settings.embedding_model
        # The spaCy pipeline whose lemmas the recalled turns' terms are read with.
        self.spacy_model = spacy_model or settings.spacy_model
        self.timeout_s = timeout_s if timeout_s is not None else settings.tool_timeout_s
        self.retries = retries if retries is not None else settings.tool_retries
        self._settings = settings  # the database and a ZEP_API_KEY written in `.env`, for the store made later
        self._guard = SourceGuard(
            self.SOURCE, guard_policy_from_settings(self, breaker, timeout_s=self.timeout_s, retries=self.retries)
        )
        self._model: EmbeddingModel | None = None
        self._given_store = memory_store
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Make the memory store (it connects on first use) and load the embedding model (shared by the process,
        see `components/embedding/model.py`)."""
        try:
            self._store()
        except MemoryUnavailable:
            pass  # the next run says why
        if self._model is None:
            use_language_pipeline(self.spacy_model)
            self._model = get_embedding_model(self.embedding_model)

    def session_turns(self, session_id: str, limit: int = 3) -> list[Interaction]:
        """The session's latest `limit` interactions by time, oldest first (what a follow-up question refers to);
        [] when there is no session or the store cannot say (a follow-up is then answered as typed)."""
        if not (session_id or "").strip():
            return []
        try:
            return self._store().latest(session_id.strip(), limit)
        except Exception as exc:  # noqa: BLE001 - an unreachable memory costs the rewrite, never the question
            logger.warning("The session's earlier turns could not be read: {problem}", problem=cut(str(exc), 200))
            return []

    def _store(self) -> MemoryStore:
        """The store, made now if it was not yet; raises `MemoryUnavailable` when it cannot be made."""
        if self._given_store is None:
            with self._lock:
                if self._given_store is None:
                    key = self.zep_api_key.resolve_value() if self.zep_api_key is not None else None
                    self._given_store = make_memory_store(
                        self.backend,
                        self.table,
                        self.zep_api_url,
                        key,
                        self._guard.policy.timeout_s,
                        settings=self._settings,
                    )
        return self._given_store
