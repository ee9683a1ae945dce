from __future__ import annotations

import pytest
from haystack import Pipeline, component

from components.contracts import SourceStatus, StatusKind
from pipelines.status_collector import SourceStatusCollector
from pipelines.timing import record_timings


@component
class _Source:
    def __init__(self, name: str) -> None:
        self.name = name

    @component.output_types(status=SourceStatus)
    def run(self, query: str) -> dict:
        if self.name.startswith("off"):
            return {"status": SourceStatus.skipped(self.name, "not selected")}
        return {"status": SourceStatus(source=self.name, status=StatusKind.SUCCESS, execution_time_ms=1.0)}


class TestSourceStatusCollector:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError):
            SourceStatusCollector(sort="yes")  # type: ignore[arg-type]
        assert SourceStatusCollector.from_dict(SourceStatusCollector(sort=False).to_dict()).sort is False

    def test_collects_any_number_of_branches_skipped_ones_included(self):
        pipeline = Pipeline()
        pipeline.add_component("statuses", SourceStatusCollector())
        for name in ("web", "off_arxiv", "kb_dense"):
            pipeline.add_component(name, _Source(name))
            pipeline.connect(f"{name}.status", "statuses.statuses")
        with record_timings() as timings:
            out = pipeline.run({name: {"query": "q"} for name in ("web", "off_arxiv", "kb_dense")})
        statuses = out["statuses"]["statuses"]
        assert [s.source for s in statuses] == ["kb_dense", "off_arxiv", "web"]
        assert statuses[1].status is StatusKind.SKIPPED
        assert set(timings) == {"web", "off_arxiv", "kb_dense", "statuses"}
        assert all(value >= 0 for value in timings.values())
