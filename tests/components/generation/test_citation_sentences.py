"""The citation check reads an answer's sentences from the chunk sentences it was assembled from (their cuts stored
at ingestion) and the answer's fixed lines, and parses only the rest: the same cuts and verdicts as parsing the whole
answer, for answers the extractive generator assembles and for text it did not."""

from __future__ import annotations

import pytest
from haystack import Document

from components.generation import CitationChecker, ExtractiveAnswerGenerator
from components.generation import citation_checker as checker_module
from components.generation.answer_wording import UNSURE_NOTE
from components.generation.citation_checker import answer_sentences
from components.text import language
from components.text.language import SENTENCE_SPANS_KEY, sentence_spans, sentences
from tests.components.ranking.chunks import kb_document

TEXTS = {
    "lantern": "Lantern is a small key-value store for embedded devices. The project was started in 2011 by Maria "
    "Lindqvist and Tomas Berg in Uppsala. Its storage engine keeps every record in a log-structured file. Today the "
    "store is maintained by Northwind Labs.",
    "harbour": "The old harbour of Kestrel Bay handles fishing boats and ferries. The harbour employs 340 people and "
    "moves about two million passengers a year. Ferries to the islands leave every hour in summer.",
    "observatory": "The Altamira observatory studies variable stars. It stands on a ridge near Granada, Spain, at "
    "2,100 metres. Dr. Ines Varga built its main telescope, which has a mirror of 3.5 metres.",
}


def stored(chunk_id: str, relevance: float) -> Document:
    """A kb chunk carrying its sentence spans, as ingestion stores them."""
    document = kb_document(chunk_id, TEXTS[chunk_id], relevance)
    document.meta[SENTENCE_SPANS_KEY] = [[start, end] for start, end in sentence_spans(TEXTS[chunk_id])]
    return document


DOCUMENTS = [stored("lantern", 0.6), stored("harbour", 0.5), stored("observatory", 0.5)]
QUESTIONS = [
    "Who started Lantern?",
    "Where does the Altamira observatory stand?",
    "How many people does the harbour employ?",
    "What about the storage engine of Lantern?",
    "Who built the main telescope, and when was Lantern started?",
    "What is the capital of Mars?",
]
# Answers the generator did not assemble: a chat model's words around copied sentences, a copy inside a longer
# sentence, a marker split off its claim, line breaks, and no citation at all.
WRITTEN = [
    "According to the sources, the project was started in 2011 by Maria Lindqvist and Tomas Berg in Uppsala [1]. "
    "Today the store is maintained by Northwind Labs [1].",
    "Note: The harbour employs 340 people and moves about two million passengers a year [2]. Dr. Varga built the "
    "telescope [3].",
    "The project was started in 2011 by Maria Lindqvist and Tomas Berg in Uppsala. [1]",
    "Lantern is a small key-value store for embedded devices [1].\nIts storage engine keeps every record in a "
    "log-structured file [1].\n\nFerries to the islands leave every hour in summer [2].",
    "It stands on a ridge near Granada, Spain, at 2,100 metres [3]. it is high up.",
    "Nothing here cites a source.",
]


def _generated(question: str, threshold: float) -> str:
    generator = ExtractiveAnswerGenerator(confidence_threshold=threshold)
    return generator.run(query=question, documents=DOCUMENTS)["replies"][0]


def _parsed_whole(monkeypatch: pytest.MonkeyPatch, answer: str) -> dict:
    """The check's result when it parses the whole answer, as it did before reading assembled sentences."""
    with monkeypatch.context() as patched:
        patched.setattr(checker_module, "answer_sentences", lambda text, _: sentences(text, cache=False))
        return CitationChecker().run(answer=answer, documents=DOCUMENTS)


# threshold 0: every short answer leads as a headline; 1: none does, and the answer says it is not sure.
@pytest.mark.parametrize("threshold", [0.0, 1.0])
@pytest.mark.parametrize("question", QUESTIONS)
def test_an_assembled_answer_is_cut_and_checked_as_its_whole_parse(
    monkeypatch: pytest.MonkeyPatch, question: str, threshold: float
) -> None:
    answer = _generated(question, threshold)
    assert answer_sentences(answer, DOCUMENTS) == sentences(answer, cache=False)
    assert CitationChecker().run(answer=answer, documents=DOCUMENTS) == _parsed_whole(monkeypatch, answer)


@pytest.mark.parametrize("answer", WRITTEN)
def test_text_it_did_not_assemble_is_cut_and_checked_as_its_whole_parse(
    monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    assert answer_sentences(answer, DOCUMENTS) == sentences(answer, cache=False)
    assert CitationChecker().run(answer=answer, documents=DOCUMENTS) == _parsed_whole(monkeypatch, answer)


def test_the_sentences_it_assembled_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = (
        "The project was started in 2011 by Maria Lindqvist and Tomas Berg in Uppsala [1]. "
        f"{UNSURE_NOTE} The harbour employs 340 people and moves about two million passengers a year [2]."
    )
    expected = sentences(answer, cache=False)

    def no_parse(*_: object, **__: object) -> None:
        raise AssertionError("an assembled sentence was parsed")

    monkeypatch.setattr(language, "analyse_text", no_parse)
    assert answer_sentences(answer, DOCUMENTS) == expected
    checked = CitationChecker().run(answer=answer, documents=DOCUMENTS)["sentences"]
    assert [(item["supported"], item["abstains"]) for item in checked] == [(True, False), (True, True), (True, False)]


def test_only_the_text_it_cannot_account_for_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    headline = "Maria Lindqvist and Tomas Berg [1]."
    answer = f"{headline} The project was started in 2011 by Maria Lindqvist and Tomas Berg in Uppsala [1]."
    expected = sentences(answer, cache=False)
    read: list[str] = []
    analyse = language.analyse_text

    def recorded(text: str, **options: bool) -> list:
        read.append(text)
        return analyse(text, **options)

    monkeypatch.setattr(language, "analyse_text", recorded)
    assert answer_sentences(answer, DOCUMENTS) == expected
    assert read == [f"{headline} "]


def test_a_sentence_of_a_chunk_the_answer_does_not_cite_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Copied from the second chunk, cited as the first: not what the generator would write, so it is read anew.
    answer = "The harbour employs 340 people and moves about two million passengers a year [1]."
    expected = sentences(answer, cache=False)
    read: list[str] = []
    analyse = language.analyse_text
    monkeypatch.setattr(language, "analyse_text", lambda text, **options: read.append(text) or analyse(text, **options))
    assert answer_sentences(answer, DOCUMENTS) == expected
    assert read == [answer]


@pytest.mark.parametrize("evidence", [{"sentences": [[3]]}, {"sentences": 5}, {"sentences": "0 10"}, ["x"], None])
def test_evidence_metadata_not_in_the_rankers_form_is_ignored(evidence: object) -> None:
    # A chunk's metadata comes from its source: whatever it holds under the ranker's key, the check still runs and
    # cuts the answer as the whole parse does.
    document = stored("lantern", 0.6)
    document.meta["evidence"] = evidence
    answer = "Lantern is a small key-value store for embedded devices [1]. It was built on Mars by Zorg."
    assert answer_sentences(answer, [document]) == sentences(answer, cache=False)
    assert CitationChecker().run(answer=answer, documents=[document])["unsupported"] == 1
