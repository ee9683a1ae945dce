"""What the analyst sees of the short answers: coverage, precision, risk-coverage, calibration, halves, threshold."""

from __future__ import annotations

import pytest

from pipelines.evaluation.confidence_fit import choose_threshold
from pipelines.evaluation.halves import half_of
from pipelines.evaluation.selective import (
    curve_summary,
    expected_calibration_error,
    part_rows,
    risk_coverage,
    selective_scores,
)


def test_part_rows_read_each_parts_confidence_correctness_and_whether_shown() -> None:
    record = {
        "answers": ["Orvelle Dunmark"],
        "parts": [
            {"short_answer": "Orvelle Dunmark", "short_answer_confidence": 0.9, "sure": True},
            {"short_answer": "the Kestrel works", "short_answer_confidence": 0.3, "sure": False},
            {"short_answer": "", "short_answer_confidence": 0.0, "sure": False},
        ],
    }
    assert part_rows(record) == [(0.9, True, True), (0.3, False, False), (0.0, False, False)]


ROWS = [(0.9, True, True), (0.8, True, True), (0.6, False, True), (0.4, True, False), (0.0, False, False)]


def test_coverage_and_precision_of_the_shown_headlines() -> None:
    scores = selective_scores(ROWS)
    assert scores["parts"] == 5
    assert scores["coverage"] == pytest.approx(3 / 5)
    assert scores["precision"] == pytest.approx(2 / 3)


def test_risk_coverage_shows_the_most_confident_first_and_never_a_part_without_an_answer() -> None:
    assert risk_coverage(ROWS) == [(0.2, 0.0), (0.4, 0.0), (0.6, pytest.approx(1 / 3)), (0.8, 0.25)]
    assert selective_scores(ROWS)["aurc"] == pytest.approx((0 + 0 + 1 / 3 + 0.25) / 4)


def test_ece_weighs_each_bins_gap_between_confidence_and_accuracy() -> None:
    # Bin (0.8, 0.9]: two parts, mean confidence 0.85, both right (gap 0.15); (0.5, 0.6]: 0.6 vs 0;
    # (0.3, 0.4]: 0.4 vs 1.
    assert expected_calibration_error(ROWS) == pytest.approx((2 * 0.15 + 0.6 + 0.6) / 4)
    assert expected_calibration_error([(0.0, False, False)]) is None


def test_no_parts_has_no_scores() -> None:
    assert selective_scores([])["coverage"] is None
    assert curve_summary([])["curve"] == []


def test_threshold_is_the_lowest_reaching_the_target_precision() -> None:
    scored = [(1.0 - index / 100, index % 10 != 9) for index in range(60)]  # every tenth wrong: 0.9 precision
    threshold = choose_threshold(scored, target=0.9)
    shown = [right for confidence, right in scored if confidence >= threshold]
    assert sum(shown) / len(shown) >= 0.9
    assert len(shown) == 60
    assert choose_threshold([(0.9, False)] * 30, target=0.9) == 0.9  # never reached: only the most confident


@pytest.mark.parametrize(
    ("set_name", "record", "half"),
    [
        ("squad_dev_a", {"id": "squad-11-0042"}, "tune"),
        ("squad_dev_a", {"id": "squad-12-0001"}, "check"),
        # A SQuAD question's own id is a hash: its article is its gold paragraph's.
        ("squad_dev_a", {"id": "5a1b2c3d4e5f60718293a4b5", "gold_doc_ids": ["squad-03-017"]}, "tune"),
        ("squad_dev_a", {"id": "5a1b2c3d4e5f60718293a4b5", "gold_doc_ids": ["squad-19-002"]}, "check"),
        ("hotpotqa_dev40", {"id": "x", "index": 19}, "tune"),
        ("musique_dev40", {"id": "x", "index": 20}, "check"),
    ],
)
def test_halves_of_the_public_sets(set_name: str, record: dict, half: str) -> None:
    assert half_of(set_name, record) == half


def test_other_sets_split_by_a_fixed_seed_into_about_halves() -> None:
    halves = [half_of("demo_questions", {"id": f"demo-{index:02d}"}) for index in range(200)]
    assert halves == [half_of("demo_questions", {"id": f"demo-{index:02d}"}) for index in range(200)]
    assert 70 < halves.count("tune") < 130
