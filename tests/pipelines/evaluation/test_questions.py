"""`research eval QUESTIONS.jsonl`: a real run (embedded PostgreSQL, the local model, the catalog's research
pipeline) over a small corpus, its reports, resuming, sampling, and clear errors for bad input."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from components.settings import get_settings
from pipelines.evaluation.questions import (
    EvaluationConfig,
    EvaluationInputError,
    EvaluationRun,
    load_questions,
    main,
    sample_questions,
)

SHARED_SQUAD = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "squad_dev_a"

CORPUS = [
    {
        "id": "c-bowl",
        "title": "Super Bowl 50",
        "text": "Levi's Stadium in Santa Clara hosted Super Bowl 50 on "
        "February 7, 2016. The Denver Broncos defeated the Carolina Panthers 24 to 10.",
        "date": "2016-02-08",
    },
    {
        "id": "c-hnsw",
        "title": "HNSW",
        "text": "HNSW is a graph index for approximate nearest neighbour search. "
        "Its ef_search parameter trades recall for speed.",
    },
    {
        "id": "c-rrf",
        "title": "Rank fusion",
        "text": "Reciprocal rank fusion sums one over sixty plus the rank of "
        "each item in every list, so hybrid search can merge keyword and vector results.",
    },
    {
        "id": "c-tea",
        "title": "Tea",
        "text": "Green tea is made from unoxidised leaves of Camellia sinensis and is popular in Japan and China.",
    },
]
QUESTIONS = [
    {"id": "q1", "question": "Who won Super Bowl 50?", "answers": ["Denver Broncos"], "gold_doc_ids": ["c-bowl"]},
    {
        "id": "q2",
        "question": "What does the ef_search parameter trade?",
        "answers": ["recall for speed"],
        "gold_doc_ids": ["c-hnsw"],
    },
    {
        "id": "q3",
        "question": "What does reciprocal rank fusion sum?",
        "answers": ["one over sixty plus the rank"],
        "gold_doc_ids": ["c-rrf"],
    },
    {
        "id": "q4",
        "question": "Which plant is green tea made from?",
        "answers": ["Camellia sinensis"],
        "gold_doc_ids": ["c-tea"],
    },
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@pytest.mark.integration
@pytest.mark.slow
class TestEvaluationRun:
    def test_every_variant_is_scored_and_reported(self, work_dir: Path, database_url: str) -> None:
        questions = write_jsonl(work_dir / "questions.jsonl", QUESTIONS)
        corpus = write_jsonl(work_dir / "corpus.jsonl", CORPUS)
        out = work_dir / "out"
        config = EvaluationConfig(
            questions=questions,
            corpus=corpus,
            out=out,
            variants=["keyword", "dense", "hybrid", "research:kb"],
            progress=False,
        )
        collection_before, settings_before = os.environ.get("KB_COLLECTION"), get_settings()
        summary = EvaluationRun(config).run()
        assert os.environ.get("KB_COLLECTION") == collection_before  # the run leaves the settings as it found them
        # Neither written nor read again: the run's research pipelines are given settings naming the corpus's
        # collection (they find its chunks below), the process's stay the same object.
        assert get_settings() is settings_before

        assert set(summary["variants"]) == {"keyword", "dense", "hybrid", "research:kb"}
        for name, variant in summary["variants"].items():
            assert variant["questions"] == 4 and variant["errors"] == 0, name
            assert variant["retrieval"]["recall_any@5"] == 1.0, name
            assert variant["retrieval"]["mrr@10"] == pytest.approx(variant["retrieval"]["haystack_mrr@10"])
            assert variant["latency_ms"]["p95"] >= variant["latency_ms"]["p50"] > 0
        # Each source is a branch with a status: the baselines' one branch found every chunk; the research
        # variant's two knowledge-base branches share the chunks and the skipped sources found none.
        for name, branch in (("keyword", "kb_keyword"), ("dense", "kb_dense"), ("hybrid", "kb_hybrid")):
            sources = summary["variants"][name]["sources"]
            assert sources[branch]["chunk_share"] == 1.0 and sources[branch]["status_success"] == 1.0, name
            assert sources[branch]["first_gold_hit"] == 1.0 and "kb" not in sources, name
        sources = summary["variants"]["research:kb"]["sources"]
        assert sources["kb_dense"]["chunk_share"] > 0 and sources["kb_keyword"]["chunk_share"] > 0
        assert max(sources["kb_dense"]["chunk_share"], sources["kb_keyword"]["chunk_share"]) <= 1.0
        assert sources["kb_dense"]["first_gold_hit"] + sources["kb_keyword"]["first_gold_hit"] >= 1.0
        assert sources["kb_dense"]["citation_share"] + sources["kb_keyword"]["citation_share"] >= 1.0
        assert sources["web"]["chunk_share"] == 0 and sources["web"]["status_skipped"] == 1.0
        research = summary["variants"]["research:kb"]["answers"]
        assert research["questions_with_answers"] == 4
        assert research["contains_gold"] >= 0.75 and 0 < research["token_f1"] <= 1
        assert research["semantic_similarity"] > 0.3
        assert research["citations"] >= 4 and research["citation_precision"] >= 0.75
        assert "exact_match" not in summary["variants"]["keyword"]["answers"]  # baselines write no answer

        for name in ("report.md", "report.json", "retrieval.png", "latency.png", "sources.png"):
            assert (out / name).stat().st_size > 0, name
        assert (out / "retrieval.png").read_bytes()[:4] == b"\x89PNG"
        report = (out / "report.md").read_text()
        assert "| research:kb | 4 |" in report and "MRR@10" in report
        assert json.loads((out / "report.json").read_text())["variants"]["hybrid"]["questions"] == 4

        # Resuming reuses every answered question (same recorded latencies) and reruns nothing.
        before = (out / "results" / "dense.jsonl").read_text()
        again = EvaluationRun(
            EvaluationConfig(
                questions=questions, corpus=corpus, out=out, variants=["dense"], resume=True, progress=False
            )
        ).run()
        assert (out / "results" / "dense.jsonl").read_text() == before
        assert again["variants"]["dense"]["retrieval"] == summary["variants"]["dense"]["retrieval"]

    def test_resume_finishes_an_interrupted_run(self, work_dir: Path, database_url: str) -> None:
        questions = write_jsonl(work_dir / "questions.jsonl", QUESTIONS)
        corpus = write_jsonl(work_dir / "corpus.jsonl", CORPUS)
        out = work_dir / "out"
        EvaluationRun(
            EvaluationConfig(questions=questions, corpus=corpus, out=out, variants=["keyword"], progress=False)
        ).run()
        results = out / "results" / "keyword.jsonl"
        lines = results.read_text().splitlines()
        results.write_text("\n".join(lines[:2]) + "\n" + lines[2][:25])  # two answers and a cut-off line
        summary = EvaluationRun(
            EvaluationConfig(
                questions=questions, corpus=corpus, out=out, variants=["keyword"], resume=True, progress=False
            )
        ).run()
        assert summary["variants"]["keyword"]["questions"] == 4
        assert [json.loads(line)["id"] for line in results.read_text().splitlines()] == ["q1", "q2", "q3", "q4"]

    def test_corpus_documents_that_fail_are_reported_and_the_run_goes_on(
        self, work_dir: Path, database_url: str, capsys
    ) -> None:
        questions = write_jsonl(work_dir / "questions.jsonl", QUESTIONS)
        corpus = write_jsonl(work_dir / "corpus.jsonl", [*CORPUS, {"id": "c-blank", "title": "Blank", "text": " \n "}])
        out = work_dir / "out"
        assert main([str(questions), "--corpus", str(corpus), "--variants", "keyword", "--out", str(out)]) == 0
        summary = json.loads((out / "report.json").read_text())
        assert summary["corpus_failures"] == [{"id": "c-blank", "reason": "The file is empty."}]
        assert summary["variants"]["keyword"]["questions"] == 4
        assert summary["variants"]["keyword"]["errors"] == 0
        assert "`c-blank` | The file is empty." in (out / "report.md").read_text()
        assert "1 corpus documents could not be ingested" in capsys.readouterr().out

    @pytest.mark.skipif(not SHARED_SQUAD.exists(), reason="the shared SQuAD data is not next to the repository")
    def test_squad_sample_through_the_command_line(self, work_dir: Path, database_url: str, capsys) -> None:
        all_questions = load_questions(SHARED_SQUAD / "questions.jsonl")
        chosen = random.Random(3).sample(all_questions, 12)
        gold = {doc_id for question in chosen for doc_id in question["gold_doc_ids"]}
        corpus = [json.loads(line) for line in (SHARED_SQUAD / "corpus.jsonl").read_text().splitlines()]
        others = [record for record in corpus if record["id"] not in gold][:20]
        documents = [record for record in corpus if record["id"] in gold] + others
        questions = write_jsonl(work_dir / "q.jsonl", chosen)
        corpus_file = write_jsonl(work_dir / "c.jsonl", documents)
        code = main(
            [
                str(questions),
                "--corpus",
                str(corpus_file),
                "--variants",
                "hybrid,research",
                "--sample",
                "10",
                "--out",
                str(work_dir / "squad"),
                "--no-progress",
            ]
        )
        assert code == 0
        printed = capsys.readouterr().out
        assert "| hybrid | 10 |" in printed and "| research | 10 |" in printed
        summary = json.loads((work_dir / "squad" / "report.json").read_text())
        assert summary["variants"]["hybrid"]["retrieval"]["recall_any@5"] >= 0.8
        assert summary["variants"]["research"]["retrieval"]["recall_any@5"] >= 0.8


class TestInputErrors:
    def test_sample_is_reproducible_and_bounded(self) -> None:
        items = [{"id": str(i)} for i in range(50)]
        assert sample_questions(items, 10, seed=1) == sample_questions(items, 10, seed=1)
        assert len(sample_questions(items, 10, seed=1)) == 10
        assert sample_questions(items, 500, seed=1) == items

    def test_missing_file(self, work_dir: Path) -> None:
        with pytest.raises(EvaluationInputError, match="does not exist"):
            load_questions(work_dir / "nope.jsonl")

    def test_malformed_line_names_the_line(self, work_dir: Path) -> None:
        path = work_dir / "bad.jsonl"
        path.write_text('{"id": "a", "question": "ok?"}\n{not json}\n')
        with pytest.raises(EvaluationInputError, match="line 2 is not JSON"):
            load_questions(path)

    def test_missing_keys(self, work_dir: Path) -> None:
        path = write_jsonl(work_dir / "q.jsonl", [{"id": "a"}])
        with pytest.raises(EvaluationInputError, match="line 1 lacks question"):
            load_questions(path)

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            (["--variants", "dense,magic"], "unknown variant"),
            (["--variants", "research:kb+oracle"], "sources must be among"),
            (["--sources", "kb,oracle"], "Unknown source oracle"),
            (["--sample", "0"], "--sample"),
            (["-k", "99"], "-k must be between"),
        ],
    )
    def test_bad_options_are_user_errors(self, work_dir: Path, options: list[str], message: str) -> None:
        from pipelines.cli import UserError

        questions = write_jsonl(work_dir / "q.jsonl", QUESTIONS)
        with pytest.raises(UserError, match=message):
            main([str(questions), "--no-progress", "--out", str(work_dir / "o"), *options])
