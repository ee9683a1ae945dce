"""Every part `research bench` can run imports: the command imports its measures only when it runs, so a part
whose module no longer imports would otherwise fail only in a user's hands."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import pipelines

BENCH_MODULES = sorted(f"pipelines.{path.stem}" for path in Path(pipelines.__file__).parent.glob("bench*.py"))


def test_the_bench_parts_are_found() -> None:
    assert {"pipelines.bench", "pipelines.bench_cli", "pipelines.bench_scale"} <= set(BENCH_MODULES)


@pytest.mark.parametrize("name", BENCH_MODULES)
def test_each_bench_module_imports(name: str) -> None:
    importlib.import_module(name)
