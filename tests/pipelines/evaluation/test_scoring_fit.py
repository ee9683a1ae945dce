"""`research fit scoring`: the pairwise ranking fit, the command on a tiny invented capture, and the ablation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.generation.answer_scoring import GROUPS
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.cli import main
from pipelines.evaluation.capture import write_capture
from pipelines.evaluation.scoring_fit import _answer_scores, does_not_lose, fit_ranking, labelled_groups
from tests.pipelines.cli.test_fit import capture_records


@pytest.fixture()
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "mini.capture.jsonl"
    write_capture(capture_records(), path)
    return path


def test_the_ranking_weighs_what_tells_the_right_candidate_from_the_wrong_ones() -> None:
    # In every invented group the right sentence holds more of the question; its cosine says nothing.
    groups = [
        [({"share": 0.9, "cosine": 0.2 + 0.1 * (i % 3)}, True), ({"share": 0.3, "cosine": 0.5 - 0.1 * (i % 2)}, False)]
        for i in range(12)
    ]
    weights = fit_ranking(groups, ("share", "cosine"), "share", 1.0, higher_is_better=True)
    assert weights["share"] == 1.0 and abs(weights["cosine"]) < 0.5
    # For a cost (lower is better), the feature of the right candidates gets a negative weight beside the pinned one.
    spans = [[({"distance": 1.0, "role": 1.0}, True), ({"distance": 4.0, "role": 0.0}, False)] for _ in range(6)]
    costs = fit_ranking(spans, ("distance", "role"), "distance", 1.0, higher_is_better=False)
    assert costs["distance"] == 1.0 and costs["role"] < 0
    # Groups without both labels give nothing to fit.
    assert fit_ranking([[({"share": 1.0}, True)]], ("share",), "share", 1.0, True) is None


def test_candidates_are_labelled_by_the_gold_answers() -> None:
    log = [
        {"kind": "sentence", "candidates": [({"share": 1.0}, "Mira Kell built it in 1901."), ({"share": 0.5}, "No.")]},
        {"kind": "entity_span", "candidates": [({"distance": 1}, "Mira Kell"), ({"distance": 2}, "1901")]},
    ]
    groups = labelled_groups(log, ["Mira Kell"])
    assert [label for _, label in groups["sentence"][0]] == [True, False]
    assert [label for _, label in groups["entity_span"][0]] == [True, False]
    assert groups["phrase_span"] == []


def test_a_change_is_kept_only_when_no_check_measure_loses() -> None:
    def scores(em: float, f1: float, contains: float) -> dict:
        return {"all": {"check": {"exact_match": em, "token_f1": f1, "contains": contains}}}

    assert does_not_lose(scores(0.4, 0.5, 0.9), scores(0.4, 0.55, 0.9))
    assert not does_not_lose(scores(0.4, 0.5, 0.9), scores(0.45, 0.55, 0.89))
    # A pooled gain does not hide a loss on one set's check half.
    before = scores(0.4, 0.5, 0.9) | {"small": {"check": {"exact_match": 0.2, "token_f1": 0.3, "contains": 0.7}}}
    after = scores(0.4, 0.51, 0.9) | {"small": {"check": {"exact_match": 0.2, "token_f1": 0.29, "contains": 0.7}}}
    assert not does_not_lose(before, after)


def test_the_command_fits_on_the_tune_half_and_writes_a_file_the_generator_reads(
    capture: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "scoring.json"
    report = tmp_path / "report.json"
    assert main(["fit", "scoring", f"squad_mini={capture}", "--out", str(out), "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "| squad_mini | tune | 4 |" in printed and "| squad_mini | check | 2 |" in printed
    data = json.loads(out.read_text())
    assert data["version"] == 1
    assert data["command"] == "research fit scoring squad_mini=mini.capture.jsonl"
    assert data["fitted_from"] == [
        {"set": "squad_mini", "file": "mini.capture.jsonl", "tune_questions": 4, "check_questions": 2}
    ]
    assert set(data["scores"]["squad_mini"]) == {"tune", "check"} and "scores_before" in data
    assert set(data["fitted"]) == set(GROUPS) and set(data["kept"]) <= set(data["trials"]) <= set(GROUPS)
    for group, features in GROUPS.items():
        assert set(data[group]) <= set(features)
    assert json.loads(report.read_text())["before"]["squad_mini"]["tune"]["questions"] == 4
    # The generator reads the written file: a weight changed in it is the generator's weight.
    data["sentence"] = {**data["sentence"], "cosine": 123.0}
    out.write_text(json.dumps(data), encoding="utf-8")
    generator = ExtractiveAnswerGenerator(embedding_model="", scoring_model=str(out))
    assert generator.scoring.to_dict()["sentence"]["cosine"] == 123.0


def test_the_ablation_prints_each_family_beside_all_rules(capture: Path, capsys) -> None:
    assert main(["fit", "scoring", f"squad_mini={capture}", "--ablate", "chain", "statement"]) == 0
    printed = capsys.readouterr().out
    assert "| all rules | squad_mini |" in printed
    assert "| without chain | squad_mini |" in printed and "| without statement | squad_mini |" in printed
    # Only the check half replayed: the tune half has no numbers.
    report = capture.parent / "ablation.json"
    assert (
        main(
            ["fit", "scoring", f"squad_mini={capture}", "--ablate", "chain", "--halves", "check", "--json", str(report)]
        )
        == 0
    )
    assert "| without chain | squad_mini | – / – / – / – / – | " in capsys.readouterr().out
    # The check half counts the headlines the packaged confidence would show, and the right ones among them.
    for variant in json.loads(report.read_text())["ablation"].values():
        check, tune = variant["squad_mini"]["check"], variant["squad_mini"]["tune"]
        assert isinstance(check["headlines"], int) and 0 <= check["right_headlines"] <= check["headlines"]
        assert tune["headlines"] is None and tune["right_headlines"] is None


def test_the_headlines_are_the_sure_parts_at_the_threshold_and_the_right_ones_among_them() -> None:
    def record(*parts: tuple[str, float, bool]) -> dict:
        return {
            "answers": ["Lake Orvin"],
            "candidates": "; ".join(text for text, _, _ in parts),
            "answer": " ".join(text for text, _, _ in parts),
            "parts": [{"short_answer": text, "short_answer_confidence": c, "sure": sure} for text, c, sure in parts],
        }

    records = [
        record(("Lake Orvin", 0.95, True)),  # shown and right
        record(("Port Adel", 0.91, True)),  # shown and wrong
        record(("Lake Orvin", 0.60, True)),  # right, below the threshold
        record(("Lake Orvin", 0.97, False)),  # held back by a rule whatever its confidence
        record(("Lake Orvin", 0.93, True), ("Port Adel", 0.20, True)),  # one part shown of two
    ]
    scores = _answer_scores(records, threshold=0.9)
    assert (scores["headlines"], scores["right_headlines"]) == (3, 2)
    assert "headlines" not in _answer_scores(records)  # the fit's own measures leave them out
    assert _answer_scores([], threshold=0.9)["headlines"] is None
