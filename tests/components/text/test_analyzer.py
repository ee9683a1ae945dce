"""The shared lexical analyzer."""

from __future__ import annotations

import re
import threading

import pytest
from spacy.lang.en.stop_words import STOP_WORDS as SPACY_STOP_WORDS

from components.text.analyzer import (
    SENTENCE_TERMS_SEPARATOR,
    STOP_WORDS,
    analyze,
    content_words,
    sentence_terms_counts,
    sentence_terms_record,
    stem,
    term_counts,
    terms,
    words,
)


class TestTerms:
    def test_lower_cases_drops_stop_words_and_stems(self):
        assert terms("Which teams PLAYED in the Super Bowl?") == ["team", "play", "super", "bowl"]
        assert terms("running runs ran") == ["run", "run", "run"]  # irregular forms join their lemma
        assert terms("She wrote it; it was written") == ["write", "write"]
        assert terms("") == [] and terms(None) == []  # type: ignore[arg-type]

    def test_punctuation_and_underscores_split_words_and_unicode_is_kept(self):
        assert terms("state-of-the-art snake_case Zürich's") == ["state", "art", "snake", "case", "zürich"]

    def test_stop_words_are_spacys_but_its_numbers_with_the_pieces_of_its_contractions(self):
        assert STOP_WORDS - SPACY_STOP_WORDS == {"d", "ll", "m", "n", "s", "t", "ve"}
        assert {"nine", "hundred", "first", "third"} <= SPACY_STOP_WORDS - STOP_WORDS
        assert content_words("She'd say the Broncos' first 2 wins were ours.") == ["broncos", "first", "2", "wins"]

    @pytest.mark.parametrize(
        "text",
        ["Pier-head 40t crane, snake_case & 3.5 tonnes!", "Zürich's İzmir-bound ΟΔΟΣ", "\u212aelvin", "", "a_b__c"],
    )
    def test_ascii_text_is_cut_into_the_same_words_as_any_text(self, text):
        assert words(text) == re.findall(r"[^\W_]+", text.lower())

    def test_term_counts(self):
        assert term_counts("The cat sat. The cats sat on cats.") == {"cat": 3, "sit": 2}

    def test_stems_are_cached(self):
        stem.cache_clear()
        terms("organisation organisations organisation")
        info = stem.cache_info()
        assert info.misses == 2 and info.hits == 1

    def test_threads_share_the_cache_safely(self):
        words = [f"connection{i} connecting connected" for i in range(300)]
        expected = [terms(text) for text in words]
        stem.cache_clear()
        failures: list[str] = []

        def work() -> None:
            for text, want in zip(words, expected, strict=True):
                if terms(text) != want:
                    failures.append(text)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []


class TestAnalyze:
    def test_analyze_counts_every_word_of_the_text(self):
        text = 'Dr. Smith met J. R. R. Tolkien. He said "Hello." Then left!\n\nNew part, e.g. here. Last one  \n'
        assert analyze(text).counts == term_counts(text)

    def test_analyze_counts_terms_and_length(self):
        analysis = analyze("The Broncos won the game. Denver's defense played hard.")
        assert analysis.counts["bronco"] == 1 and analysis.length == sum(analysis.counts.values())


class TestSentenceTermsRecord:
    """A chunk's sentence terms stored as one string: each sentence's terms, then the rest of the text's, adding up to
    what analysing the text gives."""

    TEXT = "Orvel Quay opened in 1931.  Its cranes lift 40 tonnes!\n<p> Tolls rose; the quay's ferries kept running."
    SPANS = ((0, 26), (28, 54), (59, 104))

    def test_each_sentences_terms_then_the_rest_adding_up_to_the_whole_texts_counts(self):
        record = sentence_terms_record(self.TEXT, self.SPANS)
        pieces = record.split(SENTENCE_TERMS_SEPARATOR)
        # The "<p>" between the second and the third sentence is outside every sentence.
        expected = [terms(self.TEXT[start:end]) for start, end in self.SPANS] + [["p"]]
        assert [piece.split() for piece in pieces] == expected
        assert sentence_terms_counts(record, len(self.SPANS)) == term_counts(self.TEXT)

    def test_terms_outside_the_sentences_come_last(self):
        record = sentence_terms_record(self.TEXT, self.SPANS[:1])
        assert sorted(record.split(SENTENCE_TERMS_SEPARATOR)[1].split()) == sorted(terms(self.TEXT[26:]))
        assert sentence_terms_counts(record, 1) == term_counts(self.TEXT)

    def test_a_span_cutting_a_word_gives_no_record(self):
        assert sentence_terms_record("Orvel Quay opened.", ((0, 8), (8, 18))) is None

    @pytest.mark.parametrize("record", [None, 7, "orvel quay", "a|b|c|d|e"])
    def test_a_record_for_other_sentences_or_none_is_not_read(self, record):
        assert sentence_terms_counts(record, len(self.SPANS)) is None
