"""The evaluation's scores, checked by hand-worked cases and against Haystack's own evaluators."""

from __future__ import annotations

import math

import pytest

from pipelines.evaluation import metrics


class TestRetrievalScores:
    def test_first_gold_at_rank_two(self) -> None:
        scores = metrics.retrieval_scores(["d3", "d1", "d1", "d7"], gold={"d1"})
        assert scores["recall_any@1"] == 0.0
        assert scores["recall_any@5"] == 1.0 and scores["recall_all@5"] == 1.0
        assert scores["mrr@10"] == 0.5
        assert scores["ndcg@10"] == pytest.approx(1 / math.log2(3))

    def test_repeated_chunks_of_one_document_count_once(self) -> None:
        ranked = ["a", "a", "a", "a", "a", "b"]
        assert metrics.retrieval_scores(ranked, gold={"b"})["recall_any@5"] == 1.0  # b is the 2nd document

    def test_all_gold_needs_every_document(self) -> None:
        scores = metrics.retrieval_scores(["x", "g1", "y", "z", "w", "g2"], gold=["g1", "g2"])
        assert scores["recall_any@5"] == 1.0 and scores["recall_all@5"] == 0.0 and scores["recall_all@10"] == 1.0

    def test_no_gold_scores_zero(self) -> None:
        assert set(metrics.retrieval_scores(["a"], gold=[]).values()) == {0.0}

    def test_haystack_evaluators_agree(self) -> None:
        records = [
            {"ranked_doc_ids": ["d3", "d1"], "gold_doc_ids": ["d1"]},
            {"ranked_doc_ids": ["g1", "x", "g2"], "gold_doc_ids": ["g1", "g2"]},
            {"ranked_doc_ids": [], "gold_doc_ids": ["q"]},
        ]
        ours = [metrics.retrieval_scores(r["ranked_doc_ids"], r["gold_doc_ids"]) for r in records]
        theirs = metrics.aggregate_with_haystack(records)
        assert theirs["haystack_mrr@10"] == pytest.approx(sum(s["mrr@10"] for s in ours) / 3)
        assert theirs["haystack_recall_single_hit@10"] == pytest.approx(sum(s["recall_any@10"] for s in ours) / 3)
        assert theirs["haystack_ndcg@10"] == pytest.approx(sum(s["ndcg@10"] for s in ours) / 3)


class TestAnswerScores:
    def test_squad_normalisation(self) -> None:
        assert metrics.exact_match("The Denver Broncos.", ["Denver Broncos"]) == 1.0
        assert metrics.exact_match("Broncos [1]", ["Denver Broncos", "Broncos"]) == 1.0
        assert metrics.exact_match("Carolina", ["Denver Broncos"]) == 0.0

    def test_token_f1_takes_the_best_answer(self) -> None:
        assert metrics.token_f1("Denver Broncos won", ["Denver Broncos"]) == pytest.approx(0.8)
        assert metrics.token_f1("nothing", ["Denver Broncos"]) == 0.0

    def test_contains_gold(self) -> None:
        assert metrics.answer_contains_gold("The Denver Broncos won [1].", ["Denver Broncos"]) == 1.0
        assert metrics.answer_contains_gold("Denverites won.", ["Denver"]) == 0.0

    def test_cited_sentences(self) -> None:
        answer = "Denver won the game [1]. It was in Santa Clara [2, 3]. No citation here."
        assert metrics.split_cited_sentences(answer) == [
            ("Denver won the game.", [1]),
            ("It was in Santa Clara.", [2, 3]),
        ]

    def test_exact_match_and_f1_score_the_short_answer_when_there_is_one(self) -> None:
        sentence = "The Denver Broncos defeated the Carolina Panthers 24-10 [1]."
        with_short = {"answer": f"Denver Broncos [1]. {sentence}", "short_answer": "Denver Broncos"}
        assert metrics.scored_answer(with_short) == "Denver Broncos"
        assert metrics.exact_match(metrics.scored_answer(with_short), ["the Denver Broncos"]) == 1.0
        without = {"answer": sentence, "short_answer": ""}
        assert metrics.scored_answer(without) == sentence
        assert metrics.token_f1(metrics.scored_answer(without), ["Denver Broncos"]) == 0.5

    def test_lexical_support(self) -> None:
        chunk = "On February 7, 2016, the game was played at Levi's Stadium in Santa Clara."
        assert metrics.lexical_support("The game was played at Levi's Stadium", chunk) == 1.0
        assert metrics.lexical_support("Tom Brady retired in Boston", chunk) == 0.0

    @pytest.mark.integration
    def test_semantic_answer_similarity_with_the_local_model(self, embedding_model) -> None:
        sas = metrics.SemanticAnswerSimilarity()
        close, far, missing = sas.score(
            ["The Denver Broncos won [1].", "Photosynthesis needs light.", ""],
            [["Denver Broncos"], ["Denver Broncos"], ["Denver Broncos"]],
        )
        assert close is not None and far is not None and missing is None
        assert close > 0.6 > far


class TestPercentile:
    def test_interpolates_between_values(self) -> None:
        assert metrics.percentile([10.0, 20.0, 30.0, 40.0], 50) == pytest.approx(25.0)
        assert metrics.percentile([10.0, 20.0, 30.0, 40.0], 95) == pytest.approx(38.5)

    def test_no_values_give_the_empty_value(self) -> None:
        assert metrics.percentile([], 50) == 0.0
        assert math.isnan(metrics.percentile([], 95, empty=math.nan))


def test_citation_precision_leaves_out_a_verdict_no_chunk_can_hold():
    from components.generation.citation_checker import is_verdict

    citations = [
        {"sentence": "no [1].", "supported": None},  # a yes/no verdict: judged by the pipeline, not by its words
        {"sentence": "The Lantern Review is a weekly printed in Ostby [1].", "supported": True},
        {"sentence": "It was founded in 1923 [2].", "supported": False},
    ]
    assert metrics.citation_precision(citations) == 0.5
    assert metrics.citation_precision(citations[:1]) is None
    assert is_verdict("no [1].") and is_verdict("Yes.") and not is_verdict("No one knows [1].")
