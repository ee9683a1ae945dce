"""`research eval QUESTIONS.jsonl`: runs a question set through each variant and reports how well each does.

Inputs are the JSON Lines shapes of the public sets (`{"id", "question", "answers", "gold_doc_ids"}` per question,
`{"id", "title", "text", "url"?, "date"?}` per corpus document). With `--corpus`, the corpus is ingested into a
knowledge-base collection of its own (named after the corpus content, so a rerun reuses it and a different corpus
never mixes in), and every variant searches that collection. Results are appended per question to
`OUT/results/<variant>.jsonl`, so `--resume` continues an interrupted run where it stopped.

Per variant the report has recall@1/5/10 (any gold / all gold), MRR@10, nDCG@10, answer exact match, token F1,
"answer contains a gold answer", semantic answer similarity (local model), citation precision, latency p50/p95,
and each source's contribution; as `report.md`, `report.json` and PNG charts in OUT.

Usage:
```python
from pipelines.evaluation.questions import EvaluationConfig, EvaluationRun

config = EvaluationConfig(questions=Path("questions.jsonl"), corpus=Path("corpus.jsonl"), sample=200)
summary = EvaluationRun(config).run()
summary["variants"]["hybrid"]["retrieval"]["mrr@10"]
```
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haystack import logging

from components.contracts.selection import DEFAULT_SOURCES, check_sources
from components.embedding import get_embedding_model
from components.generation.citation_checker import is_verdict
from components.knowledge_base.factory import open_knowledge_base
from components.settings import Settings, get_settings
from components.text.dates import parse_date
from ingest.ingestor import IngestItem, Ingestor, document_id_for
from ingest.report import printable
from pipelines.cli import UserError
from pipelines.evaluation import capture, metrics
from pipelines.evaluation.halves import HALVES, half_of, has_halves
from pipelines.evaluation.jsonl import EvaluationInputError, load_jsonl
from pipelines.evaluation.report import selective_table, summary_table, write_reports
from pipelines.evaluation.selective import curve_summary, part_rows
from pipelines.evaluation.variants import DEFAULT_VARIANTS, VariantAnswer, build_variant, parse_variant
from pipelines.runtime import Runtime

logger = logging.getLogger(__name__)

# A cited chunk supports its sentence when it holds most of the sentence's content words, or says the same thing.
LEXICAL_SUPPORT = 0.6
SEMANTIC_SUPPORT = 0.6
_ID_PREFIX = "eval:"


@dataclass
class EvaluationConfig:
    """What one evaluation run does; see `research eval --help`."""

    questions: Path
    corpus: Path | None = None
    variants: list[str] = field(default_factory=lambda: list(DEFAULT_VARIANTS))
    sources: list[str] | None = field(default_factory=lambda: list(DEFAULT_SOURCES))  # as the CLI and the app
    sample: int | None = None
    seed: int = 13
    out: Path | None = None
    resume: bool = False
    top_k: int = 10
    progress: bool = True
    capture: Path | None = None  # write what the answer generator was given per question here (`capture`)

    def __post_init__(self) -> None:
        self.questions = Path(self.questions)
        self.corpus = Path(self.corpus) if self.corpus else None
        if not 1 <= self.top_k <= 50:
            raise EvaluationInputError("-k must be between 1 and 50")
        if self.sample is not None and self.sample < 1:
            raise EvaluationInputError("--sample must be a positive number of questions")
        if self.sources:
            try:
                self.sources = check_sources(self.sources)
            except ValueError as exc:
                raise EvaluationInputError(str(exc)) from exc
        if not self.variants:
            raise EvaluationInputError("name at least one variant")
        for variant in self.variants:
            try:
                parse_variant(variant, self.sources)
            except ValueError as exc:
                raise EvaluationInputError(str(exc)) from exc
        if self.out is None:
            self.out = get_settings().data_dir / "eval" / self.questions.stem
        self.out = Path(self.out)


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Questions with `id`, `question`, `answers` (list) and `gold_doc_ids` (list)."""
    questions = load_jsonl(path, ("id", "question"))
    for index, record in enumerate(questions):
        record["index"] = index  # its position in the file (the multi-hop sets' halves are by position)
        record["id"] = str(record["id"])
        record["answers"] = [str(answer) for answer in record.get("answers") or []]
        record["gold_doc_ids"] = [str(doc_id) for doc_id in record.get("gold_doc_ids") or []]
        if not str(record["question"]).strip():
            raise EvaluationInputError(f"{path.name}: question {record['id']} is empty")
    return questions


def sample_questions(questions: list[dict[str, Any]], size: int | None, seed: int) -> list[dict[str, Any]]:
    """A reproducible random sample (the whole set when `size` is None or not smaller)."""
    if size is None or size >= len(questions):
        return list(questions)
    chosen = sorted(random.Random(seed).sample(range(len(questions)), size))
    return [questions[index] for index in chosen]


def variant_slug(variant: str) -> str:
    """A file-name-safe form of a variant name (`research:kb+graph` -> `research-kb-graph`)."""
    return re.sub(r"[^a-z0-9]+", "-", variant.lower()).strip("-")


def collection_for_corpus(corpus: Path) -> str:
    """The knowledge-base collection of a corpus: named after its content, so reruns reuse it."""
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:10]
    return f"eval_{digest}"


class EvaluationRun:
    """One evaluation: prepares the knowledge base, runs each variant over the questions, scores and reports."""

    def __init__(self, config: EvaluationConfig) -> None:
        self.config = config
        self.out: Path = config.out  # type: ignore[assignment]
        self.doc_id_map: dict[str, str] = {}  # knowledge-base document id -> corpus id
        self.collection: str | None = None  # None: the settings' collection
        # Corpus documents that could not be ingested, as {"id", "reason"}; the run goes on without them.
        self.corpus_failures: list[dict[str, str]] = []
        self._runtime: Any = None  # the run's `Runtime`, from `run()`
        self._model: Any = None

    # -- knowledge base ---------------------------------------------------------------------------------------------

    def prepare_knowledge_base(self) -> None:
        """Ingest the corpus (when given) into its own collection (the one the run's settings name, `_settings`)."""
        if self.config.corpus is None:
            self._map_ingested_documents()
            return
        corpus = load_jsonl(self.config.corpus, ("id", "text"))
        collection = self.collection = collection_for_corpus(self.config.corpus)
        store = open_knowledge_base(collection=collection)
        items = []
        for record in corpus:
            source = f"{_ID_PREFIX}{record['id']}"
            self.doc_id_map[document_id_for(source)] = str(record["id"])
            items.append(
                IngestItem(
                    source=source,
                    filename=f"{record['id']}.txt",
                    data=str(record["text"]).encode("utf-8"),
                    doc_type="txt",
                    title=str(record.get("title") or record["id"]),
                    url=record.get("url") or None,
                    date=parse_date(record.get("date")),
                    metadata={"corpus_id": str(record["id"]), "corpus_source": record.get("source") or ""},
                )
            )
        bar = self._bar(total=len(items), desc="ingest corpus", unit="doc")
        done = {"files": 0}

        def progress(snapshot: Any) -> None:
            if bar is not None and snapshot.files_done > done["files"]:
                bar.update(snapshot.files_done - done["files"])
                done["files"] = snapshot.files_done

        report = Ingestor(store=store).ingest_items(items, progress=progress)
        if bar is not None:
            bar.update(len(items) - done["files"])
            bar.close()
        logger.info("Evaluation corpus ingested: {summary}", summary=report.summary())
        self.corpus_failures = [
            {"id": source.removeprefix(_ID_PREFIX), "reason": reason} for source, reason in report.failed
        ]
        if self.corpus_failures and len(self.corpus_failures) == len(items):
            first = self.corpus_failures[0]
            raise EvaluationInputError(f"no corpus document could be ingested, e.g. {first['id']}: {first['reason']}")
        for failure in self.corpus_failures:
            # Reported, and the evaluation goes on: their questions simply cannot find them.
            logger.warning(
                "Corpus document {corpus_id} was not ingested: {reason}",
                corpus_id=failure["id"],
                reason=failure["reason"],
            )

    def _map_ingested_documents(self) -> None:
        """Without a corpus the questions are about the knowledge base as ingested: gold ids may name a document by
        its file name (`neo4j.md`), which stays the same wherever the folder was ingested from."""
        store = open_knowledge_base()
        offset = 0
        while True:
            page, total = store.list_documents(limit=200, offset=offset)
            for summary in page:
                record = summary.document
                name = Path(str(record.source)).name.rsplit(":", 1)[-1] if record.source else ""
                if name and "://" not in str(record.source):
                    self.doc_id_map[record.document_id] = name
            offset += len(page)
            if not page or offset >= total:
                break

    def _corpus_id(self, document_id: str | None) -> str | None:
        if document_id is None:
            return None
        return self.doc_id_map.get(document_id, document_id)

    def _research_catalog(self) -> Any:
        """The run's catalog, made on first use (its runtime's settings name the corpus's collection)."""
        if self._runtime is None:
            raise RuntimeError("the research variants run inside `run()`")
        return self._runtime.catalog

    def _embedding_model(self) -> Any:
        if self._model is None:
            self._model = get_embedding_model()
        return self._model

    def _bar(self, total: int, desc: str, unit: str) -> Any:
        if not self.config.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)

    # -- running ----------------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Run every variant over the (sampled) questions and write the reports; the summary as a dict."""
        questions = sample_questions(load_questions(self.config.questions), self.config.sample, self.config.seed)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "results").mkdir(exist_ok=True)
        try:
            self._runtime = Runtime(self._settings()).start()
            self.prepare_knowledge_base()
            records_by_variant: dict[str, list[dict[str, Any]]] = {}
            with contextlib.ExitStack() as stack:
                if self.config.capture is not None:
                    captured = stack.enter_context(capture.capturing())
                for variant in self.config.variants:
                    records_by_variant[variant] = self._run_variant(variant, questions)
            if self.config.capture is not None:
                capture.write_capture(capture.attach_gold(captured, questions), Path(self.config.capture))
        finally:
            runtime, self._runtime = self._runtime, None
            if runtime is not None:
                runtime.close()
        summary = self.summarise(records_by_variant, questions)
        write_reports(summary, self.out)
        return summary

    def _settings(self) -> Settings:
        """The settings the run's research pipelines are built with: the process's, with the corpus's own collection
        when a corpus is given (the baselines are given the collection; the process's settings stay as they are)."""
        settings = get_settings()
        if self.config.corpus is None or not self.config.corpus.is_file():
            return settings  # without a corpus (or with none readable, which `prepare_knowledge_base` reports)
        return settings.model_copy(update={"kb_collection": collection_for_corpus(self.config.corpus)})

    def _run_variant(self, variant: str, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kind, _ = parse_variant(variant, self.config.sources)
        runner = build_variant(
            variant,
            collection=self.collection,
            catalog=self._research_catalog() if kind == "research" else None,
            default_sources=self.config.sources,
        )
        path = self.out / "results" / f"{variant_slug(variant)}.jsonl"
        wanted = {question["id"] for question in questions}
        done: dict[str, dict[str, Any]] = {}
        if self.config.resume and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interruption: that question runs again
                if record.get("id") in wanted:
                    done[record["id"]] = record
        todo = [question for question in questions if question["id"] not in done]
        bar = self._bar(total=len(questions), desc=variant, unit="q")
        if bar is not None:
            bar.update(len(questions) - len(todo))
        with path.open("w", encoding="utf-8") as handle:
            # The kept records first (without any line an interruption cut short), then the new ones as they come.
            for record in done.values():
                handle.write(json.dumps(record) + "\n")
            for question in todo:
                record = self._ask(runner, question)
                done[question["id"]] = record
                handle.write(json.dumps(record) + "\n")
                handle.flush()
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        return [done[question["id"]] for question in questions if question["id"] in done]

    def _ask(self, runner: Any, question: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        error = None
        try:
            answer: VariantAnswer = runner.ask(str(question["question"]), top_k=self.config.top_k)
        except Exception as exc:  # noqa: BLE001 - one failing question must not end a long run; it is counted
            logger.warning("Question {qid} failed: {reason}", qid=question["id"], reason=str(exc))
            answer = VariantAnswer(chunks=[])
            error = f"{type(exc).__name__}: {exc}"
        latency_ms = (time.perf_counter() - started) * 1000.0
        chunk_by_id = {chunk.chunk_id: chunk for chunk in answer.chunks}
        # The sources that found each chunk: the branches that reported a status and ranked it (a chunk two branches
        # found counts for both); a chunk without branch ranks counts for its source type.
        branches = set(answer.statuses or {})
        found_by = {
            chunk.chunk_id: sorted(branches & set(chunk.ranks or {})) or [chunk.source_type] for chunk in answer.chunks
        }
        ranked_doc_ids = [self._corpus_id(chunk.document_id) or f"chunk:{chunk.chunk_id}" for chunk in answer.chunks]
        citations = []
        for sentence in answer.sentences:
            for chunk_id in sentence.chunk_ids:
                chunk = chunk_by_id.get(chunk_id)
                citations.append(
                    {
                        "sentence": sentence.text,
                        "chunk_id": chunk_id,
                        "source_type": chunk.source_type if chunk else None,
                        "found_by": found_by.get(chunk_id, []),
                        # A yes/no verdict's headline holds no words a chunk can support: judged by the pipeline's
                        # check of the question's claim only, and left out of the citation precision.
                        "supported": None
                        if is_verdict(sentence.text)
                        else self._supports(sentence.text, chunk.text)
                        if chunk
                        else False,
                        "pipeline_supported": sentence.supported_by_pipeline,
                    }
                )
        return {
            "id": question["id"],
            "index": question.get("index"),
            "question": question["question"],
            "gold_doc_ids": question["gold_doc_ids"],
            "answers": question["answers"],
            "ranked_doc_ids": ranked_doc_ids,
            "ranked_chunk_ids": [chunk.chunk_id for chunk in answer.chunks],  # beside the documents, rank for rank
            "ranked_sources": [found_by[chunk.chunk_id] for chunk in answer.chunks],
            "answer": answer.answer,
            "short_answer": answer.short_answer,
            "short_answer_confidence": answer.short_answer_confidence,
            "parts": answer.parts,
            "citations": citations,
            "statuses": answer.statuses,
            "latency_ms": round(latency_ms, 3),
            "error": error,
        }

    def _selective(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """What the analyst sees of the short answers (`selective`): over all questions with a gold answer, and per
        half of a set that has halves (the public dev sets and the demo questions)."""
        labelled = [record for record in records if record["answers"] and record.get("answer") is not None]
        out = {"all": curve_summary([row for record in labelled for row in part_rows(record)])}
        name = self.set_name
        if has_halves(name):
            for half in HALVES:
                chosen = [record for record in labelled if half_of(name, record) == half]
                out[half] = curve_summary([row for record in chosen for row in part_rows(record)])
                out[half]["questions"] = len(chosen)
                out[half]["token_f1"] = metrics.mean(
                    metrics.token_f1(metrics.scored_answer(r), r["answers"]) for r in chosen
                )
        return out

    @property
    def set_name(self) -> str:
        """The question set's name: its folder's for a file called `questions.jsonl`, else the file's."""
        path = self.config.questions
        return path.parent.name if path.stem == "questions" else path.stem

    def _supports(self, sentence: str, chunk_text: str) -> bool:
        if metrics.lexical_support(sentence, chunk_text) >= LEXICAL_SUPPORT:
            return True
        model = self._embedding_model()
        vectors = model.embed([sentence, chunk_text])
        return float(vectors[0] @ vectors[1]) >= SEMANTIC_SUPPORT

    # -- scoring ----------------------------------------------------------------------------------------------------

    def summarise(
        self, records_by_variant: dict[str, list[dict[str, Any]]], questions: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Aggregate per-question records into per-variant numbers."""
        sas = None
        variants: dict[str, Any] = {}
        for variant, records in records_by_variant.items():
            retrieval_rows = [
                metrics.retrieval_scores(r["ranked_doc_ids"], r["gold_doc_ids"]) for r in records if r["gold_doc_ids"]
            ]
            retrieval = {
                key: metrics.mean(row[key] for row in retrieval_rows)
                for key in (retrieval_rows[0] if retrieval_rows else {})
            }
            retrieval.update(metrics.aggregate_with_haystack(records))
            answered = [r for r in records if r.get("answer") is not None and r["answers"]]
            answers: dict[str, Any] = {"questions_with_answers": len(answered)}
            if answered:
                if sas is None:
                    sas = metrics.SemanticAnswerSimilarity()
                # Exact match and token F1 score the short answer where the answer leads with one (SQuAD's spans),
                # else the whole answer; "contains" always reads the whole answer.
                answers["exact_match"] = metrics.mean(
                    metrics.exact_match(metrics.scored_answer(r), r["answers"]) for r in answered
                )
                answers["token_f1"] = metrics.mean(
                    metrics.token_f1(metrics.scored_answer(r), r["answers"]) for r in answered
                )
                # Whether the answer step found a short answer, shown or held back as unsure (`selective`: shown).
                answers["short_answer_share"] = metrics.mean(
                    float(bool(r.get("short_answer") or any(p.get("short_answer") for p in r.get("parts") or [])))
                    for r in answered
                )
                answers["contains_gold"] = metrics.mean(
                    metrics.answer_contains_gold(r["answer"], r["answers"]) for r in answered
                )
                answers["semantic_similarity"] = metrics.mean(
                    sas.score([r["answer"] for r in answered], [r["answers"] for r in answered])
                )
            citations = [c for r in records for c in r.get("citations") or []]
            answers["citations"] = len(citations)
            answers["citation_precision"] = metrics.citation_precision(citations)
            flagged = [c["pipeline_supported"] for c in citations if c.get("pipeline_supported") is not None]
            answers["pipeline_supported_share"] = metrics.mean(float(flag) for flag in flagged)
            latencies = [r["latency_ms"] for r in records]
            variants[variant] = {
                "selective": self._selective(records),
                "questions": len(records),
                "errors": sum(1 for r in records if r.get("error")),
                "retrieval": retrieval,
                "answers": answers,
                "latency_ms": {
                    "p50": metrics.percentile(latencies, 50),
                    "p95": metrics.percentile(latencies, 95),
                    "mean": metrics.mean(latencies) or 0.0,
                },
                "sources": source_contribution(records),
            }
        return {
            "questions_file": self.config.questions.name,
            "corpus_file": self.config.corpus.name if self.config.corpus else None,
            "corpus_failures": list(self.corpus_failures),
            "questions": len(questions),
            "sample": self.config.sample,
            "seed": self.config.seed,
            "top_k": self.config.top_k,
            "variants": variants,
        }


def source_contribution(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per source (each branch that reports a status, e.g. `kb_dense`): the share of returned chunks it found, the
    share of citations whose chunk it found, how often it found the first gold hit, and its statuses (share of
    questions per status). A chunk several branches found counts for each, so shares may add up to more than 1."""
    chunk_counts: Counter[str] = Counter()
    cited_counts: Counter[str] = Counter()
    first_gold: Counter[str] = Counter()
    statuses: dict[str, Counter[str]] = defaultdict(Counter)
    total_chunks = total_cited = 0
    for record in records:
        found = [_as_sources(entry) for entry in record.get("ranked_sources") or []]
        total_chunks += len(found)
        for sources in found:
            chunk_counts.update(sources)
        for citation in record.get("citations") or []:
            total_cited += 1
            cited_counts.update(_as_sources(citation.get("found_by") or citation.get("source_type")))
        gold = set(record.get("gold_doc_ids") or [])
        for doc_id, sources in zip(record["ranked_doc_ids"], found, strict=False):
            if doc_id in gold:
                first_gold.update(sources)
                break
        for source, status in (record.get("statuses") or {}).items():
            statuses[source][status] += 1
    count = len(records) or 1
    names = sorted(set(chunk_counts) | set(cited_counts) | set(statuses))
    return {
        name: {
            "chunk_share": chunk_counts[name] / (total_chunks or 1),
            "citation_share": cited_counts[name] / (total_cited or 1),
            "first_gold_hit": first_gold[name] / count,
            **{f"status_{status}": statuses[name][status] / count for status in sorted(statuses[name])},
        }
        for name in names
    }


def _as_sources(entry: Any) -> list[str]:
    """A result's sources: a list of branch names (current results) or one source type (older results)."""
    if not entry:
        return []
    return [str(name) for name in entry] if isinstance(entry, list) else [str(entry)]


# -- command line ---------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `research eval QUESTIONS.jsonl`."""
    parser.add_argument("--corpus", type=Path, default=None, help="corpus JSONL to ingest into a fresh collection")
    parser.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help="comma-separated: dense, keyword, hybrid, research, research:kb+graph, ... (default: %(default)s)",
    )
    parser.add_argument(
        "--sources",
        default=None,
        help="comma-separated sources of the research variants (kb,graph,...; default: auto, as the CLI and the app)",
    )
    parser.add_argument("--sample", type=int, default=None, help="evaluate a reproducible random sample of N questions")
    parser.add_argument("--seed", type=int, default=13, help="seed of the sample (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the data folder's eval/NAME)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in the same --out")
    parser.add_argument("-k", "--top-k", dest="top_k", type=int, default=10, help="chunks per question (default: 10)")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    parser.add_argument(
        "--capture", type=Path, default=None, help="write the chunks the answer step was given per question (JSONL)"
    )


def config_from_args(args: argparse.Namespace) -> EvaluationConfig:
    """The run configuration the parsed arguments (`main`'s) describe."""

    def split(value: str | None) -> list[str] | None:
        return [part.strip() for part in (value or "").split(",") if part.strip()] or None

    return EvaluationConfig(
        questions=args.questions,
        corpus=args.corpus,
        variants=split(args.variants) or list(DEFAULT_VARIANTS),
        sources=split(args.sources) or list(DEFAULT_SOURCES),
        sample=args.sample,
        seed=args.seed,
        out=args.out,
        resume=args.resume,
        top_k=args.top_k or 10,
        progress=args.progress,
        capture=args.capture,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `research eval QUESTIONS.jsonl ...` (`argv`: the arguments after `eval`)."""
    parser = argparse.ArgumentParser(prog="research eval", description="Evaluate variants over a question set.")
    parser.add_argument("questions", type=Path, help="questions JSONL")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = config_from_args(args)
        summary = EvaluationRun(config).run()
    except EvaluationInputError as exc:
        raise UserError(str(exc)) from exc
    print(summary_table(summary))
    if selective := selective_table(summary):
        print("\n" + selective)
    failures = summary.get("corpus_failures") or []
    if failures:
        print(f"\n{len(failures)} corpus documents could not be ingested (their questions are still asked):")
        for failure in failures:
            print(f"  {printable(failure['id'])}: {printable(failure['reason'])}")
    print(f"\nReports: {config.out / 'report.md'}, {config.out / 'report.json'}, charts in {config.out}")
    return 0
