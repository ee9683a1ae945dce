"""The shared lexical analyzer."""

from __future__ import annotations

import re
import threading

import pytest
from spacy.lang.en.stop_words import STOP_WORDS as SPACY_STOP_WORDS

from components.text.analyzer import STOP_WORDS, analyze, content_words, stem, term_counts, terms, words


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
