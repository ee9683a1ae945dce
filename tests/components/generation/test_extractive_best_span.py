"""`ExtractiveAnswerGenerator` prefers the sentence the ranker marked as a chunk's best evidence."""

from __future__ import annotations

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from tests.components.ranking.chunks import kb_document

TEXT = (
    "Warsaw, the capital of Poland, has many parks along its river banks. "
    "The Vistula flows through Warsaw from south to north."
)
QUESTION = "Which river flows through Warsaw in Poland?"


def _document(best_span: tuple[int, int] | None):
    document = kb_document("v", TEXT, 0.6)
    if best_span is not None:
        document.meta["evidence"] = {"best_span": list(best_span)}
    return document


class TestBestSpan:
    def test_the_marked_sentence_comes_first(self):
        second = TEXT.index("The Vistula")
        generator = ExtractiveAnswerGenerator(max_sentences=1)
        plain = generator.run(query=QUESTION, documents=[_document(None)])["replies"][0]
        marked = generator.run(query=QUESTION, documents=[_document((second, len(TEXT)))])["replies"][0]
        assert plain.startswith("Warsaw, the capital of Poland")
        assert marked == "The Vistula flows through Warsaw from south to north [1]."

    def test_a_broken_span_is_ignored(self):
        generator = ExtractiveAnswerGenerator(max_sentences=1)
        for span in [(50, 10), (0, 10_000)]:
            reply = generator.run(query=QUESTION, documents=[_document(span)])["replies"][0]
            assert reply.startswith("Warsaw, the capital of Poland")
