"""`EmbeddingModel.embed_with_sentence_spans` with the real all-MiniLM-L6-v2."""

from __future__ import annotations

import threading

import numpy as np

TEXTS = [
    "Super Bowl 50 settled the 2015 NFL season. The Denver Broncos defeated the Carolina Panthers 24-10.",
    "Warsaw is the capital of Poland. It lies on the Vistula river.",
    "A single sentence without any span given.",
]


def _spans(text: str) -> list[tuple[int, int]]:
    from components.text.language import sentence_spans

    return sentence_spans(text)


class TestEmbedWithSentences:
    def test_chunk_vectors_equal_embed(self, embedding_model):
        spans = [_spans(TEXTS[0]), _spans(TEXTS[1]), []]
        chunk_vectors, sentence_vectors = embedding_model.embed_with_sentence_spans(TEXTS, spans, batch_size=2)[:2]
        expected = embedding_model.embed(TEXTS)
        assert chunk_vectors.shape == (3, embedding_model.dimension)
        assert np.abs(chunk_vectors - expected).max() < 1e-4
        assert [len(vectors) for vectors in sentence_vectors] == [2, 2, 0]
        for vectors in sentence_vectors[:2]:
            assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_a_sentence_vector_is_the_mean_of_its_tokens_in_context(self, embedding_model):
        text = TEXTS[0]
        whole = [(0, len(text))]
        chunk_vectors, sentence_vectors = embedding_model.embed_with_sentence_spans([text], [whole])[:2]
        # The whole text without the special tokens is close to, not equal to, the pooled chunk vector.
        assert float(sentence_vectors[0][0] @ chunk_vectors[0]) > 0.95
        _, by_sentence = embedding_model.embed_with_sentence_spans([text], [_spans(text)])[:2]
        first, second = by_sentence[0]
        assert float(first @ second) < 0.99  # two sentences, two different vectors
        query = embedding_model.embed_one("Who won the game between the Broncos and the Panthers?")
        assert float(second @ query) > float(first @ query)

    def test_spans_outside_the_window_are_dropped(self, embedding_model):
        long_text = "Alpha beta gamma. " * 200 + "The last sentence is far away."
        tail = (len(long_text) - len("The last sentence is far away."), len(long_text))
        spans = [(0, 17), tail, (5, 5)]
        chunk_vectors, vectors, kept = embedding_model.embed_with_sentence_spans([long_text], [spans])
        assert kept == [[(0, 17)]]
        assert vectors[0].shape == (1, embedding_model.dimension)
        assert np.abs(chunk_vectors - embedding_model.embed([long_text])).max() < 1e-4

    def test_empty_input_and_mismatched_spans(self, embedding_model):
        chunk_vectors, sentence_vectors = embedding_model.embed_with_sentence_spans([], [])[:2]
        assert chunk_vectors.shape == (0, embedding_model.dimension) and sentence_vectors == []
        try:
            embedding_model.embed_with_sentence_spans(["one"], [])
        except ValueError as exc:
            assert "span lists" in str(exc)
        else:
            raise AssertionError("a missing span list must be refused")

    def test_thread_safe(self, embedding_model):
        expected = embedding_model.embed_with_sentence_spans(TEXTS, [_spans(t) for t in TEXTS])[0]
        results: list[np.ndarray] = []

        def work() -> None:
            results.append(embedding_model.embed_with_sentence_spans(TEXTS, [_spans(t) for t in TEXTS])[0])

        threads = [threading.Thread(target=work) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 3
        assert all(np.abs(result - expected).max() < 1e-5 for result in results)


class TestTokenizerSharedAcrossThreads:
    """The ingestion's reader thread counts word pieces (no padding) while the embedder pads its batches.

    With one shared fast tokenizer the counting call reset the padding between another thread's "pad" and its
    encoding, and ragged rows failed the batch with "Unable to create tensor, you should probably activate
    truncation and/or padding". Unrelated documents in the same batch failed with it.
    """

    def test_counting_in_another_thread_never_breaks_a_padded_batch(self, embedding_model):
        from components.ingestion.splitter import TokenSplitter
        from components.ingestion.structure import TextBuilder

        splitter = TokenSplitter(chunk_tokens=64, overlap_tokens=8)
        builder = TextBuilder()
        builder.paragraph("One short sentence. " + "Another, much longer sentence with many words in it. " * 30)
        document = builder.build("txt")
        stop = threading.Event()
        counted: list[int] = []

        def count() -> None:
            while not stop.is_set():
                counted.append(len(splitter.split(document)))
                counted.append(embedding_model.count_tokens("a text of a few words"))

        texts = ["short text.", "a much longer text with more words " * 12, "middle length text here"]
        expected = embedding_model.embed_with_sentence_spans(texts, [[], [], []])[0]
        counter = threading.Thread(target=count)
        counter.start()
        failures = []
        try:
            for _ in range(150):
                try:
                    vectors = embedding_model.embed_with_sentence_spans(texts, [[], [], []])[0]
                    assert np.abs(vectors - expected).max() < 1e-4
                except ValueError as exc:
                    failures.append(str(exc))
        finally:
            stop.set()
            counter.join()
        assert counted, "the counting thread must have run alongside"
        assert failures == []

    def test_the_tokenizer_for_counting_is_not_the_models_own(self, embedding_model):
        assert embedding_model.tokenizer is not embedding_model._model.tokenizer
        assert embedding_model.tokenizer._tokenizer.padding is None

    def test_lone_surrogates_and_empty_texts_embed(self, embedding_model):
        texts = ["before \ud800 after", "", "   ", "\x00\x01", "\u200b", "A normal sentence."]
        vectors, sentence_vectors, kept = embedding_model.embed_with_sentence_spans(
            texts, [[(0, 6)], [], [(0, 3)], [], [], [(0, 18)]]
        )
        assert vectors.shape == (len(texts), embedding_model.dimension)
        assert np.isfinite(vectors).all()
        assert kept[0] == [(0, 6)] and kept[-1] == [(0, 18)]
        assert embedding_model.embed(["\udfff"]).shape == (1, embedding_model.dimension)
