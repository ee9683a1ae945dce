"""`research eval compare`: two invented runs, compared answer for answer and fact for fact."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from components.graph.dates import FuzzyDate
from pipelines.cli import main as cli_main
from pipelines.evaluation.compare import compare_answers, compare_facts, compare_paths
from pipelines.evaluation.questions import EvaluationConfig, EvaluationRun
from pipelines.evaluation.timelines import TimelineEntry, TimelineReport
from pipelines.evaluation.variants import RankedChunk, VariantAnswer

ANSWER = {
    "id": "q1",
    "question": "Who founded Quillmoor Labs?",
    "answer": "Ada Brennick founded Quillmoor Labs [1].",
    "short_answer": "Ada Brennick",
    "short_answer_confidence": 0.82,
    "parts": [
        {
            "question": "Who founded Quillmoor Labs?",
            "short_answer": "Ada Brennick",
            "short_answer_confidence": 0.82,
            "sure": True,
        }
    ],
    "citations": [{"sentence": "Ada Brennick founded Quillmoor Labs [1].", "chunk_id": "c-17", "supported": True}],
    "ranked_doc_ids": ["quillmoor.md", "harbour.md"],
    "ranked_chunk_ids": ["c-17", "c-40"],
    "statuses": {"kb_dense": "ok"},
    "latency_ms": 812.5,
    "error": None,
}
OTHER = {
    **ANSWER,
    "id": "q2",
    "question": "Where is Quillmoor Labs?",
    "answer": "In Vellport [1].",
    "short_answer": "Vellport",
    "parts": [],
    "citations": [],
    "latency_ms": 90.0,
}
FACTS = [
    {
        "system": "graph",
        "entity": "Quillmoor Labs",
        "facts": [
            {"document": "n1", "sentence": "Quillmoor Labs opened in 2011.", "date": "2011"},
            {"document": "n2", "sentence": "Quillmoor Labs moved to Vellport.", "date": "2014-03"},
        ],
    },
    {
        "system": "baseline",
        "entity": "Quillmoor Labs",
        "facts": [
            {"document": "n2", "sentence": "Quillmoor Labs moved to Vellport.", "date": "2014-03-02"},
        ],
    },
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_run(folder: Path, answers: list[dict], facts: list[dict]) -> Path:
    write_jsonl(folder / "demo" / "results" / "research-kb.jsonl", answers)
    write_jsonl(folder / "apple" / "facts.jsonl", facts)
    (folder / "demo" / "report.json").write_text("{}")  # reports are not compared
    return folder


class TestAnswers:
    def test_identical_runs_and_latencies_do_not_count(self):
        slower = [{**ANSWER, "latency_ms": 4000.0}, OTHER]
        assert compare_answers([ANSWER, OTHER], slower) == []

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"answer": "Ada Brennick started Quillmoor Labs [1]."}, "answer"),
            ({"short_answer": "Brennick"}, "short_answer"),
            ({"short_answer_confidence": 0.81}, "confidence"),
            ({"ranked_doc_ids": ["harbour.md", "quillmoor.md"]}, "ranked_doc_ids"),
            ({"statuses": {"kb_dense": "timeout"}}, "statuses"),
            ({"error": "RuntimeError: boom"}, "error"),
        ],
    )
    def test_each_field_is_compared(self, change, field):
        differences = compare_answers([ANSWER], [{**ANSWER, **change}], where="demo")
        assert [(d.where, d.field) for d in differences] == [("demo q1", field)]
        assert differences[0].before != differences[0].after and differences[0].line().startswith(f"demo q1: {field}: ")

    def test_cited_chunks_and_part_confidences(self):
        cited = copy.deepcopy(ANSWER)
        cited["citations"][0]["chunk_id"] = "c-18"
        part = copy.deepcopy(ANSWER)
        part["parts"][0]["sure"] = False
        assert [d.field for d in compare_answers([ANSWER], [cited])] == ["citations"]
        assert [d.field for d in compare_answers([ANSWER], [part])] == ["confidence"]

    def test_tolerance_for_numbers(self):
        close = {**ANSWER, "short_answer_confidence": 0.82 + 1e-9}
        assert compare_answers([ANSWER], [close]) != []
        assert compare_answers([ANSWER], [close], tolerance=1e-6) == []

    def test_a_run_without_the_answers_confidence_compares_its_parts(self):
        older = {key: value for key, value in ANSWER.items() if key != "short_answer_confidence"}
        assert compare_answers([older], [ANSWER]) == []
        changed = copy.deepcopy(ANSWER)
        changed["parts"][0]["short_answer_confidence"] = 0.5
        assert [d.field for d in compare_answers([older], [changed])] == ["confidence"]

    def test_questions_only_one_run_has(self):
        differences = compare_answers([ANSWER, OTHER], [OTHER, {**ANSWER, "id": "q3"}])
        assert [(d.where, d.before, d.after) for d in differences] == [
            ("q1", "asked", "missing"),
            ("q3", "missing", "asked"),
        ]


def ranked(chunks: list[tuple[str, str]], **fields) -> dict:
    """ANSWER with these (chunk id, document id) as its ranked chunks."""
    return {**ANSWER, "ranked_chunk_ids": [c for c, _ in chunks], "ranked_doc_ids": [d for _, d in chunks], **fields}


# Eight chunks: two of quillmoor.md, then six of harbour.md.
EIGHT = [("c-17", "quillmoor.md"), ("c-18", "quillmoor.md")] + [(f"h-{i}", "harbour.md") for i in range(3, 9)]


class TestRankedChunks:
    def test_two_chunks_of_one_document_that_swap_ranks(self):
        swapped = EIGHT[:6] + [EIGHT[7], EIGHT[6]]
        differences = compare_answers([ranked(EIGHT)], [ranked(swapped)], where="demo")
        assert [d.field for d in differences] == ["ranked_chunks"]  # the ranked documents are the same
        assert differences[0].line() == (
            "demo q1: ranked_chunks: chunk h-7 of doc harbour.md rank 7 -> 8; chunk h-8 of doc harbour.md rank 8 -> 7"
        )
        assert compare_answers([ranked(EIGHT)], [ranked(list(EIGHT))]) == []

    def test_a_chunk_that_came_or_went(self):
        replaced = EIGHT[:1] + [("c-19", "quillmoor.md")] + EIGHT[2:]
        differences = compare_answers([ranked(EIGHT)], [ranked(replaced)])
        assert [d.detail for d in differences] == [
            "chunk c-18 of doc quillmoor.md gone from rank 2; chunk c-19 of doc quillmoor.md new at rank 2"
        ]
        shorter = compare_answers([ranked(EIGHT)], [ranked(EIGHT[:7])])
        assert [d.field for d in shorter] == ["ranked_doc_ids", "ranked_chunks"]
        assert shorter[1].detail == "chunk h-8 of doc harbour.md gone from rank 8"

    def test_many_changes_of_one_question_are_one_line(self):
        reordered = list(reversed(EIGHT[1:])) + [("n-1", "new.md")]  # seven moved, one new, one gone
        differences = compare_answers([ranked(EIGHT)], [ranked(reordered)])
        chunks = [d for d in differences if d.field == "ranked_chunks"]
        assert len(chunks) == 1
        line = chunks[0].line()
        assert line.startswith("q1: ranked_chunks: 7 moved, 1 new, 1 gone of 8 -> 8 chunks; first: ")
        assert "chunk c-17 of doc quillmoor.md gone from rank 1; chunk c-18 of doc quillmoor.md rank 2 -> 7" in line
        assert line.endswith("; ...") and line.count("chunk ") < 8 and "\n" not in line

    def test_a_run_that_did_not_record_its_chunks_is_compared_by_documents(self):
        older = {key: value for key, value in ranked(EIGHT).items() if key != "ranked_chunk_ids"}
        swapped = ranked(EIGHT[:6] + [EIGHT[7], EIGHT[6]])
        assert compare_answers([older], [swapped]) == []
        assert [d.field for d in compare_answers([older], [ranked(EIGHT[:7])])] == ["ranked_doc_ids"]

    def test_the_evaluation_records_its_ranked_chunks(self, tmp_path: Path):
        class Runner:
            def ask(self, question: str, top_k: int) -> VariantAnswer:
                return VariantAnswer(
                    chunks=[
                        RankedChunk("k-2", "kb-doc-1", "kb", "Quillmoor Labs opened.", {"kb_dense": 1}),
                        RankedChunk("k-1", "kb-doc-1", "kb", "Quillmoor Labs moved.", {"kb_dense": 2}),
                    ],
                    statuses={"kb_dense": "ok"},
                )

        run = EvaluationRun(EvaluationConfig(questions=tmp_path / "q.jsonl", progress=False))
        run.doc_id_map = {"kb-doc-1": "quillmoor.md"}
        question = {"id": "q9", "question": "When did Quillmoor Labs open?", "gold_doc_ids": [], "answers": []}
        record = run._ask(Runner(), question)
        assert record["ranked_chunk_ids"] == ["k-2", "k-1"]
        assert record["ranked_doc_ids"] == ["quillmoor.md", "quillmoor.md"]


class TestFacts:
    def test_fact_for_fact(self):
        assert compare_facts(FACTS, copy.deepcopy(FACTS)) == []
        changed = copy.deepcopy(FACTS)
        changed[0]["facts"][1]["date"] = "2014"
        changed[0]["facts"].append({"document": "n3", "sentence": "Quillmoor Labs closed.", "date": None})
        del changed[1]["facts"][0]
        differences = compare_facts(FACTS, changed)
        assert [(d.where, d.field) for d in differences] == [
            ("graph/Quillmoor Labs", 'date of "Quillmoor Labs moved to Vellport."'),
            ("graph/Quillmoor Labs", "fact"),
            ("baseline/Quillmoor Labs", "fact"),
        ]
        assert differences[1].before is None and differences[2].after is None

    def test_order_and_missing_timelines(self):
        swapped = copy.deepcopy(FACTS)
        swapped[0]["facts"].reverse()
        assert [d.field for d in compare_facts(FACTS, swapped)] == ["order from fact 1"]
        assert [(d.where, d.after) for d in compare_facts(FACTS, FACTS[:1])] == [("baseline/Quillmoor Labs", "missing")]

    def test_the_timelines_evaluation_writes_its_facts(self):
        report = TimelineReport(
            timelines={
                "graph": {
                    "Quillmoor Labs": [
                        TimelineEntry("doc-a1", "Quillmoor Labs opened in 2011.", FuzzyDate.parse("2011")),
                        TimelineEntry("doc-b2", "Quillmoor Labs moved.", None),
                    ]
                }
            },
            corpus_ids={"doc-a1": "n1"},
        )
        assert report.facts_records() == [
            {
                "system": "graph",
                "entity": "Quillmoor Labs",
                "facts": [
                    {"document": "n1", "sentence": "Quillmoor Labs opened in 2011.", "date": "2011"},
                    {"document": "doc-b2", "sentence": "Quillmoor Labs moved.", "date": None},
                ],
            }
        ]


class TestCommand:
    def test_same_runs_exit_zero(self, tmp_path: Path, capsys):
        before = write_run(tmp_path / "before", [ANSWER, OTHER], FACTS)
        after = write_run(tmp_path / "after", [{**ANSWER, "latency_ms": 1.0}, OTHER], FACTS)
        assert cli_main(["eval", "compare", str(before), str(after)]) == 0
        assert "0 differences over 4 answers and timelines" in capsys.readouterr().out

    def test_differences_are_printed_and_counted(self, tmp_path: Path, capsys):
        before = write_run(tmp_path / "before", [ANSWER, OTHER], FACTS)
        changed = copy.deepcopy(FACTS)
        changed[1]["facts"][0]["date"] = "2014-03-03"
        after = write_run(tmp_path / "after", [{**ANSWER, "short_answer": "A. Brennick"}, OTHER], changed)
        write_jsonl(after / "demo" / "results" / "dense.jsonl", [ANSWER])
        assert cli_main(["eval", "compare", str(before), str(after)]) == 1
        out = capsys.readouterr().out
        assert 'demo/results/research-kb.jsonl q1: short_answer: "Ada Brennick" -> "A. Brennick"' in out
        assert "apple/facts.jsonl baseline/Quillmoor Labs: date of" in out and '"2014-03-02" -> "2014-03-03"' in out
        assert 'demo/results/dense.jsonl: file: "missing" -> "present"' in out
        assert "3 differences over 4 answers and timelines" in out
        # Two files of one kind compare too.
        one = before / "demo" / "results" / "research-kb.jsonl"
        assert cli_main(["eval", "compare", str(one), str(after / "demo" / "results" / "research-kb.jsonl")]) == 1

    def test_chunks_that_swap_and_a_changed_cited_chunk_are_differences(self, tmp_path: Path, capsys):
        before = write_run(tmp_path / "before", [ranked(EIGHT), OTHER], FACTS)
        cited = ranked(EIGHT[:6] + [EIGHT[7], EIGHT[6]])
        cited["citations"] = [{**ANSWER["citations"][0], "chunk_id": "c-18"}]
        after = write_run(tmp_path / "after", [cited, OTHER], FACTS)
        assert cli_main(["eval", "compare", str(before), str(after)]) == 1
        out = capsys.readouterr().out
        assert (
            "demo/results/research-kb.jsonl q1: ranked_chunks: chunk h-7 of doc harbour.md rank 7 -> 8; "
            "chunk h-8 of doc harbour.md rank 8 -> 7" in out
        )
        assert (
            'demo/results/research-kb.jsonl q1: citations: [["Ada Brennick founded Quillmoor Labs [1].", "c-17"]]'
            ' -> [["Ada Brennick founded Quillmoor Labs [1].", "c-18"]]' in out
        )
        assert "2 differences over 4 answers and timelines" in out
        only_order = write_run(tmp_path / "order", [ranked(EIGHT[:6] + [EIGHT[7], EIGHT[6]]), OTHER], FACTS)
        assert cli_main(["eval", "compare", str(before), str(only_order)]) == 1
        assert "1 differences over 4 answers and timelines" in capsys.readouterr().out

    def test_a_run_without_ranked_chunks_is_named(self, tmp_path: Path, capsys):
        older = {key: value for key, value in ANSWER.items() if key != "ranked_chunk_ids"}
        before = write_run(tmp_path / "before", [older, OTHER], FACTS)
        after = write_run(tmp_path / "after", [ANSWER, OTHER], FACTS)
        assert cli_main(["eval", "compare", str(before), str(after)]) == 0
        captured = capsys.readouterr()
        assert f"1 answers of {before} do not record their ranked chunks" in captured.err
        assert str(after) not in captured.err and "0 differences" in captured.out

    def test_bad_input_is_one_sentence_and_exit_code_2_not_the_1_of_a_difference(self, tmp_path: Path, capsys):
        assert cli_main(["eval", "compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
        assert "does not exist" in capsys.readouterr().err
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        assert cli_main(["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
        assert "holds evaluation results" in capsys.readouterr().err
        good = write_jsonl(tmp_path / "good" / "results" / "x.jsonl", [ANSWER])
        broken = write_jsonl(tmp_path / "broken" / "results" / "x.jsonl", [ANSWER])
        broken.write_text("not json\n")
        assert cli_main(["eval", "compare", str(good.parents[1]), str(broken.parents[1])]) == 2
        assert "x.jsonl line 1 is not JSON" in capsys.readouterr().err
        assert cli_main(["eval", "compare", str(good), str(tmp_path / "good")]) == 2
        assert "not a folder with a file" in capsys.readouterr().err
        assert compare_paths(good.parents[1], good.parents[1]) == []
        assert cli_main(["eval", "compare", str(good), str(good), "--tolerance", "-1"]) == 2
        assert "--tolerance must not be negative" in capsys.readouterr().err
        unreadable = tmp_path / "unreadable" / "results" / "x.jsonl"
        unreadable.mkdir(parents=True)  # a folder where a results file should be
        assert cli_main(["eval", "compare", str(good.parents[1]), str(unreadable.parents[1])]) == 2
        assert "x.jsonl does not exist or is not a file" in capsys.readouterr().err
        with pytest.raises(SystemExit) as refused:
            cli_main(["eval", "compare", str(good)])  # AFTER missing: argparse's usage error
        assert refused.value.code == 2

    @pytest.mark.parametrize(
        ("after", "message"),
        [
            (b"\xff\xfe" + json.dumps(ANSWER).encode() + b"\n", "x.jsonl is not UTF-8 text"),
            (
                json.dumps({**ANSWER, "citations": ["Ada Brennick founded it."]}).encode() + b"\n",
                "a record has a field of another shape than evaluation output",
            ),
            (
                json.dumps({**ANSWER, "parts": [3]}).encode() + b"\n",
                "a record has a field of another shape than evaluation output",
            ),
        ],
    )
    def test_a_file_that_cannot_be_read_as_results_is_exit_code_2(self, tmp_path: Path, capsys, after, message):
        good = write_jsonl(tmp_path / "good" / "results" / "x.jsonl", [ANSWER])
        odd = tmp_path / "odd" / "results" / "x.jsonl"
        odd.parent.mkdir(parents=True)
        odd.write_bytes(after)
        assert cli_main(["eval", "compare", str(good.parents[1]), str(odd.parents[1])]) == 2
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error

    def test_facts_of_another_shape_are_exit_code_2(self, tmp_path: Path, capsys):
        good = write_jsonl(tmp_path / "a" / "timeline.facts.jsonl", FACTS)
        odd = write_jsonl(tmp_path / "b" / "timeline.facts.jsonl", [{**FACTS[0], "facts": ["opened in 2011"]}])
        assert cli_main(["eval", "compare", str(good), str(odd)]) == 2
        assert "field of another shape" in capsys.readouterr().err

    def test_help_says_what_each_exit_code_means(self, capsys):
        with pytest.raises(SystemExit):
            cli_main(["eval", "compare", "--help"])
        usage = " ".join(capsys.readouterr().out.split())
        assert "0 when the runs are the same, 1 when they differ, 2 when they cannot be compared" in usage


class TestReplayScript:
    SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "replay_dev_sets.sh"

    def replay(self, cwd: Path, *args: str, only: str) -> subprocess.CompletedProcess:
        # `true` stands in for the research command: only the script's own checks run.
        env = {"PATH": "/usr/bin:/bin", "RESEARCH": "true", "PYTHON": "true", "ONLY": only}
        return subprocess.run(
            ["bash", str(self.SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
        )

    def test_a_missing_sets_folder_is_one_sentence_and_exit_code_2_before_anything_runs(self, tmp_path: Path):
        done = self.replay(tmp_path, "out", only="squad")  # the default ../shared/data, relative to tmp_path
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and "sets' folder ../shared/data (from " in done.stderr
        assert "does not exist" in done.stderr and not (tmp_path / "out").exists()
        given = self.replay(tmp_path, "out", str(tmp_path / "nowhere"), only="demo apple")
        assert given.returncode == 2 and f"folder {tmp_path / 'nowhere'} does not exist" in given.stderr

    def test_the_demo_alone_needs_no_sets_folder(self, tmp_path: Path):
        done = self.replay(tmp_path, "out", only="demo")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "out").is_dir()
