"""The tool registry and the profiles: schemas from typed sockets, grants per profile, `tool_status()`."""

from __future__ import annotations

import jsonschema
import pytest

from components.tools.profiles import BUILTIN_PROFILES, ToolProfiles
from components.tools.registry import get_tool, list_tools, tool_names, tool_status


class TestToolRegistry:
    def test_every_builtin_and_research_tool_is_registered(self) -> None:
        assert tool_names() == [
            "calculator",
            "read_file",
            "write_file",
            "list_directory",
            "fetch_page",
            "wikipedia_summary",
            "rag_search",
            "vector_search",
            "hybrid_search",
            "list_documents",
            "get_document",
            "retrieve_book_content",
            "graph_search",
            "get_entity_relationships",
            "get_entity_timeline",
            "perform_comprehensive_search",
            "firecrawl_search",
            "arxiv_search",
            "memory_recall",
        ]
        with pytest.raises(ValueError, match="unknown tool 'nope'"):
            get_tool("nope")

    def test_schemas_come_from_the_typed_sockets(self) -> None:
        write = get_tool("write_file")
        assert write.input_schema["required"] == ["path", "content"]
        assert write.input_schema["properties"]["overwrite"]["type"] == "boolean"
        assert "missing folders are created" in write.input_schema["properties"]["path"]["description"]
        assert write.output_schema["properties"] == {"path": {"type": "string"}, "bytes_written": {"type": "integer"}}
        for name in tool_names():
            spec = get_tool(name)
            jsonschema.Draft202012Validator.check_schema(spec.input_schema)
            jsonschema.Draft202012Validator.check_schema(spec.output_schema)

    def test_list_tools_marks_what_the_profile_enables(self) -> None:
        tools = {tool["name"]: tool for tool in list_tools("reader")}
        assert tools["calculator"]["enabled"] and not tools["write_file"]["enabled"]
        assert tools["fetch_page"]["policy"]["cache_ttl_s"] == 300.0
        with pytest.raises(ValueError, match="known profiles"):
            list_tools("ghost")

    def test_tool_status_rows(self, work_dir, settings) -> None:  # noqa: ANN001
        from components.tools.executor import ToolExecutor

        ToolExecutor(call_log_file=work_dir / "telemetry" / "tool_calls.jsonl").run("calculator", {"expression": "1+1"})
        elsewhere = settings.model_copy(update={"research_data_dir": work_dir})
        rows = {row["name"]: row for row in tool_status(settings=elsewhere)}
        assert set(rows) == set(tool_names())
        assert rows["calculator"]["enabled"] is True and rows["calculator"]["configured"] is True
        assert rows["calculator"]["telemetry"]["calls"] == 1 and rows["calculator"]["telemetry"]["successes"] == 1
        assert rows["read_file"]["telemetry"] is None
        assert rows["fetch_page"]["detail"] == "public addresses only"

    def test_status_shows_calls_logged_by_other_processes(self, work_dir, settings) -> None:  # noqa: ANN001
        from components.resilience import telemetry
        from components.tools import call_log
        from components.tools.executor import ToolExecutor

        elsewhere = settings.model_copy(update={"research_data_dir": work_dir})
        log = call_log.call_log_path(elsewhere)
        assert log == work_dir / "telemetry" / "tool_calls.jsonl"
        executor = ToolExecutor(profile="reader", call_log_file=log)
        executor.run("calculator", {"expression": "2*2"})
        executor.run("calculator", {"expression": "1/0"})
        executor.run("write_file", {"path": "x", "content": "y"})
        telemetry.reset()  # as if `research status` ran in another process
        rows = {row["name"]: row["telemetry"] for row in tool_status("reader", settings=elsewhere)}
        assert rows["calculator"]["calls"] == 2 and rows["calculator"]["successes"] == 1
        assert rows["calculator"]["failures"] == {"error": 1} and rows["calculator"]["p95_ms"] is not None
        assert rows["write_file"]["failures"] == {"unauthorized": 1}
        log.open("a").write('{"tool": "calcul')  # a line cut short by a crash
        assert call_log.summarise_calls(log)["calculator"]["calls"] == 2

    def test_the_executor_logs_where_the_settings_said_when_it_was_built(self, work_dir, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings
        from components.tools.call_log import summarise_calls
        from components.tools.executor import ToolExecutor

        monkeypatch.setenv("RESEARCH_DATA_DIR", str(work_dir / "built"))
        reload_settings()
        executor = ToolExecutor(profile="reader")
        monkeypatch.setenv("RESEARCH_DATA_DIR", str(work_dir / "later"))
        reload_settings()
        executor.run("calculator", {"expression": "2*3"})
        monkeypatch.undo()
        reload_settings()
        assert summarise_calls(work_dir / "built" / "telemetry" / "tool_calls.jsonl")["calculator"]["calls"] == 1
        assert not (work_dir / "later").exists()


class TestToolProfiles:
    def test_builtins(self) -> None:
        profiles = ToolProfiles()
        assert profiles.granted("admin", "write_file") and not profiles.granted("reader", "write_file")
        assert not profiles.granted("ghost", "calculator")
        assert set(BUILTIN_PROFILES["analyst"]) == set(tool_names())
        assert not profiles.granted("offline", "firecrawl_search") and profiles.granted("offline", "rag_search")
        assert profiles.policy_for("calculator").retries == 0

    def test_a_policy_keeps_the_settings_in_force_when_the_profiles_were_made(self, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.setenv("BREAKER_FAILURES", "4")
        reload_settings()
        try:
            profiles = ToolProfiles()
            monkeypatch.setenv("BREAKER_FAILURES", "9")
            reload_settings()
            assert profiles.policy_for("calculator").breaker_failures == 4
            assert ToolProfiles().policy_for("calculator").breaker_failures == 9
        finally:
            monkeypatch.delenv("BREAKER_FAILURES")
            reload_settings()

    def test_the_default_profile_is_taken_when_the_profiles_are_made(self, monkeypatch, settings) -> None:  # noqa: ANN001
        from components.settings import reload_settings
        from components.tools.profiles import load_profiles

        assert load_profiles(settings.model_copy(update={"tool_profile": "offline"})).require_profile() == "offline"
        monkeypatch.setenv("TOOL_PROFILE", "reader")
        reload_settings()
        profiles = load_profiles()
        monkeypatch.setenv("TOOL_PROFILE", "admin")
        reload_settings()
        assert profiles.require_profile() == "reader" and profiles.require_profile("offline") == "offline"
        assert ToolProfiles().require_profile() == "admin"
        monkeypatch.undo()
        reload_settings()

    def test_file_extends_the_builtins(self, work_dir, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings
        from components.tools.profiles import load_profiles

        path = work_dir / "tools.yaml"
        path.write_text(
            "disabled: [fetch_page]\n"
            "policy:\n  wikipedia_summary: {timeout_s: 3, retries: 1}\n"
            "profiles:\n  intern: {tools: [calculator]}\n"
        )
        monkeypatch.setenv("TOOL_PROFILES_FILE", str(path))
        reload_settings()
        try:
            profiles = load_profiles()
            assert profiles.granted("intern", "calculator") and not profiles.granted("intern", "read_file")
            assert not profiles.granted("admin", "fetch_page")
            policy = profiles.policy_for("wikipedia_summary")
            assert (policy.timeout_s, policy.retries, policy.cache_ttl_s) == (3, 1, 3600.0)
        finally:
            monkeypatch.delenv("TOOL_PROFILES_FILE")
            reload_settings()

    @pytest.mark.parametrize(
        ("content", "words"),
        [
            ("profiles: {x: {tools: calculator}}", "must list its tools"),
            ("policy: {calculator: {speed: 3}}", "unknown field"),
            ("policy: {calculator: {retries: 9}}", "retries must be between 0 and 3"),
            ("[1, 2", "not valid JSON/YAML"),
        ],
    )
    def test_malformed_files_are_one_sentence(self, work_dir, content: str, words: str) -> None:  # noqa: ANN001
        path = work_dir / "tools.yaml"
        path.write_text(content)
        with pytest.raises(ValueError, match=words):
            ToolProfiles.load(path)


def test_the_profiles_take_their_policy_defaults_from_the_settings_they_are_loaded_with(settings) -> None:  # noqa: ANN001
    from components.settings import get_settings
    from components.tools.profiles import load_profiles

    chosen = settings.model_copy(update={"breaker_failures": settings.breaker_failures + 5, "cache_ttl_s": 1234.0})
    policy = load_profiles(chosen).policy_for("calculator")
    assert policy.breaker_failures == chosen.breaker_failures and policy.cache_ttl_s == 1234.0
    assert get_settings().breaker_failures == settings.breaker_failures and get_settings().cache_ttl_s != 1234.0
