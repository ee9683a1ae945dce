"""Web pages and paper full texts are cut by the knowledge base's chunker, with the local model's tokenizer."""

from __future__ import annotations

import re

from components.ingestion.formats.markdown import convert_markdown
from components.ingestion.splitter import TokenSplitter
from components.web.chunking import markdown_chunks, page_text, pick_chunks, query_terms, text_chunks
from components.web.snapshots import PageSnapshot


class TestMarkdownChunks:
    def test_chunks_fit_the_window_keep_every_sentence_and_their_section(self, embedding_model):
        sections = [
            f"## Section {n}\n\n" + " ".join(f"Sentence {n}.{m} talks about topic {n}." for m in range(12))
            for n in range(6)
        ]
        markdown = "# Title\n\n" + "\n\n".join(sections)
        chunks = markdown_chunks(markdown, 60, embedding_model.name)
        assert len(chunks) > 6
        assert all(embedding_model.count_tokens(text) <= 60 for _, text in chunks)
        assert " ".join(text for _, text in chunks).count("Sentence") == 72
        assert {title for title, _ in chunks} == {f"Section {n}" for n in range(6)}
        # Chunks never cross a heading: each holds its own section's sentences only.
        assert all(set(re.findall(r"Sentence (\d)\.", text)) == {title[-1]} for title, text in chunks)

    def test_a_page_is_chunked_as_the_knowledge_base_chunks_the_same_markdown(self, embedding_model):
        markdown = "# Guide\n\nSee [the docs](https://x.org/a) and **bold** words.\n\n## Next\n\n- one item\n- two\n"
        splitter = TokenSplitter(chunk_tokens=60, overlap_tokens=0, model=embedding_model.name)
        ingested = splitter.split(convert_markdown(markdown.encode("utf-8"), "page.md"))
        assert markdown_chunks(markdown, 60, embedding_model.name) == [(c.section_title, c.text) for c in ingested]
        assert "See the docs and bold words." in page_text(markdown)

    def test_a_leading_rule_is_not_front_matter(self, embedding_model):
        markdown = "---\nkey: [unclosed\n---\n\nPlain text of the page."
        assert markdown_chunks(markdown, 60, embedding_model.name)[-1][1].endswith("Plain text of the page.")

    def test_every_chunk_is_found_in_the_pages_snapshot(self, embedding_model):
        markdown = "# T\n\nFirst *emphasised* sentence. Second one.\n\nA [link](https://x.org) here.\n\n* a list item"
        snapshot = PageSnapshot(
            snapshot_id="s", url="https://x.org", fetched_at="2024", content_hash="h", title="T", markdown=markdown
        )
        assert all(snapshot.contains(text) for _, text in markdown_chunks(markdown, 60, embedding_model.name))


class TestTextChunks:
    def test_an_overlong_sentence_is_cut_at_words(self, embedding_model):
        text = " ".join(f"word{n}" for n in range(400))
        chunks = text_chunks(text, 50, embedding_model.name)
        assert len(chunks) > 1 and all(embedding_model.count_tokens(chunk) <= 50 for chunk in chunks)
        assert " ".join(chunks).split() == text.split()


class TestPickChunks:
    def test_chunks_are_picked_by_query_terms(self):
        chunks = ["about cats", "about vector search and pgvector", "about dogs", "pgvector indexes"]
        assert query_terms("What is pgvector vector search?") == ["pgvector", "vector", "search"]
        assert pick_chunks(chunks, ["pgvector", "vector", "search"], 2) == [1, 3]
        assert pick_chunks(chunks, [], 10) == [0, 1, 2, 3]
