"""Ingest: upload files, paste URLs or arXiv ids; progress with counts; a report of what happened."""

from __future__ import annotations

import streamlit as st

from app import services
from app.document_text import plain

services.session_state()
st.title("Ingest")
st.caption(
    "Files (txt, md, html, pdf, docx), web pages and arXiv papers become chunks, embeddings and graph facts. "
    "Unchanged documents are skipped; changed ones are replaced."
)

uploads = st.file_uploader("Files", accept_multiple_files=True, type=["txt", "md", "html", "htm", "pdf", "docx"])
urls_text = st.text_area("Web pages (one URL per line)", height=80)
arxiv_text = st.text_input("arXiv ids (space or comma separated)", placeholder="1706.03762 1908.10084")
go = st.button("Ingest", type="primary")

if go:
    urls = [line.strip() for line in urls_text.splitlines() if line.strip()]
    arxiv_ids = [part for part in arxiv_text.replace(",", " ").split() if part]
    if not (uploads or urls or arxiv_ids):
        st.error("Add a file, a URL or an arXiv id first.")
        st.stop()
    from ingest.ingestor import Ingestor

    ingestor = Ingestor(store=services.knowledge_base())
    total = len(uploads or []) + len(urls) + len(arxiv_ids)
    bar = st.progress(0.0, text=f"0 of {total}")
    reports = []
    failures: list[tuple[str, str]] = []
    done = 0

    def advance(label: str) -> None:
        global done
        done += 1
        bar.progress(done / total, text=f"{done} of {total}: {label}")

    for upload in uploads or []:
        try:
            reports.append(ingestor.ingest_bytes(upload.getvalue(), upload.name))
        except Exception as exc:  # noqa: BLE001
            failures.append((upload.name, services.friendly_error(exc)))
        advance(upload.name)
    for url in urls:
        try:
            from components.web.ingest import ingest_url

            reports.append(ingest_url(url, ingestor=ingestor))
        except Exception as exc:  # noqa: BLE001
            failures.append((url, services.friendly_error(exc)))
        advance(url)
    for paper_id in arxiv_ids:
        try:
            from components.arxiv.ingest import ingest_arxiv

            outcome = ingest_arxiv([paper_id], ingestor=ingestor)
            if outcome.report is not None:
                reports.append(outcome.report)
            failures.extend((missing, "no such arXiv paper") for missing in outcome.not_found)
            failures.extend(outcome.failed)
        except Exception as exc:  # noqa: BLE001
            failures.append((paper_id, services.friendly_error(exc)))
        advance(paper_id)

    added = sum(len(report.added) for report in reports)
    replaced = sum(len(report.replaced) for report in reports)
    skipped = sum(len(report.skipped) for report in reports)
    for report in reports:
        failures.extend(report.failed)
    columns = st.columns(4)
    columns[0].metric("Added", added)
    columns[1].metric("Replaced", replaced)
    columns[2].metric("Skipped (unchanged)", skipped)
    columns[3].metric("Failed", len(failures))
    for source, reason in failures:
        st.error(f"{plain(source)}: {plain(reason)}")  # file names may hold Markdown or control characters
    for note in dict.fromkeys(note for report in reports for note in report.notes):
        st.info(plain(note))  # e.g. how many documents have no knowledge graph because extraction failed
    if added or replaced:
        st.success("Done. Ask about it on the Ask page, or browse it on the Documents page.")
