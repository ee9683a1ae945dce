import asyncio
import threading
from typing import Any

from haystack import Pipeline, component

from components.resilience.scheduling import async_twin


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
