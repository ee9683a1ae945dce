"""`SourceStatusCollector`: gathers every branch's status into one list, however many branches a pipeline has."""

# No `from __future__ import annotations`: Haystack must see the real Variadic type of `statuses`.

from typing import Any

from haystack import component, default_from_dict, default_to_dict
from haystack.core.component.types import Variadic

from components.contracts import SourceStatus
from components.resilience.scheduling import async_twin


@component
class SourceStatusCollector:
    """Collects the `status` output of any number of branches (a variadic socket), sorted by source name.

    Adding a source to a pipeline is one more connection to `statuses`; skipped sources report too.

    Usage:
    ```python
    pipeline.add_component("statuses", SourceStatusCollector())
    pipeline.connect("kb_dense.status", "statuses.statuses")
    pipeline.connect("kb_keyword.status", "statuses.statuses")
    ```
    """

    def __init__(self, sort: bool = True) -> None:
        """:param sort: order statuses by source name (else by arrival)."""
        if not isinstance(sort, bool):
            raise ValueError("sort must be true or false")
        self.sort = sort

    @component.output_types(statuses=list[SourceStatus])
    def run(self, statuses: Variadic[SourceStatus]) -> dict[str, Any]:
        """:returns: `statuses`: one `SourceStatus` per connected branch."""
        collected = [status for status in statuses if status is not None]
        if self.sort:
            collected.sort(key=lambda status: status.source)
        return {"statuses": collected}

    # Sorting a handful of statuses costs less than a hop to a worker thread and back.
    run_async = async_twin(run)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, sort=self.sort)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SourceStatusCollector":
        return default_from_dict(cls, data)
