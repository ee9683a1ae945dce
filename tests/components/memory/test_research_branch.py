"""The memory branch as wired in the repository's `research` pipeline (pipelines.yaml)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from components.memory import MemoryWriter

REPO_CATALOG = Path(__file__).resolve().parents[3] / "pipelines.yaml"


class TestMemoryBranchWiring:
    def test_memory_feeds_fusion_ranking_and_statuses_and_the_writer_follows_the_answer(self) -> None:
        research = yaml.safe_load(REPO_CATALOG.read_text())["pipelines"]["research"]
        components = research["pipeline"]["components"]
        assert components["memory"]["type"] == "components.memory.recall.MemoryRecall"
        assert components["memory_writer"]["init_parameters"]["require_session"] is True
        edges = {(c["sender"], c["receiver"]) for c in research["pipeline"]["connections"]}
        assert {
            ("memory.documents", "joiner.documents"),
            ("memory.branch", "ranker.branch_documents"),
            ("memory.status", "statuses.statuses"),
            ("answer_builder.answer", "memory_writer.answer"),
            ("hops.ranked", "memory_writer.documents"),  # the chunks the answer read: the ranked, then a hop's
        } <= edges
        for name, socket in [
            ("question", "memory.query"),
            ("sources", "memory.sources"),
            ("as_of", "memory.as_of"),
            ("session_id", "memory.session_id"),
            ("session_id", "memory_writer.session_id"),
        ]:
            assert socket in research["inputs"][name]


@pytest.mark.integration
class TestMemoryBranchInResearch:
    def test_a_question_recalls_the_session_and_cites_it(self, database_url, embedding_model) -> None:  # noqa: ANN001
        from pipelines.catalog import PipelineCatalog

        session = f"branch-{uuid.uuid4().hex[:8]}"
        status = MemoryWriter(timeout_s=10).run(
            query="Who acquired Acme Corp?", answer="Globex acquired Acme Corp in 2021.", session_id=session
        )["status"]
        assert status.ok, status.message
        catalog = PipelineCatalog(REPO_CATALOG)
        result = catalog.run(
            "research",
            {"question": "What did we discuss about Acme Corp?", "session_id": session, "sources": ["memory"]},
        )
        statuses = {s.source: s for s in result["statuses"]}
        assert statuses["memory"].ok and statuses["memory"].total_found == 1
        assert statuses["kb_dense"].status.value == "skipped"
        [chunk] = result["chunks"]
        assert chunk.meta["source_type"] == "memory" and chunk.meta["session_id"] == session
        assert "Globex acquired Acme Corp in 2021" in result["answer"]
