"""AppTest tests of the Evidence board, Documents and Ingest pages: their main path and an error path each."""

import datetime as dt
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from components.contracts import ContextChunk

# The package, imported before AppTest puts app/pages (which holds an ingest.py page) on the import path.
from ingest.ingestor import Ingestor
from tests.app.conftest import APP_DIR, app_page, run_page
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures


def arxiv_chunk() -> ContextChunk:
    return ContextChunk(
        id="arxiv:1706.03762:0",
        source_type="arxiv",
        text="The dominant sequence transduction models are based on complex recurrent or convolutional networks.",
        semantic_relevance=0.8,
        source_id="1706.03762",
        source_title="Attention Is All You Need",
        source_url="https://arxiv.org/abs/1706.03762",
        source_date=dt.date(2017, 6, 12),
        metadata={
            "paper_id": "1706.03762",
            "paper_title": "Attention Is All You Need",
            "authors": ["Ashish Vaswani", "Noam Shazeer"],
            "publication_date": "2017-06-12",
            "arxiv_categories": ["cs.CL"],
            "arxiv_url": "https://arxiv.org/abs/1706.03762",
        },
    )


class TestEvidenceBoard:
    def test_empty_board_says_how_to_pin(self):
        at = run_page("evidence.py")
        assert any("Nothing pinned yet" in element.value for element in at.info)

    def test_pinned_chunk_is_shown_annotated_and_exported(self):
        at = app_page("evidence.py")
        chunk = arxiv_chunk()
        at.session_state["pinned"] = {chunk.id: {"chunk": chunk, "question": "What replaced recurrence?", "note": ""}}
        at.run()
        assert not at.exception
        at.text_area[0].input("Key claim of the paper.")
        at.run()
        assert at.session_state["pinned"][chunk.id]["note"] == "Key claim of the paper."
        brief = " ".join(element.value for element in at.code)  # the brief quotes documents: shown as written
        assert "Attention Is All You Need" in brief and "References" in brief
        assert "Key claim of the paper." in brief


@pytest.mark.integration
class TestDocumentsPage:
    def test_empty_knowledge_base_explains_how_to_ingest(self, app_env):
        at = run_page("documents.py")
        assert any("research ingest" in element.value for element in at.info)

    def test_lists_documents_and_reports_a_search_without_match(self, app_env):
        from components.knowledge_base.factory import open_knowledge_base
        from ingest.ingestor import Ingestor

        store = open_knowledge_base(collection=app_env)
        report = Ingestor(store=store).ingest_text(
            "Qdrant is a vector database written in Rust. It was first released in 2021.",
            title="Qdrant notes",
            source="note:qdrant",
        )
        assert report.added
        at = run_page("documents.py")
        assert "1 documents" in " ".join(element.value for element in at.caption)
        assert at.dataframe[0].value["title"].tolist() == ["Qdrant notes"]
        at.text_input[0].input("no such title")
        at.run()
        assert any("No document matches" in element.value for element in at.info)


@pytest.mark.integration
class TestIngestPage:
    def test_nothing_to_ingest_is_refused_with_a_sentence(self, app_env):
        at = run_page("ingest.py")
        at.button[0].click().run()
        assert not at.exception
        assert any("Add a file, a URL or an arXiv id first" in element.value for element in at.error)

    def test_arxiv_paper_is_ingested_and_an_unknown_id_reported(self, app_env, arxiv_server):  # noqa: F811
        from tests.components.knowledge_base.conftest import environment

        with environment({"ARXIV_API_URL": arxiv_server.url}):
            at = run_page("ingest.py")
            at.text_input[0].input("1706.03762 9999.99999")
            at.button[0].click().run()
        assert not at.exception
        metrics = {metric.label: metric.value for metric in at.metric}
        assert metrics["Added"] == "1"
        assert metrics["Failed"] == "1"
        assert any("9999.99999" in element.value.replace("\\", "") for element in at.error)  # shown escaped

    def test_what_the_hooks_tell_after_an_ingest_is_shown(self, app_env, arxiv_server, monkeypatch):  # noqa: F811
        from tests.components.knowledge_base.conftest import environment

        note = "1 document has no knowledge graph because extraction failed."
        monkeypatch.setattr(Ingestor, "hook_notes", lambda self: [note])
        with environment({"ARXIV_API_URL": arxiv_server.url}):
            at = run_page("ingest.py")
            at.text_input[0].input("1706.03762")
            at.button[0].click().run()
        assert not at.exception
        assert [element.value.replace("\\", "") for element in at.info] == [note]  # shown escaped


def test_an_invalid_setting_is_one_sentence_on_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    from components.settings import get_settings, reload_settings

    monkeypatch.setenv("KB_BACKEND", "bogus-backend-value")
    get_settings.cache_clear()  # the app reads the settings afresh
    try:
        at = AppTest.from_file(str(APP_DIR / "main.py"), default_timeout=60).run()
    finally:
        monkeypatch.delenv("KB_BACKEND")
        reload_settings()
    assert not at.exception, at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith("Invalid setting: KB_BACKEND: Input should be 'pgvector', 'milvus' or 'qdrant'.")
    assert "bogus-backend-value" not in message


def test_the_navigation_lists_every_page_of_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st

    listed: list = []

    def navigation(pages: list, **kwargs: object) -> SimpleNamespace:
        listed.extend(pages)
        return SimpleNamespace(run=lambda: None)

    monkeypatch.setattr(st, "navigation", navigation)
    at = AppTest.from_file(str(APP_DIR / "main.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert sorted(page.url_path for page in listed) == sorted(path.stem for path in (APP_DIR / "pages").glob("*.py"))
