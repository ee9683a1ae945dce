"""Token-aware splitting with the real model's tokenizer."""

from __future__ import annotations

import pytest
from haystack import Document

from components.ingestion.formats import convert_bytes
from components.ingestion.splitter import TokenSplitter
from components.text.language import sentence_spans

SENTENCES = [
    "Milvus was released as open source in October 2019.",
    "Zilliz, the company behind it, was founded in 2017 by Charles Xie.",
    "It joined the LF AI Foundation the following March.",
    "Version 2.0 reached general availability in January 2022 after a rewrite as cloud-native services.",
    "Qdrant started in Berlin.",
    "Its engine is written in Rust and filters payloads during the HNSW search.",
]


def text_of(n: int) -> str:
    return " ".join(SENTENCES[i % len(SENTENCES)] for i in range(n))


@pytest.fixture(scope="module")
def splitter() -> TokenSplitter:
    splitter = TokenSplitter(chunk_tokens=40, overlap_tokens=10)
    splitter.warm_up()
    return splitter


class TestSentences:
    def test_spacy_sentences_keep_abbreviations_and_initials(self) -> None:
        text = "Dr. Smith met J. R. R. Tolkien in 1950, e.g. at Oxford. It rained!\n\nThe U.S. team won. Done"
        assert [text[s:e] for s, e in sentence_spans(text)] == [
            "Dr. Smith met J. R. R. Tolkien in 1950, e.g. at Oxford.",
            "It rained!",
            "The U.S. team won.",
            "Done",
        ]
        assert sentence_spans("  ") == []

    @pytest.mark.parametrize(
        "sentence",
        [
            "The mill grinds approx. 4 kg (8.8 lb) of grain every hour.",  # after an abbreviation
            "The town had ca. 4,000 people when the levee was finished.",
            "His workshop stood near Alder Ave. and Birch St. in the old town.",  # a part in lower case
            # a part with no closing punctuation, then one in lower case
            "Where a duty discriminates against imports (or exports under article 35) then it must be justified.",
        ],
    )
    def test_a_sentence_the_parser_cuts_in_two_stays_whole(self, sentence: str) -> None:
        text = f"{sentence} The mill closed in 1950."
        assert [text[s:e] for s, e in sentence_spans(text)] == [sentence, "The mill closed in 1950."]

    def test_a_sentence_after_an_abbreviation_that_ends_sentences_stays_apart(self) -> None:
        text = "The mill shipped flour to the U.S. The levee held."
        assert [text[s:e] for s, e in sentence_spans(text)] == ["The mill shipped flour to the U.S.", "The levee held."]


class TestTokenSplitter:
    def test_init_validates(self) -> None:
        with pytest.raises(ValueError, match="chunk_tokens"):
            TokenSplitter(chunk_tokens=4)
        with pytest.raises(ValueError, match="overlap_tokens"):
            TokenSplitter(chunk_tokens=40, overlap_tokens=30)
        with pytest.raises(ValueError, match="model"):
            TokenSplitter(model="")

    def test_to_dict_from_dict(self) -> None:
        data = TokenSplitter(chunk_tokens=120, overlap_tokens=16).to_dict()
        assert data["type"] == "components.ingestion.splitter.TokenSplitter"
        assert data["init_parameters"] == {
            "chunk_tokens": 120,
            "overlap_tokens": 16,
            "model": "sentence-transformers/all-MiniLM-L6-v2",
        }
        restored = TokenSplitter.from_dict(data)
        assert (restored.chunk_tokens, restored.overlap_tokens) == (120, 16)

    def test_limit_fits_the_model_window(self, embedding_model) -> None:
        splitter = TokenSplitter(chunk_tokens=256, overlap_tokens=32)
        splitter.warm_up()
        assert splitter.limit == embedding_model.max_tokens - 2 == 254

    def test_window_never_exceeded_and_counts_exact(self, splitter, embedding_model) -> None:
        long_sentence = " ".join(["interoperability"] * 90) + "."
        document = convert_bytes(f"{text_of(20)}\n\n{long_sentence} {text_of(9)}".encode(), "x.txt")
        chunks = splitter.split(document)
        assert len(chunks) > 8
        for chunk in chunks:
            assert chunk.text == document.text[chunk.char_start : chunk.char_end]
            assert chunk.token_count == embedding_model.count_tokens(chunk.text) <= 40

    def test_sentence_boundaries_overlap_and_indices(self, embedding_model) -> None:
        splitter = TokenSplitter(chunk_tokens=80, overlap_tokens=30)  # every sentence fits into the overlap
        document = convert_bytes(text_of(24).encode(), "x.txt")
        chunks = splitter.split(document)
        starts = {s for s, _ in sentence_spans(document.text)}
        ends = {e for _, e in sentence_spans(document.text)}
        assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
        assert all(c.metadata["document_total_chunks"] == len(chunks) for c in chunks)
        assert all(c.char_start in starts and c.char_end in ends for c in chunks)
        for previous, current in zip(chunks, chunks[1:], strict=False):
            assert current.char_start < previous.char_end  # neighbours share text ...
            shared = document.text[current.char_start : previous.char_end]
            assert 0 < embedding_model.count_tokens(shared) <= 30  # ... at most the overlap
        assert chunks[-1].char_end == len(document.text)

    def test_over_long_sentence_is_cut_between_words(self, splitter) -> None:
        words = " ".join(f"word{i}" for i in range(120)) + "."
        document = convert_bytes(words.encode(), "x.txt")
        chunks = splitter.split(document)
        assert len(chunks) > 3
        for chunk in chunks:
            before = document.text[chunk.char_start - 1] if chunk.char_start else " "
            after = document.text[chunk.char_end] if chunk.char_end < len(document.text) else " "
            assert before == " " and after == " "
        covered = set().union(*(range(c.char_start, c.char_end) for c in chunks))
        assert {i for i, ch in enumerate(document.text) if ch != " "} <= covered

    def test_partial_overlap_when_no_whole_sentence_fits(self, splitter, embedding_model) -> None:
        document = convert_bytes(text_of(12).encode(), "x.txt")
        chunks = splitter.split(document)
        for previous, current in zip(chunks, chunks[1:], strict=False):
            shared = document.text[current.char_start : previous.char_end]
            assert 0 < embedding_model.count_tokens(shared) <= 10 and document.text[current.char_start - 1] == " "

    def test_chunks_keep_sections_and_never_cross_headings(self, splitter) -> None:
        markdown = f"# Vector databases\n\n## Milvus\n\n{text_of(8)}\n\n## Qdrant\n\n{SENTENCES[4]}"
        chunks = splitter.split(convert_bytes(markdown.encode(), "x.md"))
        titles = [c.section_title for c in chunks]
        assert titles[0] == "Milvus" and titles[-1] == "Qdrant" and set(titles) == {"Milvus", "Qdrant"}
        assert chunks[0].text.startswith("Vector databases\n\nMilvus\n\n")  # a bare title joins the next section
        assert chunks[-1].text == "Qdrant\n\nQdrant started in Berlin."
        document = convert_bytes(markdown.encode(), "x.md")
        qdrant_heading = document.text.rindex("Qdrant\n\nQdrant started")
        assert all(c.char_end < qdrant_heading for c in chunks if c.section_title == "Milvus")

    def test_deterministic(self, splitter) -> None:
        document = convert_bytes(text_of(30).encode(), "x.txt")
        assert splitter.split(document) == splitter.split(document)

    def test_run_keeps_pages_and_meta(self, splitter) -> None:
        content = f"{text_of(6)}\f{text_of(6)}"
        chunks = splitter.run(documents=[Document(content=content, meta={"lang": "en"}), Document(content=" ")])
        documents = chunks["documents"]
        assert {d.meta["page_number"] for d in documents} == {1, 2}
        assert all(d.meta["lang"] == "en" and d.meta["document_total_chunks"] == len(documents) for d in documents)
        assert [d.meta["chunk_index"] for d in documents] == list(range(len(documents)))

    def test_default_settings_on_the_demo_corpus(self, embedding_model) -> None:
        from ingest.demo import demo_files

        splitter = TokenSplitter()  # 200 word pieces, 32 overlap
        for path in demo_files()[:3]:
            chunks = splitter.split(convert_bytes(path.read_bytes(), path.name))
            assert chunks and all(
                embedding_model.count_tokens(c.text) + 2 <= embedding_model.max_tokens for c in chunks
            )
            assert max(c.token_count for c in chunks) > 120  # chunks are filled, not one per sentence


def test_from_settings_is_the_splitter_ingestion_uses(monkeypatch):
    from components.settings import reload_settings
    from ingest.ingestor import Ingestor

    monkeypatch.setenv("CHUNK_TOKENS", "120")
    monkeypatch.setenv("CHUNK_OVERLAP_TOKENS", "90")  # more than half a chunk: half of it
    reload_settings()
    try:
        splitter = TokenSplitter.from_settings()
        assert (splitter.chunk_tokens, splitter.overlap_tokens) == (120, 60)
        ingestor = Ingestor(store=object(), hooks=[])
        assert splitter.to_dict() == ingestor.splitter.to_dict()
    finally:
        monkeypatch.undo()
        reload_settings()
