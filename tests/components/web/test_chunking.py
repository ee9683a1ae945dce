"""Splitting page Markdown with the real tokenizer of the local model."""

from __future__ import annotations

import pytest

from components.web.chunking import clean_markdown, pick_chunks, query_terms, split_sections, split_text


class TestSplitText:
    def test_chunks_fit_the_window_and_keep_every_word(self, embedding_model):
        sections = [f"## Section {n}\n\n" + " ".join(f"Sentence {n}.{m} talks about topic {n}." for m in range(12))
                    for n in range(6)]
        text = "# Title\n\n" + "\n\n".join(sections)
        chunks = split_text(text, 60, embedding_model.count_tokens)
        assert len(chunks) > 6
        assert all(embedding_model.count_tokens(chunk) <= 60 for chunk in chunks)
        assert " ".join(" ".join(chunks).split()).count("Sentence") == 72
        # A heading starts the chunk of the text under it.
        for chunk in chunks:
            assert not chunk.rstrip().split("\n")[-1].startswith("#")

    def test_an_overlong_sentence_is_cut_at_words(self, embedding_model):
        text = " ".join(f"word{n}" for n in range(400))
        chunks = split_text(text, 50, embedding_model.count_tokens)
        assert all(embedding_model.count_tokens(chunk) <= 50 for chunk in chunks)
        assert " ".join(chunks).split() == text.split()

    def test_markdown_sections(self):
        text = "Intro line.\n\n# First\n\nBody one.\n\n## Second ##\nBody two.\n\n### Empty\n"
        assert split_sections(text) == [(None, "Intro line."), ("First", "Body one."), ("Second", "Body two.")]

    def test_tiny_windows_are_refused(self, embedding_model):
        with pytest.raises(ValueError):
            split_text("text", 4, embedding_model.count_tokens)

    def test_markdown_is_cleaned_and_chunks_picked_by_query_terms(self):
        assert clean_markdown("See [the docs](https://x.org/a_(b)) ![logo](l.png)\n\n\n\nend") == "See the docs\n\nend"
        chunks = ["about cats", "about vector search and pgvector", "about dogs", "pgvector indexes"]
        assert query_terms("What is pgvector vector search?") == ["pgvector", "vector", "search"]
        assert pick_chunks(chunks, ["pgvector", "vector", "search"], 2) == [1, 3]
        assert pick_chunks(chunks, [], 10) == [0, 1, 2, 3]
