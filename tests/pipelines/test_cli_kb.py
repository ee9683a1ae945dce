"""`research kb copy`: a knowledge base moves pgvector -> Milvus -> Qdrant with its embeddings, nothing re-embedded."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from pipelines.cli import main
from tests.components.knowledge_base.conftest import environment
from tests.components.knowledge_base.kb_corpus import corpus
from tests.fresh_process import run_python


@pytest.fixture()
def engines(tmp_path, database_url):
    values = {
        "MILVUS_URI": str(tmp_path / "milvus" / "kb.db"),
        "QDRANT_PATH": str(tmp_path / "qdrant"),
        "KB_COLLECTION": f"copy_{uuid.uuid4().hex[:8]}",
    }
    with environment(values):
        yield values
        from components.knowledge_base.factory import close_knowledge_bases

        close_knowledge_bases()


def _store(backend: str):
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import get_settings

    return open_knowledge_base(get_settings().model_copy(update={"kb_backend": backend}))


@pytest.mark.integration
class TestKnowledgeBaseCopy:
    def test_copy_moves_documents_chunks_and_embeddings_between_all_backends(self, engines, embedding_model, capsys):
        source = _store("pgvector")
        for document, chunks in corpus(embedding_model):
            source.upsert_document(document, chunks)
        assert main(["kb", "copy", "--from", "pgvector", "--to", "milvus"]) == 0
        assert "Copied 4 documents (8 chunks) from pgvector:" in capsys.readouterr().out
        assert main(["kb", "copy", "--from", "milvus", "--to", "qdrant", "--batch-size", "3"]) == 0
        query = embedding_model.embed_one("How do I keep a sourdough starter?")
        expected = [(h.chunk.chunk_id, round(h.cosine, 4)) for h in source.dense_search(query, 5)]
        for backend in ("milvus", "qdrant"):
            store = _store(backend)
            assert store.count_documents() == 4 and store.count_chunks() == 8
            assert [(h.chunk.chunk_id, round(h.cosine, 4)) for h in store.dense_search(query, 5)] == expected
            document, chunks = store.get_document("doc-milvus")
            assert document.title == "Full-text search in Milvus" and [c.metadata["page_number"] for c in chunks] == [
                1,
                2,
                3,
            ]
            copied = {c.chunk_id: c.embedding for _, cs in store.iter_chunks() for c in cs}
            original = {c.chunk_id: c.embedding for _, cs in source.iter_chunks() for c in cs}
            assert all(np.allclose(copied[key], original[key], atol=1e-6) for key in original)

    def test_copying_onto_itself_is_a_user_error(self, engines, capsys):
        assert main(["kb", "copy", "--from", "qdrant", "--to", "qdrant"]) == 1
        assert "already on qdrant" in capsys.readouterr().err

    def test_a_locked_local_folder_is_one_sentence(self, engines):
        holder = _store("qdrant")  # this process holds the Qdrant folder
        assert holder.count_chunks() == 0
        command = "import sys; from pipelines.cli import main; sys.exit(main())"
        done = run_python(command, "kb", "copy", "--from", "qdrant", "--to", "milvus", env=engines)
        assert done.returncode == 1
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in done.stderr
        assert lines[0].startswith("research: The Qdrant local folder") and "open in another process" in lines[0]
        assert "QDRANT_URL" in lines[0] and "KB_BACKEND=pgvector" in lines[0]


@pytest.mark.integration
def test_a_source_that_does_not_say_what_counted_its_terms_is_counted_again_in_the_copy(engines, embedding_model):
    """A base from before text analyses were recorded opens unchecked; its copy is recorded with this version's
    analysis, so the copy's terms are this version's count, not the source's unknown one carried under that record."""
    import json

    import psycopg

    source = _store("pgvector")
    document, chunks = next(iter(corpus(embedding_model)))
    chunks[0].term_counts = {"quillfeather": 4}  # what an analysis this version does not know counted
    source.upsert_document(document, chunks)
    table = f"{source.collection}_chunk_terms"
    comment = "SELECT obj_description(%s::regclass, 'pg_class')"
    with source.registry.connection() as conn:
        marker = json.loads(conn.execute(comment, (table,)).fetchone()[0])
        del marker["text_analysis"]
        conn.execute(f'COMMENT ON TABLE "{table}" IS {psycopg.sql.quote(json.dumps(marker))}')
    assert _store("pgvector").term_statistics(["quillfeather"]).df["quillfeather"] == 1
    assert main(["kb", "copy", "--from", "pgvector", "--to", "qdrant"]) == 0
    target = _store("qdrant")
    assert target.count_chunks() == len(chunks)
    statistics = target.term_statistics(["quillfeather", "search"])
    assert statistics.df["quillfeather"] == 0 and statistics.df["search"] > 0
