"""The tools whose arguments go to their source as they are hand over exactly the tool's parameters, named."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from components.contracts import SourceStatus
from components.tools import research_tools
from components.tools.research_tools import _passed

PASSED_THROUGH = ["_vector_search", "_hybrid_search", "_web_search", "_arxiv_search", "_memory_recall"]


class RecordingSource:
    """A source component that keeps the arguments of its one run."""

    def __init__(self) -> None:
        self.arguments: dict[str, Any] = {}

    def run(self, **arguments: Any) -> dict[str, Any]:
        self.arguments = arguments
        status = SourceStatus(source="kb", status="success", execution_time_ms=1.0, total_found=0)
        return {"documents": [], "status": status}


def test_the_arguments_are_named_by_the_caller_not_read_from_its_local_variables() -> None:
    source = RecordingSource()
    run = _passed(source, query="Where does the Orrin ferry dock?", limit=3)
    assert source.arguments == {"query": "Where does the Orrin ferry dock?", "limit": 3}
    assert run.output["chunks"] == [] and run.status.ok


@pytest.mark.parametrize("name", PASSED_THROUGH)
def test_every_parameter_of_the_tool_reaches_the_source(name: str) -> None:
    adapter = getattr(research_tools, name)
    parameters = [p for p in inspect.signature(adapter).parameters if p != "component"]
    # A distinct value per parameter, so a swapped or dropped argument shows.
    given = {parameter: f"value-{index}" for index, parameter in enumerate(parameters)}
    source = RecordingSource()
    adapter(source, **given)
    assert source.arguments == given
