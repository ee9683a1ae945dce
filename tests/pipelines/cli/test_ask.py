from __future__ import annotations

import json
import re

import pytest

from pipelines.cli import main
from pipelines.cli.ask import EMPTY_KB_MESSAGE
from tests.pipelines.knowledge import fill_collection, fresh_collection_name

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def filled_collection(settings, database_url, embedding_model) -> str:
    collection = fresh_collection_name()
    fill_collection(collection, settings, embedding_model)
    return collection


@pytest.fixture()
def use_collection(monkeypatch):
    from components.settings import reload_settings

    def use(collection: str) -> None:
        monkeypatch.setenv("KB_COLLECTION", collection)
        reload_settings()

    yield use
    monkeypatch.delenv("KB_COLLECTION", raising=False)
    reload_settings()


class TestAsk:
    def test_answer_sources_table_and_statuses(self, filled_collection, use_collection, capsys):
        use_collection(filled_collection)
        assert main(["ask", "Which river does Warsaw stand on?", "--top-k", "3", "--sources", "kb"]) == 0
        out = capsys.readouterr().out
        # The short answer leads when the confidence model is sure of it; otherwise the line says it is not sure.
        assert re.match(r"Short answer: (the Vistula River  \[sure|not sure \(confidence)", out), out[:200]
        assert "the city stands on the Vistula River [1]." in out
        assert "  n  title" in out and "  1  Warsaw" in out and "https://example.org/warsaw" in out
        assert "kb_dense" in out and "kb_keyword" in out and "success" in out

    def test_json_is_the_research_result(self, filled_collection, use_collection, capsys):
        use_collection(filled_collection)
        assert (
            main(["ask", "Who did the Denver Broncos defeat?", "--json", "--sources", "kb", "--as-of", "2020-01-01"])
            == 0
        )
        data = json.loads(capsys.readouterr().out)
        assert data["chunks"][0]["id"] == "super-bowl-0"
        assert data["citations"][0]["chunk_id"] == "super-bowl-0"
        assert {"generator", "kb_dense", "kb_keyword"} <= {s["source"] for s in data["statuses"]}
        assert data["sentences"][0]["supported"] is True

    def test_empty_knowledge_base_says_how_to_ingest(self, database_url, use_collection, capsys):
        use_collection(fresh_collection_name())
        assert main(["ask", "Anything at all?", "--sources", "kb"]) == 1
        assert capsys.readouterr().err.strip() == f"research: {EMPTY_KB_MESSAGE}"
        assert main(["ask", "Anything at all?", "--sources", "kb,graph"]) == 1
        assert capsys.readouterr().err.strip() == f"research: {EMPTY_KB_MESSAGE}"

    def test_a_top_k_out_of_range_is_a_usage_error_naming_the_flag(self, capsys):
        with pytest.raises(SystemExit) as ended:
            main(["ask", "q", "--sources", "kb", "--top-k", "99"])
        err = capsys.readouterr().err
        assert ended.value.code == 2 and "argument --top-k: must be between 1 and 50, not 99" in err
        assert "top_k" not in err

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["ask", "q", "--sources", "kb,tv"], "research: Unknown source tv"),
            (["ask", "q", "--sources", "kb", "--as-of", "yesterday"], "research: --as-of must be a date as YYYY-MM-DD"),
            (["ask", "q", "--sources", "kb", "--as-of", ""], "research: --as-of must be a date as YYYY-MM-DD, not ''"),
            (["ask", "  "], "research: The question is empty"),
        ],
    )
    def test_user_errors_are_one_line(self, filled_collection, use_collection, capsys, argv, message):
        use_collection(filled_collection)
        assert main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith(message) and "\n" not in err
