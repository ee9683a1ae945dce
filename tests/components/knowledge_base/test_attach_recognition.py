"""Recognising the documents of a collection written by a Haystack indexing pipeline (no store needed)."""

from __future__ import annotations

import datetime as dt

import pytest
from haystack import Document
from haystack.components.preprocessors import DocumentSplitter

from components.knowledge_base.attach import ATTACHED, DocumentRecogniser


def _split(documents: list[Document]) -> list[Document]:
    splitter = DocumentSplitter(split_by="word", split_length=8, split_overlap=0)
    splitter.warm_up()
    return splitter.run(documents=documents)["documents"]


def test_chunks_of_a_splitter_group_by_their_parent_in_order() -> None:
    parents = [
        Document(content="Ada Lovelace wrote the first program. " * 4, meta={"file_path": "notes/ada.md"}),
        Document(content="Grace Hopper built the first compiler. " * 4, meta={"file_path": "C:\\docs\\grace.pdf"}),
    ]
    chunks = _split(parents)
    assert len(chunks) > 4
    recogniser = DocumentRecogniser("haystack_documents")
    recogniser.add(list(reversed(chunks[:3])))  # arrival order is not the document order
    recogniser.add(chunks[3:])
    found = recogniser.documents()
    assert len(found) == 2
    by_title = {f.record.title: f for f in found}
    ada, grace = by_title["ada.md"], by_title["grace.pdf"]
    ada_chunks = [c for c in chunks if c.meta["source_id"] == parents[0].id]
    assert ada.chunk_ids == [c.id for c in sorted(ada_chunks, key=lambda c: c.meta["split_id"])]
    assert ada.record.doc_type == "md" and grace.record.doc_type == "pdf"
    # The splitter keeps the parent's file_path on every chunk, but the parent id is the finer key.
    assert ada.record.source.startswith("haystack://haystack_documents/source_id/")
    assert ada.record.metadata[ATTACHED] is True
    assert ada.record.text.startswith("Ada Lovelace wrote")
    assert ada.record.document_id != grace.record.document_id


def test_a_chunk_without_any_key_is_a_document_of_its_own_titled_by_its_first_line() -> None:
    recogniser = DocumentRecogniser("kb")
    recogniser.add([Document(content="\n  Quarterly report\nRevenue rose."), Document(content="Another note.")])
    found = recogniser.documents()
    assert [f.record.title for f in found] == ["Quarterly report", "Another note."]
    assert all(len(f.chunk_ids) == 1 for f in found)
    assert found[0].record.doc_type == "haystack"


def test_urls_dates_and_titles_come_from_the_meta() -> None:
    recogniser = DocumentRecogniser("kb")
    recogniser.add(
        [
            Document(content="b", meta={"url": "https://example.org/a", "split_id": 1, "date": "2024-03-05T10:00:00"}),
            Document(content="a", meta={"url": "https://example.org/a", "split_id": 0, "title": "Launch notes"}),
        ]
    )
    (found,) = recogniser.documents()
    assert found.record.source == "https://example.org/a"
    assert found.record.url == "https://example.org/a"
    assert found.record.doc_type == "web"
    assert found.record.text == "a\n\nb"
    # The first chunk to arrive gives the document's meta.
    assert found.record.date == dt.date(2024, 3, 5)


def test_a_named_document_field_overrides_the_defaults() -> None:
    recogniser = DocumentRecogniser("kb", document_field="case")
    recogniser.add(
        [Document(content="x", meta={"case": "A", "file_path": "1.txt"}), Document(content="y", meta={"case": "A"})]
    )
    (found,) = recogniser.documents()
    assert len(found.chunk_ids) == 2
    with pytest.raises(ValueError, match="meta field"):
        DocumentRecogniser("kb", document_field=" ")


def test_the_same_collection_recognised_twice_gives_the_same_ids_and_hashes() -> None:
    docs = [Document(content=f"part {i}", meta={"file_path": "a.txt", "split_id": i}) for i in range(3)]
    first, second = DocumentRecogniser("kb"), DocumentRecogniser("kb")
    first.add(docs)
    second.add(list(reversed(docs)))
    (a,), (b,) = first.documents(), second.documents()
    assert (a.record.document_id, a.record.content_hash, a.chunk_ids) == (
        b.record.document_id,
        b.record.content_hash,
        b.chunk_ids,
    )
