"""`research tools`: list, run, select."""

from __future__ import annotations

import json

from pipelines.cli import main


class TestToolsCommand:
    def test_list_json(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "list", "--profile", "reader", "--json"]) == 0
        tools = {tool["name"]: tool for tool in json.loads(capsys.readouterr().out)}
        assert tools["calculator"]["enabled"] and not tools["write_file"]["enabled"]
        assert tools["calculator"]["input_schema"]["required"] == ["expression"]

    def test_list_text(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "list"]) == 0
        assert "calculator" in capsys.readouterr().out

    def test_run_success_and_failure(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "run", "calculator", "--json", '{"expression": "2 ** 5"}']) == 0
        assert json.loads(capsys.readouterr().out)["output"]["result"] == 32.0
        assert main(["tools", "run", "calculator", "--json", '{"expression": "open(1)"}']) == 1
        captured = capsys.readouterr()
        assert json.loads(captured.out)["status"]["status"] == "error"
        assert "Only these functions are allowed" in captured.err and "Traceback" not in captured.err

    def test_user_errors_are_one_sentence(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "run", "calculator", "--json", "{not json"]) == 1
        assert capsys.readouterr().err.startswith("research: --json is not valid JSON")
        assert main(["tools", "list", "--profile", "ghost"]) == 1
        assert "unknown tool profile 'ghost'" in capsys.readouterr().err

    def test_select_shows_the_tools_and_their_reasons(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "select", "latest papers we discussed", "--json"]) == 0
        selection = json.loads(capsys.readouterr().out)
        assert selection["sources"] == ["kb", "web", "arxiv", "memory"]
        assert selection["tools"] == ["rag_search", "firecrawl_search", "arxiv_search", "memory_recall"]
        assert selection["reasons"]["memory_recall"] == ["source memory: refers to earlier conversation: we discussed"]
        assert selection["reasons"]["calculator"] == ["not selected: nothing in the question calls for it"]

    def test_select_keeps_to_the_profile_grants(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "select", "latest papers on retrieval", "--profile", "offline"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("tools: rag_search\n") and "arxiv_search: source arxiv" in out
        assert "not granted to this profile" in out

    def test_a_follow_up_borrows_the_conversation(self, capsys) -> None:  # noqa: ANN001
        assert main(["tools", "select", "When did it happen?", "--earlier", "Who acquired Zilliz?", "--json"]) == 0
        selection = json.loads(capsys.readouterr().out)
        assert "memory_recall" in selection["tools"] and "get_entity_timeline" in selection["tools"]
        assert selection["reasons"]["memory_recall"] == ["follows up the conversation"]
        assert main(["tools", "select", "When did it happen?", "--json"]) == 0
        alone = json.loads(capsys.readouterr().out)
        assert "memory_recall" not in alone["tools"] and "get_entity_timeline" not in alone["tools"]
