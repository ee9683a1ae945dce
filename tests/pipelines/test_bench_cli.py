"""`research bench --only cli`'s measuring parts: fresh processes timed with their CPU, targets judged, a failing
command refused with its reason, `--help`'s import time read from `-X importtime`."""

from __future__ import annotations

import pytest

from pipelines import bench_cli
from tests.contract_servers import free_port


@pytest.fixture()
def env() -> dict[str, str]:
    return bench_cli._env(free_port())


class TestCliBench:
    def test_a_fresh_help_is_timed_and_judged(self, env) -> None:
        lines: list[str] = []
        report = bench_cli._timed("help", ["--help"], env, 2, lines.append)
        assert len(report["seconds"]) == len(report["cpu_seconds"]) == 2
        assert all(wall > 0 and cpu > 0 for wall, cpu in zip(report["seconds"], report["cpu_seconds"], strict=True))
        assert report["target_s"] == 0.5 and report["pass"] == (report["median_s"] <= 0.5)
        assert lines[0].startswith("  help ") and "target <= 0.5 s" in lines[0]

    def test_a_failing_command_is_refused_with_its_reason(self, env) -> None:
        with pytest.raises(bench_cli.BenchSetupError, match="no-such-command"):
            bench_cli._timed("help", ["no-such-command"], env, 1, lambda line: None)

    def test_a_check_that_fails_is_refused(self, env) -> None:
        with pytest.raises(bench_cli.BenchSetupError, match="not the expected output"):
            bench_cli._timed("help", ["--help"], env, 1, lambda line: None, lambda done: "not the expected output")

    def test_help_import_time_is_read_from_importtime(self, env) -> None:
        seconds = bench_cli.help_import_seconds(env)
        assert 0 < seconds < 5
