"""The one settings model of the research assistant.

Every value comes from an environment variable of the same name (upper case) or from a `.env` file in the
working directory. Every default is embedded and local under `RESEARCH_DATA_DIR`, so a fresh machine needs no
server. Secrets are `SecretStr` and never printed, logged or serialised.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class Settings(BaseSettings):
    """Configuration read from the environment and `.env`; see the README's settings table."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False)

    # Where everything embedded lives.
    research_data_dir: Path = Field(default=Path(".research"), description="Folder for every embedded store.")

    # Knowledge base.
    kb_backend: Literal["pgvector", "milvus", "qdrant"] = Field(default="pgvector", description="Vector store.")
    kb_collection: str = Field(default="research", description="Table / collection name of the knowledge base.")
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

    # Generation.
    generator: Literal["extractive", "openai"] = Field(default="extractive", description="Answer generator.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible chat server URL.")
    openai_api_key: SecretStr | None = Field(default=None, description="Key for the chat server.")
    openai_model: str = Field(default="gpt-4o-mini", description="Chat model name.")

    # The tool contract.
    tool_timeout_s: float = Field(default=7.0, gt=0, le=120, description="Per-source timeout in seconds.")
    question_budget_s: float = Field(default=30.0, gt=0, le=600, description="Whole-question budget in seconds.")
    tool_retries: int = Field(default=2, ge=0, le=3, description="Retries for retryable faults.")
    breaker_failures: int = Field(default=5, ge=1, le=100, description="Failures that open a source's breaker.")
    breaker_cooldown_s: float = Field(default=30.0, ge=0, le=3600, description="Seconds a tripped source is skipped.")
    cache_ttl_s: float = Field(default=0.0, ge=0, le=86400, description="Result cache lifetime; 0 turns it off.")

    # Serving.
    hayhooks_host: str = Field(default="127.0.0.1", description="Host Hayhooks binds to.")
    hayhooks_port: int = Field(default=1416, ge=1, le=65535, description="Port Hayhooks listens on.")
    api_token: SecretStr | None = Field(default=None, description="Bearer token required by the HTTP server.")

    @field_validator("database_url", "milvus_token", "qdrant_api_key", "openai_api_key", "api_token", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value in ("", None) else value

    @property
    def data_dir(self) -> Path:
        """The data folder, absolute, created on first use."""
        path = self.research_data_dir.expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()


def reload_settings() -> Settings:
    """Read the settings again (tests and the app's settings page change the environment)."""
    get_settings.cache_clear()
    return get_settings()
