import asyncio
import threading
import time
from typing import Any

from haystack import Pipeline, component

from components.resilience.scheduling import alone_on_loop, async_twin, map_until, question_alone_on_loop, source_twin


@component
class Where:
    """Says which thread ran it; runs on the loop when `inline` is asked for."""

    @component.output_types(thread=int, value=str)
    def run(self, value: str, inline: bool = False) -> dict[str, Any]:
        return {"thread": threading.get_ident(), "value": value}

    run_async = async_twin(run, inline=lambda _, arguments: bool(arguments.get("inline")))


class TestAsyncTwin:
    def test_it_has_runs_sockets(self):
        where = Where()
        assert set(where.__haystack_input__._sockets_dict) == {"value", "inline"}
        assert set(where.__haystack_output__._sockets_dict) == {"thread", "value"}

    def test_inline_calls_run_on_the_loop_and_the_others_in_a_worker_thread(self):
        pipeline = Pipeline()
        pipeline.add_component("where", Where())

        async def both() -> tuple[int, int, int]:
            loop_thread = threading.get_ident()
            inline = await pipeline.run_async({"where": {"value": "a", "inline": True}})
            threaded = await pipeline.run_async({"where": {"value": "b"}})
            return loop_thread, inline["where"]["thread"], threaded["where"]["thread"]

        loop_thread, inline, threaded = asyncio.run(both())
        assert inline == loop_thread and threaded != loop_thread


class TestMapUntil:
    def test_finished_work_is_done_and_what_outlives_the_deadline_is_not(self):
        release = threading.Event()

        def work(seconds: float) -> float:
            if seconds:
                release.wait(5)  # held until the test lets it go: past the deadline
            return seconds

        futures, done, not_done = map_until(work, [0.0, 1.0], time.monotonic() + 0.3, workers=2, name="test")
        release.set()
        assert {futures[future] for future in done} == {0.0}
        assert {futures[future] for future in not_done} == {1.0}
        assert next(iter(done)).result() == 0.0

    def test_work_not_started_by_the_deadline_is_cancelled(self):
        started = threading.Event()
        release = threading.Event()

        def work(item: int) -> int:
            started.set()
            release.wait(5)
            return item

        futures, done, not_done = map_until(work, [1, 2, 3], time.monotonic() + 0.2, workers=1, name="test")
        release.set()
        assert started.is_set() and not done and len(not_done) == 3
        assert sum(future.cancelled() for future in not_done) == 2  # the two still queued behind the running one

    def test_a_deadline_already_past_waits_for_nothing(self):
        futures, done, not_done = map_until(lambda item: item, [], time.monotonic() - 1, workers=1, name="test")
        assert futures == {} and not done and not not_done


class TestSourceTwin:
    def test_an_unselected_source_answers_on_the_loop_and_a_selected_one_in_a_worker(self):
        @component
        class Web:
            @component.output_types(thread=int)
            def run(self, sources: list[str] | None = None) -> dict[str, Any]:
                return {"thread": threading.get_ident()}

            run_async = source_twin(run, "web")

        pipeline = Pipeline()
        pipeline.add_component("web", Web())

        async def both() -> tuple[int, int, int]:
            skipped = await pipeline.run_async({"web": {"sources": ["kb"]}})
            selected = await pipeline.run_async({"web": {"sources": ["web"]}})
            return threading.get_ident(), skipped["web"]["thread"], selected["web"]["thread"]

        loop_thread, skipped, selected = asyncio.run(both())
        assert skipped == loop_thread and selected != loop_thread


@component
class Stage:
    """Says which thread ran it; on the loop only when the question has the loop to itself."""

    @component.output_types(thread=int)
    def run(self, value: str) -> dict[str, Any]:
        return {"thread": threading.get_ident()}

    run_async = async_twin(run, inline=alone_on_loop)


class TestAloneOnLoop:
    def test_a_stage_runs_on_the_loop_only_while_the_question_has_it_to_itself(self):
        pipeline = Pipeline()
        pipeline.add_component("stage", Stage())

        async def alone() -> int:
            with question_alone_on_loop():
                return (await pipeline.run_async({"stage": {"value": "a"}}))["stage"]["thread"]

        async def shared() -> int:
            return (await pipeline.run_async({"stage": {"value": "b"}}))["stage"]["thread"]

        async def both() -> tuple[int, int, int, bool]:
            inline, threaded = await alone(), await shared()
            return threading.get_ident(), inline, threaded, alone_on_loop()

        loop_thread, inline, threaded, after = asyncio.run(both())
        assert inline == loop_thread and threaded != loop_thread
        assert after is False  # the block ended: the flag does not outlive it

    def test_the_twin_calls_the_run_the_component_has_when_called(self, monkeypatch):
        pipeline = Pipeline()
        pipeline.add_component("stage", Stage())
        monkeypatch.setattr(Stage, "run", lambda self, value: {"thread": -1})

        async def alone() -> int:
            with question_alone_on_loop():
                return (await pipeline.run_async({"stage": {"value": "a"}}))["stage"]["thread"]

        assert asyncio.run(alone()) == -1
