"""The answer step replayed on captured sets and scored per set and half: one path for both fits."""

from __future__ import annotations

from pathlib import Path

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.evaluation.answer_replay import POOLED, replay_sets, scores_by_half, short_answer_scores
from pipelines.evaluation.capture import write_capture
from tests.pipelines.cli.test_fit import capture_records


def record(set_name: str, half: str, candidates: str, answers: list[str]) -> dict:
    return {"set": set_name, "half": half, "candidates": candidates, "answers": answers, "answer": candidates}


def test_scores_each_set_and_half_and_pools_them_only_when_asked() -> None:
    records = [
        record("harbour", "tune", "Ilse Varga", ["Ilse Varga"]),
        record("harbour", "check", "Ilse Varga", ["Tomas Brill"]),
        record("lighthouse", "check", "Tomas Brill", ["Tomas Brill"]),
        record("lighthouse", "check", "nobody", []),  # no gold answer: not a question the scores count
    ]
    scores = scores_by_half(records, short_answer_scores)
    assert list(scores) == ["harbour", "lighthouse"]
    assert scores["harbour"]["tune"] == {"questions": 1, "exact_match": 1.0, "token_f1": 1.0}
    assert scores["lighthouse"]["check"]["questions"] == 1
    assert scores["lighthouse"]["tune"] == {"questions": 0, "exact_match": None, "token_f1": None}
    pooled = scores_by_half(records, short_answer_scores, pooled=True)
    assert pooled[POOLED]["check"] == {"questions": 2, "exact_match": 0.5, "token_f1": 0.5}


def test_a_set_named_like_the_pool_is_still_scored_alone() -> None:
    records = [record(POOLED, "tune", "Ilse Varga", ["Ilse Varga"]), record("harbour", "tune", "x", ["Ilse Varga"])]
    assert scores_by_half(records, short_answer_scores)[POOLED]["tune"]["questions"] == 1


def test_replays_every_variant_on_the_chosen_halves_with_its_parts(tmp_path: Path) -> None:
    path = tmp_path / "squad.capture.jsonl"
    write_capture(capture_records(), path)
    generators = {
        "sure": ExtractiveAnswerGenerator(confidence_threshold=0.0),
        "unsure": ExtractiveAnswerGenerator(confidence_threshold=1.0),
    }
    seen: list[tuple[str, str]] = []
    variants = replay_sets({"squad": path}, generators, lambda name, set_name, *_: seen.append((name, set_name)))
    assert [len(records) for records in variants.values()] == [6, 6]
    first = variants["sure"][0]
    assert list(first) == ["set", "half", "id", "answers", "parts", "candidates", "answer"]
    assert first["parts"] and first["candidates"] == first["parts"][0]["short_answer"]
    assert seen[:2] == [("sure", "squad"), ("unsure", "squad")]
    checked = replay_sets({"squad": path}, {"sure": generators["sure"]}, halves=("check",))["sure"]
    assert checked and {r["half"] for r in checked} == {"check"}
    # `select` keeps the captured records it is true of, before any is answered.
    asked: list[str] = []

    def founded(captured: dict) -> bool:
        asked.append(captured["query"])
        return "founded" in captured["query"]

    chosen = replay_sets({"squad": path}, {"sure": generators["sure"]}, select=founded)["sure"]
    assert len(asked) == 6 and [r["id"] for r in chosen] == [
        r["id"] for r in capture_records() if "founded" in r["query"]
    ]
