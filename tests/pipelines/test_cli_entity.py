"""`research entity timeline|relations|search` against the real embedded graph."""

from __future__ import annotations

import json
import uuid

import pytest

from components.graph.extraction import LanguageExtractor
from components.graph.postgres_store import PostgresGraphStore
from pipelines.cli import main as cli_main
from tests.components.graph.conftest import nordvik_documents

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def collection(database_url):
    name = f"t_{uuid.uuid4().hex[:8]}"
    store = PostgresGraphStore(name)
    for document, chunks in nordvik_documents():
        store.replace_document(LanguageExtractor().extract(document, chunks))
    yield name
    store.drop()


class TestEntityCommand:
    def test_timeline_with_range(self, collection, capsys):
        assert cli_main(["entity", "timeline", "Nordvik", "--from", "2019", "--to", "2019-12", "--collection",
                         collection]) == 0
        out = capsys.readouterr().out
        assert out.startswith("Nordvik: ") and "2019-02-14  Nordvik SE announced on Thursday" in out
        assert "2000-12" not in out and "Nordvik to end NV900 production" in out

    def test_timeline_json_and_errors(self, collection, capsys):
        assert cli_main(["entity", "timeline", "Dahl", "--json", "--collection", collection]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["entities"] == ["Henrik Dahl"]
        assert [item["valid_at"] for item in data["timeline"]] == sorted(item["valid_at"] for item in data["timeline"])
        assert cli_main(["entity", "timeline", "Nordvik", "--from", "2019-02-30", "--collection", collection]) == 1
        assert "start_date '2019-02-30' is not an ISO date" in capsys.readouterr().err
        assert cli_main(["entity", "timeline", "Nobody", "--collection", collection]) == 1
        assert "no entity called 'Nobody'" in capsys.readouterr().err

    def test_timeline_event_confidence(self, collection, capsys):
        assert cli_main(["entity", "timeline", "Dahl", "--json", "--min-confidence", "1", "--collection",
                         collection]) == 0
        data = json.loads(capsys.readouterr().out)
        # At 1 no extracted fact is certain: all are listed as less certain, each with its confidence.
        assert data["timeline"] == [] and data["less_certain"]
        assert all(0 <= item["confidence"] < 1 for item in data["less_certain"])
        assert cli_main(["entity", "timeline", "Dahl", "--min-confidence", "0", "--collection", collection]) == 0
        out = capsys.readouterr().out
        assert "event confidence 0." in out and "less certain" not in out
        assert cli_main(["entity", "timeline", "Dahl", "--min-confidence", "1.5", "--collection", collection]) == 1
        assert "--min-confidence must be between 0 and 1" in capsys.readouterr().err

    def test_relations_and_search(self, collection, capsys):
        assert cli_main(["entity", "relations", "Lindqvist", "--depth", "9", "--collection", collection]) == 0
        out = capsys.readouterr().out
        assert out.startswith("Johan Lindqvist (graph_traversal, depth 5)") and "links: Henrik Dahl" in out
        assert cli_main(["entity", "search", "bribery", "--json", "--collection", collection]) == 0
        facts = json.loads(capsys.readouterr().out)
        assert facts[0]["fact"].startswith("Nordvik agreed to pay") and facts[0]["source_node_uuid"]
        assert cli_main(["entity", "search", "  ", "--collection", collection]) == 1
        assert "query is empty" in capsys.readouterr().err
