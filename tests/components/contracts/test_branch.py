import asyncio
import inspect
from typing import Any

import pytest
from haystack import Pipeline, component

from components.contracts import SOURCE_OUTPUTS, SourceStatus
from components.contracts.branch import BranchQuery, branch_run
from components.resilience.scheduling import source_twin


@component
class _Echo:
    """A branch that answers with what it was asked."""

    @branch_run
    def run(self, branch: BranchQuery, limit: int | None = None) -> dict[str, Any]:
        self.asked = (branch, limit)
        return {"documents": [], "status": SourceStatus.skipped("echo", branch.query), "branch": None}

    run_async = source_twin(run, "echo")


class TestBranchRun:
    def test_the_inputs_are_the_branch_fields_then_the_sources_own(self):
        for method in (_Echo.run, _Echo.run_async):
            parameters = inspect.signature(method).parameters
            assert list(parameters) == ["self", "query", "query_embedding", "filters", "as_of", "sources", "limit"]
            assert parameters["query"].default is inspect.Parameter.empty
        sockets = _Echo().__haystack_input__._sockets_dict
        assert list(sockets) == ["query", "query_embedding", "filters", "as_of", "sources", "limit"]
        assert sockets["sources"].type == list[str] | None
        assert sockets["limit"].type == int | None
        outputs = _Echo().__haystack_output__._sockets_dict
        assert {name: socket.type for name, socket in outputs.items()} == SOURCE_OUTPUTS

    def test_run_gets_one_branch_query_by_keyword_or_position(self):
        echo = _Echo()
        echo.run(query="Who runs Quellmark?", as_of="2020-01-01", limit=3)
        assert echo.asked == (BranchQuery(query="Who runs Quellmark?", as_of="2020-01-01"), 3)
        echo.run("Who runs Quellmark?", [0.5], {"domains": ["a.test"]})
        assert echo.asked == (BranchQuery("Who runs Quellmark?", [0.5], {"domains": ["a.test"]}), None)
        with pytest.raises(TypeError):
            echo.run(question="Who runs Quellmark?")

    def test_a_pipeline_connects_and_runs_it_sync_and_async(self):
        pipeline = Pipeline()
        pipeline.add_component("echo", _Echo())
        result = pipeline.run({"echo": {"query": "Who runs Quellmark?", "sources": ["kb"]}})
        assert result["echo"]["status"].message == "Who runs Quellmark?"
        echo = _Echo()
        asyncio.run(echo.run_async(query="Dunvar", sources=["echo"]))
        assert echo.asked == (BranchQuery(query="Dunvar", sources=["echo"]), None)

    def test_a_run_without_a_branch_parameter_first_is_refused(self):
        def run(self, query: str) -> dict:  # noqa: ANN001
            return {}

        with pytest.raises(TypeError, match="`branch`"):
            branch_run(run)
