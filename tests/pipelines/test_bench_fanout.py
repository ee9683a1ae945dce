import asyncio
import time

from pipelines.bench_fanout import BRANCH_MS, bench_fanout, fanout_pipeline


class TestFanoutBench:
    def test_branches_run_concurrently_and_every_status_is_collected(self):
        pipeline = fanout_pipeline((500, 500, 500))
        started = time.perf_counter()
        result = asyncio.run(pipeline.run_async({f"source{i}": {"query": "q"} for i in range(3)}))
        elapsed = time.perf_counter() - started
        # Three 500 ms sources together take about 0.5 s; one after another they cannot beat 1.5 s however idle the
        # machine, so the sum is the bound and the 1 s between is room for a loaded machine.
        assert 0.5 <= elapsed < 1.5
        assert len(result["joiner"]["documents"]) == 15
        assert sorted(status.source for status in result["statuses"]["statuses"]) == [
            "bench_source0",
            "bench_source1",
            "bench_source2",
        ]

    def test_report_has_the_overhead_and_its_target(self):
        lines = []
        report = bench_fanout(lines.append, runs=5)
        assert report["branches"] == len(BRANCH_MS) and report["target_ms"] == 15
        assert report["overhead_p95_ms"] >= report["overhead_p50_ms"] > -2  # cannot finish before its slowest branch
        assert "total minus slowest" in lines[0]
