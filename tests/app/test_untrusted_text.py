"""Text the product did not write is shown as text on every page and in every mode: an upstream's error in a
status caption and on the Status page, chunk text and titles in the agent mode's evidence, and the chat model's
own answer. No Markdown image, link or HTML of theirs is rendered (the AppTest sees what would be rendered)."""

from __future__ import annotations

import re

import pytest

# The package, imported before AppTest puts app/pages (which holds an ingest.py page) on the import path.
import ingest.demo  # noqa: F401
from tests.app.conftest import chat_model_with, run_page
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures

PIXEL = "![p](http://127.0.0.1:9/pixel.png)"
LINK = "[claim your prize](http://127.0.0.1:9/prize)"
TAG = "<img src='http://127.0.0.1:9/tag.png'>"
HOSTILE = f"{PIXEL} {LINK} {TAG}"
# Markdown that would render: an image or link opening ("![" or "](" not escaped) or an HTML tag.
RENDERED = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\](?<!\\)\(|(?<!\\)<(img|a)\b", re.IGNORECASE)


def rendered_markup(at) -> list[str]:  # noqa: ANN001
    """Every Markdown string and label the page would render that holds an image, a link or an HTML tag."""
    texts = [
        element.value
        for kind in ("markdown", "caption", "error", "warning", "info", "subheader")
        for element in getattr(at, kind)
    ]
    texts += [expander.label for expander in at.expander]
    for table in at.table:
        texts += [str(cell) for cell in table.value.to_numpy().ravel()]
    return [text for text in texts if RENDERED.search(str(text))]


def test_the_pattern_sees_rendered_markup_and_not_escaped_markup():
    from app.document_text import plain

    assert RENDERED.search(PIXEL) and RENDERED.search(LINK) and RENDERED.search(TAG)
    assert not RENDERED.search(plain(HOSTILE))


@pytest.mark.integration
def test_an_upstream_message_in_an_ask_status_caption_is_text(app_env, monkeypatch):
    from app import services
    from components.contracts import SourceStatus, StatusKind
    from pipelines.research_result import ResearchResult

    status = SourceStatus(
        source="web", status=StatusKind.ERROR, execution_time_ms=3.0, message=f"Firecrawl could not search: {HOSTILE}"
    )
    result = ResearchResult(question="Who won?", answer="", statuses=[status])
    monkeypatch.setattr(services, "research_streaming", lambda area, question, **options: (result, None))
    at = run_page("ask.py")
    at.text_area[0].input("Who won?")
    at = at.button[0].click().run()
    assert not at.exception
    assert any("Firecrawl could not search" in caption.value for caption in at.caption)
    assert rendered_markup(at) == []


@pytest.mark.integration
def test_an_upstream_message_on_the_status_page_is_text(app_env, monkeypatch):
    import pipelines.status

    report = {
        "healthy": False,
        "parts": [
            {
                "name": "memory (zep)",
                "reachable": False,
                "optional": True,
                "counts": {},
                "probe_ms": 4.0,
                "detail": f"Zep answered HTTP 500: {HOSTILE}",
            }
        ],
        "tools": [],
        "data_dir": "/data",
    }
    monkeypatch.setattr(pipelines.status, "collect_status", lambda *args, **kwargs: report)
    at = run_page("status.py")
    assert any("Zep answered HTTP 500" in element.value for element in at.markdown)
    assert rendered_markup(at) == []


@pytest.fixture()
def hostile_kb(app_env, chat_server, embedding_model, monkeypatch):  # noqa: ANN001, ANN201, F811
    """A collection holding one document whose title and text are hostile Markdown and HTML, and the chat
    contract server as the chat model."""
    from tests.components.knowledge_base.kb_corpus import build_records

    documents = [
        (
            "doc-zorblax",
            f"Zorblax {PIXEL}",
            "notes/zorblax.md",
            "md",
            None,
            None,
            [(f"The zorblax starter ferments overnight. {HOSTILE}", {})],
        )
    ]
    records = build_records(embedding_model, documents, origin="test", separator=":")
    with chat_model_with(chat_server, app_env, records, monkeypatch) as server:
        yield server


@pytest.mark.integration
def test_the_agent_modes_answer_titles_and_chunks_are_text(hostile_kb):
    hostile_kb.plan_tool_call("rag_search", {"query": "zorblax starter", "top_k": 1})
    hostile_kb.plan_answer(f"The zorblax starter ferments overnight [1]. {HOSTILE}")
    at = run_page("ask.py")
    at.toggle(key="agent_mode").set_value(True).run()
    at.text_area(key="agent_question").input("How does the zorblax starter work?")
    at = at.button(key="agent_ask").click().run()
    assert not at.exception
    assert any("Zorblax" in expander.label for expander in at.expander)
    assert any("ferments overnight" in element.value for element in at.markdown)
    assert rendered_markup(at) == []


@pytest.mark.integration
def test_the_ingest_page_refuses_an_inside_address_before_asking_firecrawl(app_env):
    from tests.components.knowledge_base.conftest import environment

    # Firecrawl would be asked at FIRECRAWL_API_URL, were the URL not refused.
    with environment({"FIRECRAWL_API_URL": "http://127.0.0.1:9", "FIRECRAWL_API_KEY": "fc-test-key"}):
        at = run_page("ingest.py")
        at.text_area[0].input("http://169.254.169.254/latest/meta-data/")
        at.button[0].click().run()
    assert not at.exception
    errors = " ".join(element.value.replace("\\", "") for element in at.error)
    assert "a cloud metadata address" in errors and "fetching it is refused" in errors
