"""The Ask page over the demo corpus: a question, a cited answer, the chunk inspector; and its error paths."""

import uuid

import pytest
from streamlit.testing.v1 import AppTest

from components.contracts.selection import DEFAULT_SOURCES
from tests.app.conftest import run_page
from tests.components.knowledge_base.conftest import environment


@pytest.fixture(scope="module")
def demo_collection(database_url):
    """A collection holding the demo corpus, ingested once for the module."""
    import streamlit as st

    from components.knowledge_base.factory import open_knowledge_base
    from ingest.demo import ensure_demo_corpus

    name = f"app_{uuid.uuid4().hex[:8]}"
    with environment({"KB_COLLECTION": name}):
        report = ensure_demo_corpus(open_knowledge_base(collection=name))
        assert report is not None and report.chunks_written > 0
        st.cache_resource.clear()
        yield name
    st.cache_resource.clear()


def ask(at: AppTest, question: str, sources: list[str] | None = None) -> AppTest:
    at.text_area[0].input(question)
    if sources is not None:
        at.multiselect[0].set_value(sources)
    at.button[0].click()
    return at.run()


@pytest.mark.integration
class TestAskPage:
    def test_question_gets_a_cited_answer_and_inspectable_evidence(self, demo_collection):
        at = run_page("ask.py")
        at = ask(at, "When did pgvector add the HNSW index type?", sources=["kb"])
        assert not at.exception
        assert not at.error
        text = " ".join(element.value for element in at.markdown)
        assert "\\[1\\]" in text  # the answer cites its first chunk (document text is escaped, never rendered)
        assert "kb_dense" in text and "success" in text  # per-source status chips
        labels = [expander.label for expander in at.expander]
        assert any(label.startswith("[1] ") and "pgvector" in label.lower() for label in labels)
        # The inspector shows where the chunk ranked in each stage.
        assert any("fused" in str(table.value) or "ranked" in str(table.value) for table in at.table)

    def test_auto_is_the_default_and_the_short_answer_leads(self, demo_collection):
        at = run_page("ask.py")
        assert at.multiselect[0].value == list(DEFAULT_SOURCES) == ["auto"]
        at = ask(at, "Who wrote the pgvector extension?")
        assert not at.exception
        headings = [element.value for element in at.markdown if element.value.startswith("### ")]
        assert headings == ["### Andrew Kane"]
        assert any("Sources chosen from the question" in element.value for element in at.caption)
        # Document sentences are shown as text: their citation marks come escaped ("\\[1\\]").
        answer = next(
            element.value for element in at.markdown if "\\[1\\]" in element.value and "Kane" in element.value
        )
        assert not answer.startswith("Andrew Kane \\[")  # the short answer is shown once, above the sentences

    def test_pinning_a_chunk_puts_it_on_the_evidence_board(self, demo_collection):
        at = run_page("ask.py")
        at = ask(at, "Who wrote pgvector?")
        pin = next(button for button in at.button if button.label == "Pin to the evidence board")
        at = pin.click().run()
        assert not at.exception
        assert len(at.session_state["pinned"]) == 1

    def test_filters_restrict_the_evidence(self, demo_collection):
        at = run_page("ask.py")
        at.multiselect[1].set_value(["pdf"])  # the demo corpus has no PDF: nothing may come back
        at = ask(at, "When did pgvector add the HNSW index type?", sources=["kb"])
        assert not at.exception
        assert any("No evidence was found" in element.value for element in at.info)

    def test_empty_question_is_refused_with_a_sentence(self, demo_collection):
        at = run_page("ask.py")
        at = ask(at, "   ")
        assert not at.exception
        assert any("Type a question first" in element.value for element in at.error)

    def test_no_source_is_refused_with_a_sentence(self, demo_collection):
        at = run_page("ask.py")
        at = ask(at, "Who wrote pgvector?", sources=[])
        assert any("Pick at least one source" in element.value for element in at.error)
