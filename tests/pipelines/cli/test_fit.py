"""`research fit answer`: fits the answer confidence on a tiny labelled capture; the generator reads the file. Bad
arguments to either `research fit` command are one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from haystack import Document

from components.generation.answer_confidence import AnswerConfidence
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.cli import main
from pipelines.evaluation.capture import write_capture
from pipelines.evaluation.confidence_fit import shown_precision

FACTS = [
    (
        "Kestrel Lantern Works",
        "Who founded the Kestrel Lantern Works?",
        "Orvelle Dunmark founded the Kestrel Lantern Works in 1874.",
    ),
    ("Brambleford Mill", "Who founded Brambleford Mill?", "Wendolin Pratt founded Brambleford Mill in 1902."),
    ("Ostery Bridge", "Who designed the Ostery Bridge?", "Calloway Finch designed the Ostery Bridge in 1911."),
    ("Harrowgate Press", "Who founded Harrowgate Press?", "Imelda Sorrel founded Harrowgate Press in 1890."),
    ("Tamsin Observatory", "Who built the Tamsin Observatory?", "Jory Malden built the Tamsin Observatory in 1860."),
    ("Quillon Canal", "Who dug the Quillon Canal?", "Perrin Ashby dug the Quillon Canal in 1799."),
]


def capture_records() -> list[dict]:
    """Questions about invented things; every other one has a wrong gold answer, so both labels occur."""
    records = []
    for index, (title, question, sentence) in enumerate(FACTS):
        document = Document(content=sentence + " It still stands today.", meta={"source_title": title})
        record = document.to_dict(flatten=False)
        record.pop("embedding", None)
        right = sentence.split(" ")[0] + " " + sentence.split(" ")[1]
        article = index % 3 if index < 4 else 12 + index  # articles 0-2 tune, 16-17 check
        records.append(
            {
                "id": f"squad-{article:02d}-{index}",
                "index": index,
                "query": question,
                "analysis": None,
                "documents": [record],
                "answers": [right] if index % 2 == 0 else ["Somebody Else Entirely"],
            }
        )
    return records


@pytest.fixture()
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "mini.capture.jsonl"
    write_capture(capture_records(), path)
    return path


def test_fits_on_the_tune_half_and_writes_a_file_the_generator_reads(capture: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "confidence.json"
    chart = tmp_path / "risk.png"
    assert (
        main(["fit", "answer", f"squad_mini={capture}", "--out", str(out), "--threshold", "0.4", "--chart", str(chart)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "| squad_mini | tune | 4 |" in printed and "| squad_mini | check | 2 |" in printed
    assert chart.stat().st_size > 0
    data = json.loads(out.read_text())
    assert data["threshold"] == 0.4
    assert data["command"] == "research fit answer squad_mini=mini.capture.jsonl"
    assert data["fitted_from"] == [
        {"set": "squad_mini", "file": "mini.capture.jsonl", "tune_questions": 4, "check_questions": 2}
    ]
    assert data["tune_parts"] == 4 and data["tune_right"] == 2  # fitted on the tune half only
    assert set(data["scores"]["squad_mini"]) == {"tune", "check"}
    headlines = data["check_headlines"]  # the check half's headlines at the threshold, with their interval
    assert set(headlines) == {"shown", "right", "precision", "interval", "level"} and headlines["level"] == 0.95
    check = data["scores"]["squad_mini"]["check"]
    assert headlines["shown"] == round(check["coverage"] * check["parts"])  # the check parts the threshold shows
    if headlines["shown"]:
        low, high = headlines["interval"]
        assert low <= headlines["precision"] == headlines["right"] / headlines["shown"] <= high
        assert f"show {headlines['shown']} headlines, {headlines['right']} right" in printed
    else:
        assert "show no headline" in printed
    model = AnswerConfidence.load(out)
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(out))
    answer = generator.run(
        query=FACTS[0][1], documents=[Document(content=FACTS[0][2], meta={"source_title": FACTS[0][0]})]
    )
    assert answer["parts"][0]["short_answer_confidence"] == pytest.approx(
        model.probability(answer["parts"][0]["features"]), abs=1e-4
    )


def test_binary_unscaled_keeps_a_yes_no_feature_undivided_and_says_so_in_the_file(
    capture: Path, tmp_path: Path
) -> None:
    plain, unscaled = tmp_path / "plain.json", tmp_path / "unscaled.json"
    assert main(["fit", "answer", f"squad_mini={capture}", "--out", str(plain)]) == 0
    assert main(["fit", "answer", f"squad_mini={capture}", "--out", str(unscaled), "--binary-unscaled"]) == 0
    before, after = json.loads(plain.read_text()), json.loads(unscaled.read_text())
    assert after["binary_unscaled"] is True and before["binary_unscaled"] is False
    pairs = list(zip(before["scale"], after["scale"], strict=True))
    # Each column is either a yes/no one (centred only: scale 1) or a measured one (twice its spread).
    assert all(new == 1.0 or new == pytest.approx(2 * old) for old, new in pairs)
    assert any(new == pytest.approx(2 * old) and old != 1.0 for old, new in pairs)


def test_ablation_prints_what_each_feature_group_adds(capture: Path, tmp_path: Path, capsys) -> None:
    from components.generation.answer_evidence import EVIDENCE_GROUPS

    out = tmp_path / "confidence.json"
    assert main(["fit", "answer", f"squad_mini={capture}", "--out", str(out), "--ablation"]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("| features |"))
    assert "squad_mini tune AUC" in header and "squad_mini check AUC" in header and "check coverage" in header
    variants = [line.split(" | ")[0].removeprefix("| ") for line in printed.splitlines() if line.startswith("| ")]
    assert {"all", "found only", *(f"without {group}" for group in EVIDENCE_GROUPS)} <= set(variants)


def test_fit_spans_writes_a_model_the_generator_reads_and_refits_from_its_kept_log(
    capture: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    from components.generation.span_choice import SpanModel
    from pipelines.evaluation import span_fit

    out, kept = tmp_path / "spans.json", tmp_path / "spans.contexts.json"
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(out), "--contexts", str(kept)]) == 0
    printed = capsys.readouterr().out
    assert "| squad_mini | tune | 4 | 4 |" in printed and "| squad_mini | check | 2 | 2 |" in printed
    data = json.loads(out.read_text())
    assert data["command"] == "research fit spans squad_mini=mini.capture.jsonl"
    assert data["tune_parts"] == 4 and data["tune_right"] >= 2  # the tune half's candidates only
    assert set(data["scores"]["squad_mini"]["check"]) == {"rules", "model", "switch"}
    assert data["switch_margin"] in span_fit.SWITCH_MARGINS  # the lead the pick needs, chosen on the tune half
    model = SpanModel.load(out)
    generator = ExtractiveAnswerGenerator(embedding_model="", span_model=str(out))
    answer = generator.run(
        query=FACTS[0][1], documents=[Document(content=FACTS[0][2], meta={"source_title": FACTS[0][0]})]
    )
    assert answer["parts"][0]["short_answer"] == "Orvelle Dunmark"
    assert 0.0 < answer["parts"][0]["features"]["span_probability"] <= 1.0
    # The kept log is read instead of replaying the capture: the same model again.

    def no_replay(_: object) -> None:
        raise AssertionError("replayed although the log was kept")

    monkeypatch.setattr(span_fit, "collect_contexts", no_replay)
    again = tmp_path / "again.json"
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(again), "--contexts", str(kept)]) == 0
    assert SpanModel.load(again).coef == model.coef


@pytest.mark.parametrize("objective", ["pairwise", "listwise"])
def test_fit_spans_ranks_with_an_objective_and_chooses_c_by_grouped_cross_validation(
    capture: Path, tmp_path: Path, capsys, objective: str
) -> None:
    from pipelines.evaluation import span_fit

    out, kept = tmp_path / "spans.json", tmp_path / "spans.contexts.json"
    arguments = ["fit", "spans", f"squad_mini={capture}", "--out", str(out), "--contexts", str(kept)]
    assert main([*arguments, "--objective", objective, "--cv"]) == 0
    data = json.loads(out.read_text())
    # Both models in one file: the ranker (C by grouped CV) picks, the pointwise one (--c) gives the probability.
    rank = data["rank"]
    assert rank["objective"] == objective and rank["c"] in span_fit.C_GRID
    assert set(rank["cross_validated"]) == {str(c) for c in span_fit.C_GRID}
    assert "objective" not in data and data["c"] == 1.0 and data["version"] == 2
    assert len(rank["coef"]) == len(data["coef"]) and rank["coef"] != data["coef"]
    assert data["command"] == f"research fit spans squad_mini=mini.capture.jsonl --objective {objective} --cv"
    assert f"ranked by a {objective} model (C {rank['c']})" in capsys.readouterr().out
    # The pointwise model alone is the one `--objective pointwise` fits with the same C.
    plain = tmp_path / "plain.json"
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(plain), "--contexts", str(kept)]) == 0
    assert json.loads(plain.read_text())["coef"] == data["coef"] and "rank" not in json.loads(plain.read_text())
    generator = ExtractiveAnswerGenerator(embedding_model="", span_model=str(out))
    answer = generator.run(
        query=FACTS[0][1], documents=[Document(content=FACTS[0][2], meta={"source_title": FACTS[0][0]})]
    )
    assert answer["parts"][0]["short_answer"] == "Orvelle Dunmark"


def test_fit_spans_counts_the_parts_with_a_right_span_not_their_right_candidates(
    capture: Path, tmp_path: Path, capsys
) -> None:
    # A sentence naming its answer twice gives a part two right candidates: the parts with a right one are counted.
    out, kept = tmp_path / "spans.json", tmp_path / "spans.contexts.json"
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(out), "--contexts", str(kept)]) == 0
    log = json.loads(kept.read_text())
    for context in log["contexts"]:
        context["sentence"] += f" {context['answers'][0]} stayed there."
    kept.write_text(json.dumps(log))
    capsys.readouterr()
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(out), "--contexts", str(kept)]) == 0
    data = json.loads(out.read_text())
    assert data["tune_right"] > data["tune_parts"] >= data["tune_right_parts"] > 0
    assert f"({data['tune_right']} right, in {data['tune_right_parts']} parts)" in capsys.readouterr().out


def test_a_kept_span_log_of_other_sets_is_not_read_for_these(capture: Path, tmp_path: Path, capsys) -> None:
    # The log records the sets it was made from: a refit naming other sets would fit on the old ones' candidates
    # while its file says it was fitted on the new ones.
    kept, first = tmp_path / "spans.contexts.json", tmp_path / "a.json"
    assert main(["fit", "spans", f"squad_mini={capture}", "--out", str(first), "--contexts", str(kept)]) == 0
    assert json.loads(kept.read_text())["sets"] == {"squad_mini": "mini.capture.jsonl"}
    capsys.readouterr()
    other = tmp_path / "b.json"
    assert main(["fit", "spans", f"squad_other={capture}", "--out", str(other), "--contexts", str(kept)]) != 0
    error = capsys.readouterr().err
    assert f"the kept span log at {kept} was made from other sets (squad_mini=mini.capture.jsonl)" in error
    assert "Traceback" not in error and not other.exists()


@pytest.mark.parametrize("model", ["answer", "spans"])
def test_a_capture_without_a_tune_half_is_one_sentence(tmp_path: Path, capsys, model: str) -> None:
    check_only = tmp_path / "check.capture.jsonl"
    write_capture(capture_records()[4:], check_only)  # articles 16-17: the check half only
    out = tmp_path / "model.json"
    assert main(["fit", model, f"squad={check_only}", "--out", str(out)]) != 0
    error = capsys.readouterr().err
    assert "the sets' tune halves hold no labelled" in error and "Traceback" not in error and not out.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["answer", "{capture}"], "is not SET=CAPTURE.jsonl"),
        (["answer", "squad={absent}"], "does not exist"),
        (["answer", "squad={capture}", "--threshold", "2"], "--threshold must be between 0 and 1"),
        (["scoring", "squad={capture}", "--ablate", "loudness"], "unknown rule families: loudness"),
        (["scoring", "squad={capture}", "--start", "{absent}"], "does not exist"),
        (["spans", "squad={capture}", "--c", "0"], "--c must be above 0"),
        (["spans", "squad={capture}", "--c", "nan"], "--c must be above 0"),
        (["answer", "squad={capture}", "--c", "-1"], "--c must be above 0"),
        (["scoring", "squad={capture}", "--c", "0"], "--c must be above 0"),
        # A file the fit writes that is a folder: one sentence naming it, not the write's stack trace.
        (["answer", "squad={capture}", "--out", "{folder}"], "cannot read or write {folder}: Is a directory"),
        (["scoring", "squad={capture}", "--out", "{folder}"], "cannot read or write {folder}: Is a directory"),
        (["spans", "squad={capture}", "--out", "{folder}"], "cannot read or write {folder}: Is a directory"),
        (["spans", "squad={capture}", "--contexts", "{folder}"], "cannot read or write {folder}: Is a directory"),
        (["verdicts", "{capture}"], "is not SET=CAPTURE.jsonl"),
    ],
)
def test_bad_arguments_are_one_sentence(capture: Path, tmp_path: Path, capsys, arguments, message) -> None:
    (tmp_path / "folder").mkdir()
    names = {"capture": capture, "absent": tmp_path / "absent.jsonl", "folder": tmp_path / "folder"}
    filled = [value.format(**names) for value in arguments]
    message = message.format(**names)
    assert main(["fit", *filled]) != 0
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"records": []}', "is not one `research fit spans --contexts` wrote"),
        ('{"records": [{"set": "squad"}], "contexts": []}', "is not one `research fit spans --contexts` wrote"),
    ],
)
def test_a_corrupt_kept_span_log_is_one_sentence(capture: Path, tmp_path: Path, capsys, content, message) -> None:
    kept = tmp_path / "spans.contexts.json"
    kept.write_text(content, encoding="utf-8")
    arguments = ["fit", "spans", f"squad={capture}", "--out", str(tmp_path / "spans.json"), "--contexts", str(kept)]
    assert main(arguments) != 0
    error = capsys.readouterr().err
    assert message in error and str(kept) in error and "Traceback" not in error
    assert not (tmp_path / "spans.json").exists()


@pytest.mark.parametrize("model", ["answer", "spans"])
def test_an_output_file_that_cannot_be_written_is_one_sentence(
    capture: Path, tmp_path: Path, capsys, model: str
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder is expected\n", encoding="utf-8")
    out = blocker / "model.json"
    assert main(["fit", model, f"squad_mini={capture}", "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert "cannot read or write" in error and str(blocker) in error and "Traceback" not in error


def test_the_span_fits_scores_replace_each_parts_span_with_the_models_pick() -> None:
    # The records' parts and the logged contexts are matched by the part's question: a mismatch would score the
    # model's column as the rules' spans.
    from pipelines.evaluation.span_fit import evaluate

    class Rates:
        def rank_scores(self, rows: list[dict]) -> list[float]:
            return [row["p"] for row in rows]

    question = "Who founded the Kestrel Lantern Works?"
    record = {"set": "squad", "half": "check", "id": "q1", "answers": ["Orvelle Dunmark"]}
    record["parts"] = [{"question": question, "short_answer": "Kestrel Lantern Works"}]
    group = {
        **{key: record[key] for key in ("set", "half", "id", "answers")},
        "part": {"text": question},
        "rule_span": "Kestrel Lantern Works",
        "texts": ["Kestrel Lantern Works", "Orvelle Dunmark"],
        "rows": [{"p": 0.2, "from_rule": 1.0}, {"p": 0.9, "from_rule": 0.0}],
        "labels": [False, True],
    }
    scores = evaluate([record], [group], Rates(), margin=0.5)["squad"]["check"]
    assert scores["rules"]["exact_match"] == 0.0 and scores["rules"]["right"] == 0.0
    assert scores["model"]["exact_match"] == 1.0 and scores["model"]["right"] == 1.0
    assert scores["switch"]["exact_match"] == 1.0  # leads the rules' span by 0.7
    assert evaluate([record], [group], Rates(), margin=0.8)["squad"]["check"]["switch"]["exact_match"] == 0.0


def test_the_chart_is_written_where_it_is_said_to_be_and_an_unwritable_one_is_one_sentence(
    capture: Path, tmp_path: Path, capsys
) -> None:
    chart = tmp_path / "chart"  # no suffix: the PNG gets one, and the printed path is the file's
    assert main(["fit", "answer", f"squad={capture}", "--out", str(tmp_path / "m.json"), "--chart", str(chart)]) == 0
    assert f"Chart: {chart}.png" in capsys.readouterr().out and (tmp_path / "chart.png").is_file()
    (tmp_path / "taken.png").mkdir()
    taken = tmp_path / "taken.png"
    assert main(["fit", "answer", f"squad={capture}", "--out", str(tmp_path / "m.json"), "--chart", str(taken)]) != 0
    error = capsys.readouterr().err
    assert f"cannot read or write {taken}" in error and "Traceback" not in error


def test_the_check_headlines_precision_comes_with_its_wilson_interval() -> None:
    scored = [(0.9, True)] * 9 + [(0.8, False), (0.3, False), (0.2, True)]
    nine_of_ten = shown_precision(scored, threshold=0.5)
    assert (nine_of_ten["shown"], nine_of_ten["right"], nine_of_ten["precision"]) == (10, 9, 0.9)
    assert nine_of_ten["interval"] == pytest.approx([0.5958, 0.9821], abs=1e-4)  # wide: ten headlines say little
    many = shown_precision([(0.9, True)] * 328 + [(0.9, False)] * 36, threshold=0.5)
    assert many["precision"] == pytest.approx(0.901, abs=1e-3)
    assert many["interval"] == pytest.approx([0.8661, 0.9277], abs=1e-4)
    assert shown_precision(scored, threshold=0.95) == {
        "shown": 0,
        "right": 0,
        "precision": None,
        "interval": None,
        "level": 0.95,
    }


BANDS = {
    "Velvet Harbour": "Velvet Harbour is a rock band formed in Seattle in 1997.",
    "Copper Lantern": "Copper Lantern is a folk band formed in Leeds in 2004.",
    "Amber Quay": "Amber Quay is a jazz band formed in Lyon in 1988.",
}


def verdict_records() -> list[dict]:
    """Comparisons of invented bands (a HotpotQA-style set: questions 0-19 tune, the rest check): three choices on
    the tune half, one with a wrong gold answer, one on the check half; a yes/no question asked of two bands alike;
    and one question that asks for no verdict."""
    asked = [
        (0, "Which band was formed first, Velvet Harbour or Copper Lantern?", "Velvet Harbour"),
        (1, "Which band was formed first, Copper Lantern or Amber Quay?", "Amber Quay"),
        (2, "Which band was formed later, Velvet Harbour or Amber Quay?", "Amber Quay"),  # gold wrong on purpose
        (3, "Where was Copper Lantern formed?", "Leeds"),
        (4, "Are Velvet Harbour and Amber Quay both bands?", "yes"),
        (20, "Which band was formed later, Copper Lantern or Amber Quay?", "Copper Lantern"),
    ]
    records = []
    for index, question, gold in asked:
        documents = []
        for title, text in BANDS.items():
            record = Document(content=text + " It toured widely.", meta={"source_title": title}).to_dict(flatten=False)
            record.pop("embedding", None)
            documents.append(record)
        records.append(
            {"id": f"q{index}", "index": index, "query": question, "analysis": None, "documents": documents,
             "answers": [gold]}
        )  # fmt: skip
    return records


def test_fit_verdicts_writes_each_kinds_rate_into_the_confidence_file(tmp_path: Path, capsys) -> None:
    capture = tmp_path / "bands.capture.jsonl"
    write_capture(verdict_records(), capture)
    out = tmp_path / "confidence.json"
    assert main(["fit", "verdicts", f"hotpotqa_bands={capture}", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| choice | 2 / 3 | 1 / 1 | 0.600 |" in printed  # (2 + 1) / (3 + 2): the rate under a uniform prior
    data = json.loads(out.read_text())
    verdicts = data["verdicts"]
    assert verdicts["kinds"] == {
        "choice": {"counted": 3, "right": 2, "probability": 0.6},
        "both": {"counted": 1, "right": 1, "probability": 0.6667},
    }
    assert verdicts["check"] == {"choice": {"counted": 1, "right": 1}}
    assert verdicts["command"] == "research fit verdicts hotpotqa_bands=bands.capture.jsonl"
    # The logistic model is the packaged one, unchanged; the generator reads the rate as a verdict's confidence.
    packaged = json.loads(Path(AnswerConfidence.DEFAULT_PATH).read_text())
    assert {key: data[key] for key in ("coef", "intercept", "threshold")} == {
        key: packaged[key] for key in ("coef", "intercept", "threshold")
    }
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(out))
    record = verdict_records()[0]
    documents = [Document.from_dict(document) for document in record["documents"]]
    assert generator.run(query=record["query"], documents=documents)["short_answer_confidence"] == 0.6
    # Fitted again into the same file, the counts are replaced, not added to: the replay rates verdicts without them.
    assert main(["fit", "verdicts", f"hotpotqa_bands={capture}", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdicts"]["kinds"] == verdicts["kinds"]


def test_fit_verdicts_without_a_verdict_on_the_tune_half_is_one_sentence(capture: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "confidence.json"
    assert main(["fit", "verdicts", f"squad_mini={capture}", "--out", str(out)]) != 0
    error = capsys.readouterr().err
    assert "hold no verdict to count: nothing was written" in error and "Traceback" not in error and not out.exists()


def test_fit_verdicts_into_a_file_that_cannot_be_written_is_one_sentence(tmp_path: Path, capsys) -> None:
    capture = tmp_path / "bands.capture.jsonl"
    write_capture(verdict_records(), capture)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder is expected\n", encoding="utf-8")
    assert main(["fit", "verdicts", f"hotpotqa_bands={capture}", "--out", str(blocker / "confidence.json")]) == 1
    error = capsys.readouterr().err
    assert "cannot read or write" in error and str(blocker) in error and "Traceback" not in error
