"""`QuestionReader`: the question read ahead in a background thread; the stages that read it wait for the reading,
and read it themselves, with the same result, when the reading failed or never started."""

from __future__ import annotations

import asyncio
import copy
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from components.contracts.chunk import RankedDocuments
from components.generation import question_reader
from components.generation.question_analysis import analyze_question
from components.generation.question_analyzer import QuestionAnalyzer
from components.generation.question_chain import decompose
from components.generation.question_reader import QuestionReader, QuestionReading, read_question
from pipelines.catalog import PipelineCatalog, build_pipeline
from tests.components.generation.test_hop_retriever import FILM, QUESTION, SHOT, Source, hops_with
from tests.pipelines.knowledge import REPO_CATALOG


def _forget(question: str) -> None:
    """Empty the caches the reading fills, so a test sees who made them."""
    analyze_question.cache_clear()
    decompose.cache_clear()


class Waits:
    """A reading stand-in that counts its waits."""

    def __init__(self) -> None:
        self.waits = 0

    def wait(self) -> bool:
        self.waits += 1
        return True

    async def wait_async(self) -> bool:
        self.waits += 1
        return True


def test_the_reading_fills_the_caches_the_later_stages_read() -> None:
    question = "Who painted the mural that was restored in Quellport in 1994?"
    _forget(question)
    reader = QuestionReader()
    reader.warm_up()
    reading = reader.run(query=question)["reading"]
    assert isinstance(reading, QuestionReading)
    assert reading.wait() and reading.ready
    # The hop stage's and the answer's reads are then cache hits: nothing is parsed again.
    made = decompose.cache_info().misses, analyze_question.cache_info().misses
    assert decompose(question) is not None
    analyze_question(question)
    assert (decompose.cache_info().misses, analyze_question.cache_info().misses) == made
    assert copy.deepcopy(reading) is reading  # Haystack's input copies hand the reading on as itself


def test_the_hop_stage_and_the_analysis_wait_for_the_reading() -> None:
    reading = Waits()
    kb = Source("hops_kb", [FILM, SHOT])
    out = hops_with(kb).run(query=QUESTION, documents=RankedDocuments((SHOT,)), reading=reading)
    assert kb.asked == ["Who directed Pale Orchard?"]
    assert [document.id for document in out["ranked"].documents] == ["brindlemoor", "pale-orchard"]
    analyzer = QuestionAnalyzer()
    analyzed = analyzer.run(query=QUESTION, reading=reading)
    assert asyncio.run(analyzer.run_async(query=QUESTION, reading=reading)) == analyzed
    assert reading.waits == 3
    assert analyzed["analysis"] == analyze_question(QUESTION)


def test_a_failed_reading_leaves_the_stages_to_read_the_question_themselves(monkeypatch) -> None:
    question = "Where was the founder of the brewery that Tamsin Orrey sold in 1902 born?"
    _forget(question)

    def broken(_: str) -> None:
        raise RuntimeError("the parser fell over")

    monkeypatch.setattr(question_reader, "read_question", broken)
    reading = QuestionReader().run(query=question)["reading"]
    assert reading.wait() is False and not reading.ready
    assert asyncio.run(reading.wait_async()) is False
    analyzed = QuestionAnalyzer().run(query=question, reading=reading)
    assert analyzed["analysis"] == analyze_question(question)
    assert decompose(question) is not None  # read inline, as without a reader


def test_a_reading_that_has_not_started_is_called_off_at_once() -> None:
    future: Future = Future()  # queued behind another question's reading: never picked up
    reading = QuestionReading("Who runs Elmsworth Ferries?", future, wait_s=30.0)
    assert reading.wait() is False
    assert future.cancelled()  # the worker will skip it; the stage reads the question itself
    assert asyncio.run(QuestionReading("q", Future(), wait_s=30.0).wait_async()) is False


def test_a_reading_that_overruns_its_wait_is_left_behind() -> None:
    future: Future = Future()
    assert future.set_running_or_notify_cancel()  # picked up by the worker, which never finishes
    reading = QuestionReading("Who runs Elmsworth Ferries?", future, wait_s=0.01)
    assert reading.wait() is False
    assert asyncio.run(reading.wait_async()) is False


def test_no_question_starts_no_reading() -> None:
    reading = QuestionReader().run(query="  ")["reading"]
    assert reading.wait() is False


def test_concurrent_readings_give_the_analyses_read_one_at_a_time() -> None:
    questions = [
        f"Who designed the bridge that crosses the Varn at {place} and when?" for place in ("Olsk", "Peth", "Dunmore")
    ] + ["Which company built the lighthouse of Carrow Point?", "Is Brackwater older than Fennick or not?"]
    _forget("")
    alone = {question: (analyze_question(question), decompose(question)) for question in questions}
    _forget("")
    reader = QuestionReader()
    errors: list[BaseException] = []
    results: list[tuple[str, object, object]] = []
    start = threading.Barrier(8)

    def ask(index: int) -> None:
        try:
            start.wait()
            for question in questions[index % 2 :] + questions[: index % 2]:
                reader.run(query=question)["reading"].wait()
                results.append((question, analyze_question(question), decompose(question)))
                read_question(question)  # a stage reading inline beside the worker
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(ask, range(8)))
    assert not errors
    assert len(results) == 8 * len(questions)
    for question, analysis, cut in results:
        assert (analysis, cut) == alone[question]


def test_bad_settings_are_refused_with_their_name() -> None:
    with pytest.raises(ValueError, match="wait_s"):
        QuestionReader(wait_s=0)


def test_the_research_pipeline_reads_the_question_ahead_and_round_trips_through_yaml() -> None:
    catalog = PipelineCatalog(REPO_CATALOG)
    spec = catalog.spec("research")
    assert "ahead.query" in spec.inputs["question"]
    wired = {(c["sender"], c["receiver"]) for c in spec.pipeline["connections"]}
    reading = "ahead.reading"
    assert {(reading, "hops.reading"), (reading, "question_analyzer.reading")} <= wired
    # Haystack starts the ready components in the order of their names: the reading starts before any source.
    sources = {socket.split(".")[0] for socket in spec.inputs["sources"]}
    assert all("ahead" < source for source in sources)
    built = build_pipeline(spec)
    assert isinstance(built.get_component("ahead"), QuestionReader)
    again = build_pipeline(PipelineCatalog.loads(catalog.dumps()).spec("research"))
    assert again.to_dict()["components"]["ahead"] == built.to_dict()["components"]["ahead"]


def test_the_hop_stage_runs_on_the_loop_only_for_a_question_read_as_no_chain(monkeypatch) -> None:
    threads: list[str] = []
    hops = hops_with(Source("hops_kb", [FILM, SHOT]))
    original = hops.run

    def run(**arguments):
        threads.append(threading.current_thread().name)
        return original(**arguments)

    monkeypatch.setattr(hops, "run", run)
    reader = QuestionReader()

    async def ask(question: str) -> dict:
        reading = reader.run(query=question)["reading"]
        question_reader._worker().submit(lambda: None).result()  # the reading has run, as it has by the hop stage
        return await hops.run_async(query=question, documents=RankedDocuments((SHOT,)), reading=reading)

    plain = asyncio.run(ask("What does Brindlemoor export?"))
    assert plain["ranked"].documents == (SHOT,)
    chained = asyncio.run(ask(QUESTION))  # a chain: its search runs in a worker thread, as without a reader
    assert [document.id for document in chained["ranked"].documents] == ["brindlemoor", "pale-orchard"]
    assert threads[0] == threading.main_thread().name and threads[1] != threading.main_thread().name
