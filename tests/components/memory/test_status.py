"""`memory_status`: the memory row of `research status`."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from components.memory import MemoryWriter
from components.memory.status import memory_status


class TestMemoryStatus:
    @pytest.mark.integration
    def test_embedded_counts_interactions(self, settings, database_url, embedding_model) -> None:  # noqa: ANN001
        before = memory_status(settings)[1]["interactions"]
        assert MemoryWriter(backend="embedded", timeout_s=10).run(query="Q?", answer="A.")["status"].ok
        detail, counts = memory_status(settings)
        assert detail.startswith("PostgreSQL table memory_interactions") and counts["interactions"] == before + 1

    def test_zep_counts_sessions_and_needs_a_url(self, settings, zep_env) -> None:  # noqa: ANN001
        zep_settings = settings.model_copy(
            update={"memory_backend": "zep", "zep_api_url": zep_env.base_url, "zep_api_key": SecretStr(zep_env.api_key)}
        )
        assert (
            MemoryWriter(backend="zep", zep_api_url=zep_env.base_url)
            .run(query="Q?", answer="A.", session_id="x")["status"]
            .ok
        )
        assert memory_status(zep_settings) == (f"Zep at {zep_env.base_url}", {"sessions": 1})
        with pytest.raises(RuntimeError, match="ZEP_API_URL"):
            memory_status(settings.model_copy(update={"memory_backend": "zep", "zep_api_url": None}))
