"""ToolExecutor: authorisation by profile, schema validation both ways, and the per-tool resilience policy."""

from __future__ import annotations

import time
from typing import Annotated, Any

import pytest
from haystack import component

from components.contracts import StatusKind
from components.resilience import telemetry
from components.tools import registry
from components.tools.executor import ToolExecutor
from components.tools.profiles import ToolProfiles
from components.tools.registry import ToolSpec


@component
class MisbehavingCalculator:
    """Declares a float result but returns text: the executor must catch it."""

    @component.output_types(result=float, expression=str)
    def run(self, expression: str) -> dict[str, Any]:
        return {"result": "forty-two", "expression": expression}


def _title_adapter(component: Any, title: Annotated[str, "An article's title."]) -> Any:
    """A contract's mapping onto a component that is never built."""
    raise AssertionError("never called")


def _profiles(**policy: dict[str, Any]) -> ToolProfiles:
    return ToolProfiles.from_mapping({"policy": policy})


@pytest.fixture()
def wikipedia_tool(wikipedia_server, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """The registry's `wikipedia_summary` pointed at the MediaWiki contract server."""
    monkeypatch.setitem(
        registry._TOOLS,
        "wikipedia_summary",
        ToolSpec("wikipedia_summary", "wiki", lambda: registry.WikipediaSummary(api_url=wikipedia_server.api_url)),
    )


class TestToolExecutor:
    def test_unknown_profile_is_a_value_error(self) -> None:
        with pytest.raises(ValueError, match="unknown tool profile 'ghost'"):
            ToolExecutor(profile="ghost")

    def test_runs_a_granted_tool(self) -> None:
        outcome = ToolExecutor(profile="analyst").run("calculator", {"expression": "6 * 7"})
        assert outcome.status.status is StatusKind.SUCCESS and outcome.output == {"result": 42.0, "expression": "6 * 7"}

    def test_a_profile_may_not_call_a_tool_it_is_not_granted(self, workspace) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run("write_file", {"path": "a.txt", "content": "x"})
        assert outcome.output is None and outcome.status.status is StatusKind.ERROR
        assert outcome.status.message == "profile 'reader' is not granted the tool 'write_file'."
        assert not (workspace / "a.txt").exists()
        assert telemetry.snapshot()["write_file"]["failures"] == {"unauthorized": 1}

    def test_disabled_tools_are_refused_for_every_profile(self) -> None:
        profiles = ToolProfiles.from_mapping({"disabled": ["calculator"]})
        outcome = ToolExecutor(profile="admin", profiles=profiles).run("calculator", {"expression": "1+1"})
        assert outcome.status.status is StatusKind.ERROR and "not granted" in outcome.status.message

    @pytest.mark.parametrize(
        ("arguments", "words"),
        [
            ({}, "'expression' is a required property"),
            ({"expression": 12}, "expression: 12 is not of type 'string'"),
            ({"expression": "1", "extra": True}, "Additional properties are not allowed"),
            ([1, 2], "must be a JSON object"),
        ],
    )
    def test_input_is_validated_before_the_run(self, arguments: Any, words: str) -> None:
        outcome = ToolExecutor().run("calculator", arguments)
        assert outcome.status.status is StatusKind.ERROR and words in outcome.status.message
        assert outcome.status.attempts == 0

    def test_output_is_validated_after_the_run(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(registry._TOOLS, "calculator", ToolSpec("calculator", "broken", MisbehavingCalculator))
        outcome = ToolExecutor().run("calculator", {"expression": "1"})
        assert outcome.output is None and outcome.status.status is StatusKind.ERROR
        assert "returned an invalid result: result: 'forty-two' is not of type 'number'" in outcome.status.message

    def test_unknown_tool(self) -> None:
        outcome = ToolExecutor().run("teleport", {})
        assert outcome.status.status is StatusKind.ERROR and "unknown tool 'teleport'" in outcome.status.message

    def test_retries_honour_retry_after(self, wikipedia_server, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.setenv("WIKIPEDIA_API_URL", wikipedia_server.api_url)
        from components.settings import reload_settings

        reload_settings()
        try:
            wikipedia_server.fail("429", times=2, retry_after=0.2)
            profiles = _profiles(wikipedia_summary={"timeout_s": 3, "retries": 3, "backoff_base_s": 0.05})
            started = time.monotonic()
            outcome = ToolExecutor(profiles=profiles).run("wikipedia_summary", {"title": "Alan Turing"})
            assert outcome.status.status is StatusKind.SUCCESS and outcome.status.attempts == 3
            assert time.monotonic() - started >= 0.4
            assert outcome.output["found"] is True
        finally:
            monkeypatch.delenv("WIKIPEDIA_API_URL")
            reload_settings()

    def test_breaker_skips_a_failing_tool_and_says_so(self, wikipedia_server, wikipedia_tool) -> None:  # noqa: ANN001
        wikipedia_server.fail("500")
        profiles = _profiles(wikipedia_summary={"retries": 0, "breaker_failures": 2, "breaker_cooldown_s": 30})
        executor = ToolExecutor(profiles=profiles)
        first = [executor.run("wikipedia_summary", {"title": f"T{i}"}).status.status for i in range(2)]
        assert first == [StatusKind.ERROR, StatusKind.ERROR]
        requests_before = len(wikipedia_server.requests)
        skipped = executor.run("wikipedia_summary", {"title": "T3"}).status
        assert skipped.status is StatusKind.SKIPPED and "paused after repeated failures" in skipped.message
        assert len(wikipedia_server.requests) == requests_before

    def test_ttl_cache_and_telemetry(self, wikipedia_server, wikipedia_tool) -> None:  # noqa: ANN001
        executor = ToolExecutor(profiles=_profiles(wikipedia_summary={"cache_ttl_s": 60, "retries": 0}))
        first = executor.run("wikipedia_summary", {"title": "PostgreSQL"})
        second = executor.run("wikipedia_summary", {"title": "PostgreSQL"})
        assert first.output == second.output and second.status.from_cache is True
        assert len(wikipedia_server.requests) == 1
        wikipedia_server.fail("malformed", times=1)
        executor.run("wikipedia_summary", {"title": "Alan Turing"})
        stats = telemetry.snapshot()["wikipedia_summary"]
        assert stats["calls"] == 3 and stats["successes"] == 2 and stats["cache_hits"] == 1
        assert stats["failures"] == {"malformed": 1}
        assert stats["p50_ms"] is not None and stats["p95_ms"] >= stats["p50_ms"]

    def test_rate_gate_spaces_calls(self) -> None:
        executor = ToolExecutor(profiles=_profiles(calculator={"min_interval_s": 0.15}))
        started = time.monotonic()
        for _ in range(3):
            assert executor.run("calculator", {"expression": "1+1"}).status.ok
        assert time.monotonic() - started >= 0.3

    def test_timeout_is_a_status(self, wikipedia_server, wikipedia_tool) -> None:  # noqa: ANN001
        wikipedia_server.fail("hang")
        started = time.monotonic()
        outcome = ToolExecutor(profiles=_profiles(wikipedia_summary={"timeout_s": 0.5, "retries": 0})).run(
            "wikipedia_summary", {"title": "PostgreSQL"}
        )
        elapsed = time.monotonic() - started
        # The contract server hangs for 120 s: ending within a few seconds proves the 0.5 s timeout cut the call
        # short; the slack is for scheduling on a loaded machine, the lower bound proves the call really waited.
        assert 0.45 <= elapsed < 0.5 + 4.5, elapsed
        assert outcome.status.status is StatusKind.TIMEOUT and "did not answer within 0.5 s" in outcome.status.message
        assert outcome.status.attempts == 1


def test_a_tool_whose_service_is_not_configured_is_skipped_in_one_sentence(monkeypatch, settings) -> None:  # noqa: ANN001
    monkeypatch.delenv("FIRECRAWL_API_KEY", raising=False)
    monkeypatch.setattr(settings, "firecrawl_api_key", None)  # a developer's .env must not configure it
    monkeypatch.setattr(settings, "firecrawl_api_url", None)
    executor = ToolExecutor(profiles=_profiles(firecrawl_search={"retries": 2, "breaker_failures": 1}))
    for _ in range(3):  # a missing key is not a backend's fault: never retried, never opens the breaker
        status = executor.run("firecrawl_search", {"query": "quorvane widgets"}).status
        assert status.status is StatusKind.SKIPPED and status.attempts == 0
        assert status.message.startswith("web search is not configured: set FIRECRAWL_API_KEY")


class TestToolsBuiltWithTheExecutorsSettings:
    def test_a_tool_takes_the_settings_the_executor_was_given(self, settings, work_dir) -> None:  # noqa: ANN001
        from components.settings import get_settings

        chosen = settings.model_copy(update={"workspace_dir": work_dir, "page_max_bytes": 12_345})
        profiles = ToolProfiles.from_mapping({"profiles": {"small": ["read_file", "fetch_page"]}}, settings=chosen)
        executor = ToolExecutor(profile="small", profiles=profiles, settings=chosen)
        executor.prepare()
        built = executor._components  # noqa: SLF001
        assert built["read_file"].workspace_dir == str(work_dir) and built["fetch_page"].max_bytes == 12_345
        assert get_settings().page_max_bytes == settings.page_max_bytes != 12_345

    def test_a_tool_that_cannot_be_built_is_refused_and_the_others_run(self, monkeypatch) -> None:  # noqa: ANN001
        def unbuildable() -> Any:
            raise RuntimeError("the fixture store is not there")

        spec = ToolSpec("wikipedia_summary", "wiki", unbuildable, adapter=_title_adapter, result_schema={})
        monkeypatch.setitem(registry._TOOLS, "wikipedia_summary", spec)
        profiles = ToolProfiles.from_mapping({"profiles": {"small": ["wikipedia_summary", "calculator"]}})
        executor = ToolExecutor(profile="small", profiles=profiles)
        executor.prepare()  # does not raise
        outcome = executor.run("wikipedia_summary", {"title": "Nordvik"})
        assert outcome.status.status is StatusKind.ERROR and outcome.output is None
        assert outcome.status.message == "wikipedia_summary cannot be built: the fixture store is not there"
        assert executor.run("calculator", {"expression": "2 * 4"}).output == {"result": 8.0, "expression": "2 * 4"}
