"""Documents: a searchable, paginated list of what the knowledge base holds; one document with its chunks."""

from __future__ import annotations

import streamlit as st

from app import services
from app.document_text import plain, show_text

PAGE_SIZE = 20
services.session_state()
st.title("Documents")

try:
    store = services.knowledge_base()
except Exception as exc:  # noqa: BLE001
    st.error(f"The knowledge base cannot be opened: {services.friendly_error(exc)}")
    st.stop()

search = st.text_input("Search titles and sources", placeholder="e.g. PostgreSQL")
st.session_state.setdefault("documents_page", 0)
page_number = st.session_state["documents_page"]
summaries, total = store.list_documents(limit=PAGE_SIZE, offset=page_number * PAGE_SIZE, search=search or None)

if total == 0:
    if search:
        st.info(f"No document matches “{search}”.")
    else:
        st.info(
            "The knowledge base is empty. Add files, URLs or arXiv papers on the Ingest page, "
            "or run `research ingest PATH` (or `research ingest --demo`)."
        )
    st.stop()

pages = max(1, -(-total // PAGE_SIZE))
st.caption(f"{total} documents · page {page_number + 1} of {pages}")
rows = [
    {
        "title": summary.document.title,
        "type": summary.document.doc_type,
        "date": summary.document.date.isoformat() if summary.document.date else "",
        "chunks": summary.chunk_count,
        "source": summary.document.url or summary.document.source,
        "id": summary.document.document_id,
    }
    for summary in summaries
]
selection = st.dataframe(
    rows, hide_index=True, use_container_width=True, on_select="rerun", selection_mode="single-row"
)
previous, _, following = st.columns([1, 4, 1])
if previous.button("Previous", disabled=page_number == 0):
    st.session_state["documents_page"] = page_number - 1
    st.rerun()
if following.button("Next", disabled=page_number + 1 >= pages):
    st.session_state["documents_page"] = page_number + 1
    st.rerun()

chosen = selection.selection.rows if selection and selection.selection else []
if not chosen:
    st.caption("Select a row to open the document.")
    st.stop()

document_id = rows[chosen[0]]["id"]
found = store.get_document(document_id)
if found is None:
    st.warning("That document is no longer in the knowledge base.")
    st.stop()
document, chunks = found
st.subheader(plain(document.title))
st.caption(
    plain(
        " · ".join(
            part
            for part in [
                document.doc_type,
                document.date.isoformat() if document.date else "",
                document.url or document.source,
            ]
            if part
        )
    )
)

entities = []
try:
    entities = services.graph_tools().store.document_entities(document_id, limit=40)
except Exception as exc:  # noqa: BLE001
    st.caption(f"Entities unavailable: {services.friendly_error(exc)}")
if entities:
    st.markdown("**Entities** (open their timeline):")
    columns = st.columns(4)
    for position, entity in enumerate(entities):
        if columns[position % 4].button(
            f"{plain(entity.name)} ({entity.fact_count})", key=f"doc-entity-{entity.uuid}", type="tertiary"
        ):
            st.session_state["entity_focus"] = entity.name
            st.switch_page("pages/entities.py")

for chunk in chunks:
    where = []
    if chunk.metadata.get("page_number"):
        where.append(f"page {chunk.metadata['page_number']}")
    if chunk.metadata.get("section_title"):
        where.append(plain(chunk.metadata["section_title"]))
    with st.expander(f"Chunk {chunk.chunk_index + 1} of {len(chunks)}" + (f" · {' · '.join(where)}" if where else "")):
        show_text(chunk.text)

reingest, delete = st.columns(2)
with reingest:
    if st.button("Re-ingest", help="Read the source again and replace this document's chunks"):
        from pathlib import Path

        from ingest.ingestor import Ingestor

        if not Path(document.source).is_file():
            st.warning(
                "Only documents ingested from a file on this machine can be re-read here; ingest a "
                "web page, upload or arXiv paper again from the Ingest page."
            )
        else:
            try:
                report = Ingestor(store=store).ingest_paths([document.source], force=True)
                st.success(report.summary())
                for note in report.notes:
                    st.info(plain(note))
            except Exception as exc:  # noqa: BLE001
                st.error(f"Re-ingesting failed: {services.friendly_error(exc)}")
with delete:
    confirm = st.checkbox("I want to delete this document, its chunks and its facts")
    if st.button("Delete", type="primary", disabled=not confirm):
        from components.knowledge_base.knowledge_base import ProtectedDocument
        from ingest.ingestor import Ingestor

        try:
            deleted = Ingestor(store=store).delete(document_id)
        except ProtectedDocument as exc:
            st.warning(str(exc))
        else:
            if deleted:
                st.success(f"Deleted “{document.title}”.")
                st.rerun()
            else:
                st.warning("It was already gone.")
