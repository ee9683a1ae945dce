"""The answer confidence fit's labels: a several-part question's gold answers make at most one part right each."""

from __future__ import annotations

from pipelines.evaluation.confidence_fit import labelled_rows, part_labels


def _record(short_answers: list[str], answers: list[str]) -> dict:
    parts = [{"short_answer": short, "features": {"margin": float(index)}} for index, short in enumerate(short_answers)]
    return {"answers": answers, "parts": parts}


def test_one_gold_answer_makes_only_the_part_that_matches_it_best_right() -> None:
    record = _record(["Orla Brennick", "Brennick"], ["Orla Brennick"])
    rows, labels = labelled_rows([record])
    assert [row["margin"] for row in rows] == [0.0, 1.0]
    assert labels == [True, False]


def test_a_tie_goes_to_the_earlier_part() -> None:
    assert part_labels(["Velmarsh", "Velmarsh"], ["Velmarsh"]) == [True, False]


def test_each_gold_answer_can_make_its_own_part_right() -> None:
    assert part_labels(["Quillon Ardt", "1874"], ["1874", "Quillon Ardt"]) == [True, True]


def test_a_part_matching_no_gold_answer_is_wrong_and_a_single_part_keeps_any_match() -> None:
    assert part_labels(["Tarnby", "Quillon Ardt"], ["Quillon Ardt"]) == [False, True]
    assert part_labels(["Ardt"], ["Quillon Ardt", "Ardt"]) == [True]


def test_a_part_without_a_short_answer_neither_counts_nor_takes_a_gold_answer() -> None:
    record = _record(["", "Orla Brennick"], ["Orla Brennick"])
    rows, labels = labelled_rows([record])
    assert [row["margin"] for row in rows] == [1.0]
    assert labels == [True]
