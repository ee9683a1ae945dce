"""Ask: a question, the answer with its citations, and the evidence behind every claim."""

from __future__ import annotations

import datetime as dt
import re

import streamlit as st

from app import services
from app.agent_mode import agent_mode
from app.document_text import plain, show_text
from components.contracts.selection import DEFAULT_SOURCES
from components.generation.answer_wording import UNSURE_PREFIX

SOURCE_LABELS = {
    "kb": "Knowledge base",
    "graph": "Knowledge graph",
    "web": "Web",
    "arxiv": "arXiv",
    "memory": "Memory",
    "auto": "Auto (decide from the question)",
}
DOC_TYPES = ["md", "txt", "html", "pdf", "docx", "web", "arxiv"]
STATUS_COLOURS = {"success": "green", "partial": "orange", "timeout": "orange", "error": "red", "skipped": "gray"}

state = services.session_state()
st.title("Ask")

try:
    demo_note = services.ensure_demo()
except Exception as exc:  # noqa: BLE001 - shown as a sentence, the page still works
    demo_note = None
    st.warning(f"The demo corpus could not be prepared: {plain(services.friendly_error(exc))}")
if demo_note:
    st.info(f"Demo corpus ready: {demo_note}")

if agent_mode():  # only offered when a chat model is configured; it renders the agent's own form and answer
    st.stop()

with st.form("ask", clear_on_submit=False):
    question = st.text_area("Question", placeholder="What happened to pgvector, and when?", height=80)
    left, middle, right = st.columns([3, 1, 1])
    sources = left.multiselect(
        "Sources",
        options=list(SOURCE_LABELS),
        default=list(DEFAULT_SOURCES),
        format_func=lambda key: SOURCE_LABELS[key],
    )
    as_of = middle.date_input("As of", value=None, max_value=dt.date.today() + dt.timedelta(days=1))
    top_k = right.number_input("Chunks", min_value=1, max_value=20, value=5)
    with st.expander("Filters"):
        doc_types = st.multiselect("Document types (knowledge base)", options=DOC_TYPES)
        from_col, to_col = st.columns(2)
        date_from = from_col.date_input("Documents dated from", value=None, min_value=dt.date(1900, 1, 1))
        date_to = to_col.date_input("Documents dated to", value=None, min_value=dt.date(1900, 1, 1))
        domains = st.text_input("Web domains (comma separated)", placeholder="postgresql.org, github.com")
        categories = st.text_input("arXiv categories (comma separated)", placeholder="cs.IR, cs.CL")
    asked = st.form_submit_button("Ask", type="primary")

if asked:
    if not question.strip():
        st.error("Type a question first.")
    elif not sources:
        st.error("Pick at least one source.")
    else:
        filters = {
            key: value
            for key, value in {
                "doc_types": doc_types or None,
                "date_from": date_from.isoformat() if date_from else None,
                "date_to": date_to.isoformat() if date_to else None,
                "domains": [part.strip() for part in domains.split(",") if part.strip()] or None,
                "arxiv_categories": [part.strip() for part in categories.split(",") if part.strip()] or None,
            }.items()
            if value
        }
        options = {
            "sources": sources,
            "as_of": as_of.isoformat() if as_of else None,
            "filters": filters or None,
            "top_k": int(top_k),
            "session_id": state[services.SESSION_ID],
        }
        streamed = st.empty()
        with st.spinner("Searching the selected sources…"):
            # A follow-up ("Who leads it?") is rewritten against this session's earlier questions and answers.
            result, error = services.research_streaming(
                streamed, question.strip(), history=services.earlier_turns(state[services.HISTORY]), **options
            )
        streamed.empty()  # the streamed draft gives way to the checked, cited answer below
        if error is not None:
            st.error(f"The question could not be answered: {plain(error)}")
        else:
            state[services.HISTORY].append({"question": question.strip(), "result": result, "options": options})

history = state[services.HISTORY]
if not history:
    st.caption("Ask a question of the knowledge base; every claim in the answer cites the chunk it comes from.")
    st.stop()

entry = history[-1]
result = entry["result"]

if result.answered_as and st.button(
    f"Ask “{plain(entry['question'])}” as typed", key=f"as-typed-{len(history)}", type="secondary"
):
    with st.spinner("Asking the question as typed…"):
        retyped, error = services.research_streaming(
            st.empty(), entry["question"], as_typed=True, **entry.get("options", {})
        )
    if error is not None:
        st.error(f"The question could not be answered: {plain(error)}")
    else:
        history[-1] = {**entry, "result": retyped}
        st.rerun()

st.subheader(plain(entry["question"]))
if result.answered_as:
    st.caption(f"Answered as: **{plain(result.answered_as)}** (a follow-up, read with the earlier questions)")
chips = " ".join(
    f":{STATUS_COLOURS.get(status.status.value, 'gray')}-badge[{status.source} · {status.status.value} · "
    f"{status.execution_time_ms:.0f} ms" + (f" · {status.total_found} found" if status.total_found else "") + "]"
    for status in result.statuses
)
st.markdown(chips)
if result.source_selection:
    reasons = result.source_selection.get("reasons", {})
    st.caption(
        "Sources chosen from the question: "
        + "; ".join(f"**{SOURCE_LABELS.get(source, source)}**: {', '.join(why)}" for source, why in reasons.items())
    )
for status in result.statuses:
    if status.status.value in ("error", "timeout", "partial") and status.message:
        st.caption(f"{plain(status.source)}: {plain(status.message)}")  # an upstream's words: text only


def _bare(text: str) -> str:
    """A sentence without its citation marks and final stop, for comparing it with the short answer."""
    return re.sub(r"\s+([;,])", r"\1", " ".join(re.sub(r"\[[\d,\s–-]+\]", " ", text).split())).strip(" .")


def _cited_answer_markdown() -> str:
    """The answer's cited sentences (the short answer's own line left out: it is shown above), each unsupported
    sentence flagged."""
    if not result.sentences:
        return plain(result.answer)
    parts = []
    for sentence in result.sentences:
        if result.short_answer and _bare(sentence.text) == _bare(result.short_answer):
            continue
        if sentence.text.startswith(UNSURE_PREFIX):
            continue  # said by the confidence cue above the answer
        text = plain(sentence.text)  # the answer is made of document sentences: shown, never rendered
        if sentence.citations and not sentence.supported:
            text = f"{text} :orange-badge[unsupported by its citation]"
        parts.append(text)
    return " ".join(parts)


def _confidence_cue() -> None:
    """How sure the short answer is, in words: a green badge under a headline it is sure of, and a warning in place
    of the headline for each part it is not sure of (the answer then opens with its best cited sentence), including
    one held back without a confidence."""
    if result.short_answer and result.short_answer_confidence is not None:
        level = "very likely right" if result.short_answer_confidence >= 0.9 else "likely right"
        st.markdown(f":green-badge[:material/verified: Sure of the short answer: {level}]")
    unsure = [part for part in result.parts if part.short_answer and not part.sure]
    for part in unsure:
        asked = f" to “{plain(part.question)}”" if len(result.parts) > 1 else ""
        st.warning(
            f"**Not sure of the short answer{asked}.** No headline is given: read the cited sentences below.",
            icon=":material/help:",
        )


if result.short_answer:
    st.markdown(f"### {plain(result.short_answer)}")
_confidence_cue()
for conflict in result.conflicts:
    sides = "; ".join(
        f"**{plain(side['value'])}** "
        + "".join(f"[{number}]" for number in side["citations"])
        + (f" (dated {', '.join(side['document_dates'])})" if side.get("document_dates") else "")
        for side in conflict["values"]
    )
    st.warning(f"Sources disagree on {plain(conflict['subject'])} ({plain(conflict['attribute'])}): {sides}")
st.markdown(_cited_answer_markdown())
if not result.chunks:
    st.info("No evidence was found. Try other sources, or ingest documents on the Ingest page.")
    st.stop()

cited_numbers = sorted(
    {number for sentence in result.sentences for number in sentence.citations if 1 <= number <= len(result.chunks)}
)
opened = (
    st.pills(
        "Open a citation", options=cited_numbers, format_func=lambda number: f"[{number}]", key=f"cite-{len(history)}"
    )
    if cited_numbers
    else None
)

st.markdown("#### Evidence")
cited_sentences: dict[int, list[str]] = {}
for sentence in result.sentences:
    for number in sentence.citations:
        cited_sentences.setdefault(number, []).append(re.sub(r"\s*\[\d+\]", "", sentence.text))


for number, chunk in enumerate(result.chunks, start=1):
    title = chunk.source_title or chunk.source_id
    label = f"[{number}] {plain(title)} · {chunk.source_type.value} · relevance {chunk.semantic_relevance:.2f}"
    with st.expander(label, expanded=number == (opened or 1)):
        show_text(chunk.text, highlights=cited_sentences.get(number, []))
        info, ranks = st.columns(2)
        with info:
            st.markdown("**Source**")
            rows = {
                "title": title,
                "type": chunk.source_type.value,
                "link": chunk.source_url or "—",
                "date": chunk.source_date.isoformat() if chunk.source_date else "—",
            }
            for key in (
                "authors",
                "domain",
                "document_id",
                "chunk_index",
                "document_total_chunks",
                "page_number",
                "section_title",
                "collection_name",
            ):
                if chunk.metadata.get(key) not in (None, "", []):
                    value = chunk.metadata[key]
                    rows[key] = ", ".join(value) if isinstance(value, list) else value
            st.table({"field": list(rows), "value": [plain(str(value)) for value in rows.values()]})
        with ranks:
            st.markdown("**Why it is here**")
            st.metric("Semantic relevance", f"{chunk.semantic_relevance:.3f}")
            if chunk.raw_score is not None:
                st.caption(f"raw score {chunk.raw_score:.4f} ({chunk.score_kind.value})")
            if chunk.ranks:
                st.table({"stage": list(chunk.ranks), "rank": [str(rank) for rank in chunk.ranks.values()]})
        entity_names = chunk.metadata.get("entities") or services.entities_in(chunk.text)
        if entity_names:
            st.caption("Entities in this evidence (open their timeline):")
            for position, name in enumerate(entity_names[:8]):
                if st.button(plain(name), key=f"entity-{len(history)}-{number}-{position}", type="tertiary"):
                    st.session_state["entity_focus"] = name
                    st.switch_page("pages/entities.py")
        pin_key = f"pin-{len(history)}-{number}"
        if st.button("Pin to the evidence board", key=pin_key):
            state[services.PINNED][chunk.id] = {"chunk": chunk, "question": entry["question"], "note": ""}
            st.toast("Pinned.")

if len(history) > 1:
    with st.expander(f"Earlier questions in this session ({len(history) - 1})"):
        for earlier in reversed(history[:-1]):
            st.markdown(f"- {plain(earlier['question'])}")
