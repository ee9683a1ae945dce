"""A question run on a loop of the catalog's own making has that loop to itself: its later stages run there."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from components.generation.hop_retriever import HopRetriever
from components.generation.research_generator import ResearchGenerator
from components.ranking.research_ranker import ResearchRanker
from components.resilience.scheduling import question_alone_on_loop
from pipelines.catalog import PipelineCatalog

CATALOG = (
    "pipelines:\n  where:\n    inputs: {value: [stage.value]}\n    outputs: {thread: stage.thread}\n"
    "    pipeline:\n      components:\n        stage: {type: tests.components.resilience.test_scheduling.Stage}\n"
)


@pytest.fixture(autouse=True)
def _tests_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", "tests.*")


def test_run_from_the_main_thread_runs_the_stage_on_its_own_loop_in_that_thread() -> None:
    catalog = PipelineCatalog.loads(CATALOG)
    assert catalog.run("where", {"value": "x"})["thread"] == threading.get_ident()


def test_run_from_another_thread_runs_the_stage_in_that_thread() -> None:
    catalog = PipelineCatalog.loads(CATALOG)
    catalog.get("where")
    seen: list[tuple[int, int]] = []

    def ask() -> None:
        seen.append((threading.get_ident(), catalog.run("where", {"value": "x"})["thread"]))

    worker = threading.Thread(target=ask)
    worker.start()
    worker.join(60)
    assert seen and seen[0][0] == seen[0][1]


def test_run_async_on_a_shared_loop_keeps_the_stage_in_a_worker_thread() -> None:
    catalog = PipelineCatalog.loads(CATALOG)
    catalog.get("where")

    async def ask() -> tuple[int, int]:
        return threading.get_ident(), (await catalog.run_async("where", {"value": "x"}))["thread"]

    loop_thread, stage_thread = asyncio.run(ask())
    assert stage_thread != loop_thread


class _SaysWhere:
    """Stands in for a stage's instance: its `run` says which thread ran it."""

    def run(self, **_: object) -> dict[str, int]:
        return {"thread": threading.get_ident()}


@pytest.mark.parametrize("kind", [ResearchRanker, HopRetriever, ResearchGenerator])
def test_the_stages_after_the_sources_run_on_the_loop_only_while_the_question_has_it(kind: type) -> None:
    assert inspect.iscoroutinefunction(kind.run_async)
    assert inspect.signature(kind.run_async) == inspect.signature(kind.run)

    async def ask() -> tuple[int, int, int]:
        with question_alone_on_loop():
            inline = (await kind.run_async(_SaysWhere()))["thread"]
        threaded = (await kind.run_async(_SaysWhere()))["thread"]
        return threading.get_ident(), inline, threaded

    loop_thread, inline, threaded = asyncio.run(ask())
    assert inline == loop_thread and threaded != loop_thread
