"""`research ingest` and `research docs` through `pipelines.cli.main`, against the real knowledge base."""

from __future__ import annotations

import io
import sys

import pytest

from pipelines.cli import main


@pytest.fixture()
def knowledge_base(monkeypatch, collection_name, database_url):
    """The settings point at a fresh collection; the CLI opens it through the factory."""
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import reload_settings

    monkeypatch.setenv("KB_COLLECTION", collection_name)
    store = open_knowledge_base(reload_settings())
    yield store
    store.drop()
    monkeypatch.delenv("KB_COLLECTION")
    reload_settings()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.integration
class TestIngestCommand:
    def test_no_paths_is_a_user_error(self, knowledge_base, capsys) -> None:
        assert main(["ingest"]) == 1
        assert capsys.readouterr().err.strip() == (
            "research: Give at least one file or folder to ingest, or --demo for the demo corpus."
        )

    def test_folder_without_supported_files(self, knowledge_base, work_dir, capsys) -> None:
        (work_dir / "data.csv").write_text("a,b")
        assert main(["ingest", str(work_dir)]) == 0
        expected = f"No files to ingest: nothing under {work_dir} has a supported suffix"
        assert capsys.readouterr().out.startswith(expected)
        assert knowledge_base.count_documents() == 0

    def test_failures_reported_after_the_rest_is_ingested(self, knowledge_base, work_dir, capsys) -> None:
        (work_dir / "good.md").write_text("# Good\n\nIn June 2019 deepset released German BERT.")
        (work_dir / "bad.docx").write_bytes(b"not a word file")
        assert main(["ingest", str(work_dir), str(work_dir / "missing.txt")]) == 1
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("1 added, 0 replaced, 0 unchanged, 2 failed; ")
        assert f"  failed: {work_dir / 'missing.txt'}: No such file or folder." in out
        assert any(line.endswith("It could not be read as a Word (.docx) document.") for line in out)
        assert knowledge_base.count_documents() == 1

        assert main(["ingest", "--json", str(work_dir / "good.md")]) == 0
        assert '"skipped": [' in capsys.readouterr().out


@pytest.mark.integration
class TestDocsCommand:
    def test_list_show_and_delete(self, knowledge_base, work_dir, capsys, monkeypatch) -> None:
        (work_dir / "neo4j.md").write_text(
            "---\ntitle: Neo4j history\ndate: 2010-02-01\n---\n## Cypher\n\nIn 2011 Neo Technology introduced Cypher."
        )
        (work_dir / "qdrant.txt").write_text("Qdrant notes\n\nQdrant raised a seed round in April 2023.")
        assert main(["ingest", str(work_dir)]) == 0
        capsys.readouterr()

        assert main(["docs", "list"]) == 0
        listing = capsys.readouterr().out
        assert "Neo4j history" in listing and "Qdrant notes" in listing and "Documents 1-2 of 2." in listing
        assert main(["docs", "list", "--search", "neo4j", "--limit", "5"]) == 0
        listing = capsys.readouterr().out.splitlines()
        assert len(listing) == 3 and "2010-02-01" in listing[1] and listing[-1] == "Documents 1-1 of 1."
        document_id = listing[1].split()[0]
        assert main(["docs", "list", "--search", "nothing-like-this"]) == 0
        assert capsys.readouterr().out.strip() == "No documents matching 'nothing-like-this'."
        with pytest.raises(SystemExit):
            main(["docs", "list", "--limit", "0"])
        capsys.readouterr()

        assert main(["docs", "show", document_id]) == 0
        shown = capsys.readouterr().out
        assert "title         Neo4j history" in shown and "section 'Cypher'" in shown
        assert "In 2011 Neo Technology introduced Cypher." in shown
        assert main(["docs", "show", "doc_missing"]) == 1
        assert "No document has the id 'doc_missing'" in capsys.readouterr().err

        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        assert main(["docs", "delete", document_id]) == 1
        assert capsys.readouterr().err.strip() == (
            f"research: Not deleting {document_id}: confirming needs an interactive terminal; pass --yes to delete."
        )
        monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
        assert main(["docs", "delete", document_id]) == 0
        assert capsys.readouterr().out.strip().endswith("Nothing deleted.")
        assert knowledge_base.get_document(document_id) is not None

        assert main(["docs", "delete", document_id, "--yes"]) == 0
        assert capsys.readouterr().out.strip() == f"Deleted {document_id} (Neo4j history)."
        assert knowledge_base.get_document(document_id) is None and knowledge_base.count_documents() == 1


def _tables_named(prefix: str) -> int:
    from components.graph.postgres_store import PostgresGraphStore

    with PostgresGraphStore("probe")._get_pool().connection() as conn:
        return conn.execute("SELECT count(*) FROM pg_class WHERE relname LIKE %s", (prefix + "%",)).fetchone()[0]


@pytest.mark.integration
def test_docs_of_a_collection_that_does_not_exist_create_nothing(knowledge_base, monkeypatch, capsys) -> None:
    import uuid

    from components import settings as settings_module
    from components.settings import reload_settings

    missing = f"{knowledge_base.collection}_{uuid.uuid4().hex[:3]}"  # close to the collection's name: listed first
    monkeypatch.setenv("KB_COLLECTION", missing)
    reload_settings()
    for argv in (["docs", "list"], ["docs", "show", "doc_1"], ["docs", "delete", "doc_1", "--yes"]):
        assert main(argv) == 1
        error = capsys.readouterr().err
        assert error.startswith(f"research: The pgvector knowledge base has no collection {missing!r} (it holds ")
        assert repr(knowledge_base.collection) in error and error.count("\n") == 1
        assert "_postings" not in error and "_graph_" not in error  # the tables beside a collection are none
    # The default collection before anything was ingested has nothing to list, and is not created either.
    default_setting = settings_module.default_setting
    monkeypatch.setattr(
        settings_module, "default_setting", lambda name: missing if name == "kb_collection" else (default_setting(name))
    )
    assert main(["docs", "list"]) == 0 and capsys.readouterr().out == "No documents.\n"
    assert main(["docs", "show", "doc_1"]) == 1 and "No document has the id 'doc_1'" in capsys.readouterr().err
    assert _tables_named(missing) == 0
