"""The Ask page over the demo corpus: a question, a cited answer, the chunk inspector; and its error paths."""

import uuid

import pytest
from streamlit.testing.v1 import AppTest

from components.contracts.selection import DEFAULT_SOURCES
from tests.app.conftest import APP_DIR, run_page
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
        at = ask(at, "When did Neo Technology bring out the Cypher query language?")
        assert not at.exception
        headings = [element.value for element in at.markdown if element.value.startswith("### ")]
        assert headings == ["### 2011"]  # a short answer the confidence is sure of
        assert any("Sources chosen from the question" in element.value for element in at.caption)
        # Document sentences are shown as text: their citation marks come escaped ("\\[1\\]").
        answer = next(
            element.value for element in at.markdown if "\\[1\\]" in element.value and "Cypher" in element.value
        )
        assert not answer.startswith("2011 \\[")  # the short answer is shown once, above the sentences

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


def _answered(short_answer: str, confidence: float | None, sure: bool) -> dict:
    from pipelines.research_result import AnswerPart, ResearchResult, SentenceCheck

    sentence = "Orvelle Dunmark founded the Kestrel Lantern Works in 1874 [1]."
    note = "Not sure of the short answer; the cited sentences are what the sources say."
    sentences = [SentenceCheck(text=sentence, citations=[1], supported=True, support_score=1.0)]
    if not sure:
        sentences.append(SentenceCheck(text=note, supported=True, support_score=1.0, abstains=True))
    result = ResearchResult(
        question="Who founded the Kestrel Lantern Works?",
        answer=" ".join(sentence.text for sentence in sentences),
        short_answer=short_answer,
        short_answer_confidence=confidence,
        parts=[
            AnswerPart(
                question="Who founded the Kestrel Lantern Works",
                short_answer="Orvelle Dunmark",
                short_answer_confidence=confidence,
                sure=sure,
            )
        ],
        sentences=sentences,
    )
    return {"question": result.question, "result": result}


@pytest.mark.integration
def test_a_sure_headline_has_a_badge_and_an_unsure_part_a_warning_instead(demo_collection):
    from app import services

    at = AppTest.from_file(str(APP_DIR / "pages" / "ask.py"), default_timeout=180)
    at.session_state[services.HISTORY] = [_answered("Orvelle Dunmark", 0.93, True)]
    at.run()
    assert not at.exception
    markdown = [element.value for element in at.markdown]
    assert "### Orvelle Dunmark" in markdown
    assert any("green-badge" in value and "Sure of the short answer" in value for value in markdown)
    assert not at.warning

    at.session_state[services.HISTORY] = [_answered("", 0.31, False)]
    at.run()
    assert not at.exception
    markdown = [element.value for element in at.markdown]
    assert not any(value.startswith("### ") for value in markdown)  # no headline
    assert [element.value for element in at.warning] == [
        "**Not sure of the short answer.** No headline is given: read the cited sentences below."
    ]
    answer = next(value for value in markdown if "Kestrel Lantern Works in 1874" in value)
    assert answer.startswith("Orvelle Dunmark founded")  # it opens with the best cited sentence ...
    assert "Not sure" not in answer  # ... and the note is said once, by the warning
    assert not any("Sure of the short answer" in value for value in markdown)

    # A part held back (its span answers a description of the question) has no confidence: the warning all the same.
    at.session_state[services.HISTORY] = [_answered("", None, False)]
    at.run()
    assert not at.exception
    assert [element.value for element in at.warning] == [
        "**Not sure of the short answer.** No headline is given: read the cited sentences below."
    ]
    assert not any("Sure of the short answer" in element.value for element in at.markdown)
