"""What the pages share: the pipelines, the knowledge base and the session state, behind `st.cache_resource`.

Pages hold layout only; every question, lookup and ingestion goes through the same services the CLI and the HTTP
server use.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

# The few named keys the app keeps in st.session_state.
HISTORY = "history"  # list of {"question", "result"} for this browser session, newest last
PINNED = "pinned"  # chunk id -> {"chunk", "question", "note"}
SESSION_ID = "session_id"


@st.cache_resource(show_spinner=False, on_release=lambda runtime: runtime.close())
def runtime():  # noqa: ANN201
    """The app's runtime (the process's set-up, its catalog and database), started once per server process; clearing
    Streamlit's resource cache closes it, and the next page run starts a new one with a catalog of its own."""
    from pipelines.runtime import Runtime

    return Runtime().start()


@st.cache_resource(show_spinner="Loading the research pipelines…")
def catalog():  # noqa: ANN201
    """The runtime's pipeline catalog, loaded and warmed once per server process."""
    return runtime().catalog


@st.cache_resource(show_spinner=False)
def knowledge_base():  # noqa: ANN201
    """The knowledge-base store the app's settings configure."""
    from components.knowledge_base.factory import open_knowledge_base

    return open_knowledge_base(runtime().settings)


@st.cache_resource(show_spinner="Preparing the demo corpus (first start only)…")
def ensure_demo() -> str | None:
    """Ingest the demo corpus when the knowledge base is empty; a one-line report, or None."""
    from ingest.demo import ensure_demo_corpus

    report = ensure_demo_corpus()
    return report.summary() if report is not None else None


def session_state() -> Any:
    """The session state with the app's keys present."""
    import uuid

    st.session_state.setdefault(HISTORY, [])
    st.session_state.setdefault(PINNED, {})
    st.session_state.setdefault(SESSION_ID, uuid.uuid4().hex)
    return st.session_state


def friendly_error(exc: BaseException) -> str:
    """One sentence for an error the analyst can act on."""
    from components.redaction import cut

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return cut(text, 400)


@st.cache_resource(show_spinner=False)
def graph_tools():  # noqa: ANN201
    """The knowledge-graph tools (timeline, relationships, search) over the graph store the app's settings
    configure."""
    from components.graph.factory import graph_store_from_settings
    from components.graph.tools import GraphTools

    return GraphTools(graph_store_from_settings(settings=runtime().settings))


def entities_in(text: str) -> list[str]:
    """Names of graph entities a text mentions; empty when the graph is unavailable."""
    try:
        from components.graph.factory import known_entities_in

        return known_entities_in(text, graph_tools().store)
    except Exception:  # noqa: BLE001 - entity links are a convenience, never a failure of the page
        return []


def earlier_turns(history: list[dict]) -> list[dict]:
    """The app's history as the turns a follow-up question is rewritten against, oldest first."""
    return [
        {
            "question": entry["result"].answered_as or entry["question"],
            "answer": entry["result"].answer,
            "short_answer": entry["result"].short_answer,
        }
        for entry in history[-3:]
    ]


def research_streaming(area: Any, question: str, **options: Any) -> tuple[Any, str | None]:
    """Ask the research pipeline, streaming the answer into `area` (an `st.empty()`) as it is produced.

    The pipeline runs in a worker thread and hands each piece of the answer over a queue, because Streamlit
    elements may only be written from the script's own thread. Returns (result, None) or (None, error sentence).
    """
    import queue
    import threading

    pieces: queue.Queue = queue.Queue()
    outcome: dict[str, Any] = {}

    def on_piece(chunk: Any) -> None:
        text = getattr(chunk, "content", None) or ""
        if text:
            pieces.put(text)

    def work() -> None:
        try:
            outcome["result"] = catalog().research(question, streaming_callback=on_piece, **options)
        except Exception as exc:  # noqa: BLE001 - reported to the analyst as a sentence
            outcome["error"] = friendly_error(exc)
        finally:
            pieces.put(None)

    def stream():  # noqa: ANN202
        while (piece := pieces.get()) is not None:
            yield piece

    from app.document_text import text_html

    worker = threading.Thread(target=work, name="research-question", daemon=True)
    worker.start()
    # The draft answer is made of document sentences: shown as text as it grows, never rendered as Markdown.
    draft = area.empty()
    text = ""
    for piece in stream():
        text += piece
        draft.html(text_html(text))
    worker.join()
    return outcome.get("result"), outcome.get("error")
