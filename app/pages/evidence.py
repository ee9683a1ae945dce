"""Evidence board: chunks pinned across questions, annotated, exported as a Markdown brief and BibTeX."""

from __future__ import annotations

import streamlit as st

from app import services
from app.document_text import plain, show_text
from pipelines.brief import bibtex_for_chunks, markdown_brief

state = services.session_state()
pinned: dict = state[services.PINNED]

st.title("Evidence board")
if not pinned:
    st.info("Nothing pinned yet. On the Ask page, open a chunk and press “Pin to the evidence board”.")
    st.stop()

for chunk_id, item in list(pinned.items()):
    chunk = item["chunk"]
    with st.container(border=True):
        head, remove = st.columns([6, 1])
        head.markdown(
            f"**{plain(chunk.source_title or chunk.source_id)}** · {chunk.source_type.value}"
            + (f" · {chunk.source_date.isoformat()}" if chunk.source_date else "")
        )
        if remove.button("Unpin", key=f"unpin-{chunk_id}"):
            del pinned[chunk_id]
            st.rerun()
        st.caption(f"Pinned from: {plain(item['question'])}")
        show_text(chunk.text)
        item["note"] = st.text_area("Note", value=item["note"], key=f"note-{chunk_id}", height=68)

items = list(pinned.values())
brief = markdown_brief(items)
bibtex = bibtex_for_chunks([item["chunk"] for item in items])
left, right = st.columns(2)
left.download_button("Export brief (Markdown)", brief, file_name="evidence-brief.md", mime="text/markdown")
right.download_button(
    "Export BibTeX (arXiv)",
    bibtex or "% no arXiv chunks pinned\n",
    file_name="evidence.bib",
    mime="application/x-bibtex",
    disabled=not bibtex,
)
with st.expander("Preview the brief"):
    st.code(brief, language="markdown", wrap_lines=True)  # the brief quotes documents: shown as written
