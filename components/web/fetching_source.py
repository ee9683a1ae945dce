"""`FetchingSource`: what the sources that fetch text from a service and cite it in chunks (the web, arXiv) share."""

from __future__ import annotations

from typing import Any

from components.embedding import get_embedding_model
from components.resilience import SourceGuard
from components.resilience.guard import BreakerPolicy, GuardedComponent, guard_policy_from_settings
from components.settings import get_settings, setting_or
from components.text.language import use_language_pipeline
from components.validation import positive_int


class FetchingSource(GuardedComponent):
    """The init parameters of a source that fetches text from a service and chunks it (kept under their own names,
    a None taking the setting in force as the component is built; `to_dict` writes the values used), its guard, and
    the embedding model, the chunker's sentence parser and the service's client library loaded in `warm_up()`.

    A subclass names its guard's `SOURCE` and the setting of its service's URL (`API_URL_SETTING`), loads its client
    library in `_load_client()`, and takes these parameters as `**shared` (`with_base_parameters`).
    """

    SOURCE = ""
    API_URL_SETTING = ""

    def __init__(
        self,
        timeout_s: float | None = None,
        retries: int | None = None,
        api_url: str | None = None,
        model: str | None = None,
        max_response_bytes: int | None = None,
        chunk_tokens: int | None = None,
        allow_private_addresses: bool | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        spacy_model: str | None = None,
    ) -> None:
        """
        :param timeout_s: how long one call may take, retries included (None: TOOL_TIMEOUT_S).
        :param retries: retries of retryable faults (None: TOOL_RETRIES).
        :param api_url: the service's URL (None or empty: the subclass's `API_URL_SETTING`).
        :param model: the embedding model that scores the chunks (None: EMBEDDING_MODEL).
        :param max_response_bytes: the largest response read from the service (None: UPSTREAM_MAX_BYTES).
        :param chunk_tokens: the chunks' size in tokens (None: CHUNK_TOKENS).
        :param allow_private_addresses: whether links may name private addresses (None: ALLOW_PRIVATE_ADDRESSES).
        :param breaker: the source's circuit breaker (`BreakerPolicy.from_settings`).
        :param spacy_model: the spaCy pipeline the chunker reads sentences with (None: SPACY_MODEL).
        """
        self.timeout_s = setting_or(timeout_s, "tool_timeout_s")
        self.retries = setting_or(retries, "tool_retries")
        self.api_url = api_url or getattr(get_settings(), self.API_URL_SETTING)
        self.model = setting_or(model, "embedding_model")
        self.max_response_bytes = positive_int(
            "max_response_bytes", setting_or(max_response_bytes, "upstream_max_bytes")
        )
        self.chunk_tokens = positive_int("chunk_tokens", setting_or(chunk_tokens, "chunk_tokens"))
        self.allow_private_addresses = bool(setting_or(allow_private_addresses, "allow_private_addresses"))
        self.spacy_model = setting_or(spacy_model, "spacy_model")
        self._model: Any = None
        self._guard = SourceGuard(
            self.SOURCE,
            guard_policy_from_settings(
                self, breaker, timeout_s=self.timeout_s, retries=self.retries, **self._policy_overrides()
            ),
        )

    def _policy_overrides(self) -> dict[str, Any]:
        """Other values of the guard's `ResiliencePolicy` (a rate limit...), from the subclass's own parameters."""
        return {}

    def _load_client(self) -> None:
        """Import the service's client library (its first import can take seconds: not a search's latency)."""

    def warm_up(self) -> None:
        """Load the embedding model, the chunker's sentence parser and the client library (once per process)."""
        if self._model is None:
            self._load_client()
            self._model = get_embedding_model(self.model)
            use_language_pipeline(self.spacy_model)
