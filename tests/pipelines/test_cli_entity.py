"""`research entity timeline|relations|search|list` against the real embedded graph."""

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
        assert (
            cli_main(["entity", "timeline", "Nordvik", "--from", "2019", "--to", "2019-12", "--collection", collection])
            == 0
        )
        out = capsys.readouterr().out
        assert out.startswith("Nordvik: ") and "2019-02-14  Nordvik SE announced on Thursday" in out
        assert "2000-12" not in out and "Nordvik to end NV900 production" in out

    def test_timeline_json_and_errors(self, collection, capsys):
        assert cli_main(["entity", "timeline", "Dahl", "--json", "--collection", collection]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["entities"] == ["Henrik Dahl"]
        assert [item["valid_at"] for item in data["timeline"]] == sorted(item["valid_at"] for item in data["timeline"])
        assert cli_main(["entity", "timeline", "Nordvik", "--from", "2019-02-30", "--collection", collection]) == 1
        assert "research: --from '2019-02-30' is not an ISO date" in capsys.readouterr().err
        assert cli_main(["entity", "timeline", "Nobody", "--collection", collection]) == 1
        assert "no entity called 'Nobody'" in capsys.readouterr().err

    def test_timeline_event_confidence(self, collection, capsys):
        assert (
            cli_main(["entity", "timeline", "Dahl", "--json", "--min-confidence", "1", "--collection", collection]) == 0
        )
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
        with pytest.raises(SystemExit) as ended:
            cli_main(["entity", "search", "  ", "--collection", collection])
        assert ended.value.code == 2 and "argument TEXT: must not be empty" in capsys.readouterr().err

    def test_timeline_lists_facts_dated_only_by_their_document_apart(self, collection, capsys):
        # "Nordvik agreed to pay..." states no date: only its document (of 2020-01-28) dates it.
        assert cli_main(["entity", "timeline", "Nordvik", "--json", "--collection", collection]) == 0
        data = json.loads(capsys.readouterr().out)
        settled = [item for item in data["timeline"] if item["fact"].startswith("Nordvik agreed to pay")]
        assert settled and settled[0]["undated"] is True
        assert data["undated"] == [item for item in data["timeline"] if item["undated"]] and data["undated"]
        assert data["dated"] == [item for item in data["timeline"] if not item["undated"]] and data["dated"]
        assert cli_main(["entity", "timeline", "Nordvik", "--collection", collection]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"Nordvik: {len(data['dated'])} dated facts, {len(data['undated'])} undated\n")
        timeline, _, undated = out.partition("\nundated (")
        assert "Nordvik agreed to pay" not in timeline and "2020-01-28" not in timeline
        assert "undated, from a document of 2020-01-28 · Nordvik settles bribery probe" in undated
        assert "Nordvik agreed to pay" in undated

    def test_a_collection_without_a_graph_is_one_sentence_and_creates_nothing(self, collection, capsys):
        missing = f"{collection}_{uuid.uuid4().hex[:3]}"  # close to the collection's name: listed among the first
        for command in (["timeline", "Nordvik"], ["relations", "Nordvik"], ["search", "bribery"], ["list"]):
            assert cli_main(["entity", *command, "--collection", missing]) == 1
            error = capsys.readouterr().err
            assert error.startswith(f"research: collection {missing!r} has no knowledge graph; collections with one: ")
            assert repr(collection) in error and error.count("\n") == 1
        with PostgresGraphStore(missing)._get_pool().connection() as conn:
            tables = conn.execute("SELECT count(*) FROM pg_class WHERE relname LIKE %s", (missing + "%",)).fetchone()
        assert tables[0] == 0

    def test_an_unknown_name_is_the_same_answer_for_timeline_and_relations(self, collection, capsys):
        said = []
        for command in ("timeline", "relations"):
            for extra in ([], ["--json"]):
                assert cli_main(["entity", command, "Quorbly Holdings", *extra, "--collection", collection]) == 1
                captured = capsys.readouterr()
                said.append(captured.err)
                assert captured.out == ""
        assert set(said) == {"research: no entity called 'Quorbly Holdings' is in the knowledge graph\n"}

    def test_errors_name_the_flags_typed(self, collection, capsys):
        assert (
            cli_main(["entity", "timeline", "Nordvik", "--from", "2020", "--to", "2019", "--collection", collection])
            == 1
        )
        assert capsys.readouterr().err == "research: --from 2020 is after --to 2019\n"
        assert cli_main(["entity", "search", "bribery", "--as-of", "2020-13", "--collection", collection]) == 1
        assert capsys.readouterr().err.startswith("research: --as-of '2020-13' is not an ISO date")
        for command in ("timeline", "relations"):
            with pytest.raises(SystemExit) as ended:
                cli_main(["entity", command, " ", "--collection", collection])
            error = capsys.readouterr().err
            assert ended.value.code == 2 and "argument NAME: must not be empty" in error and "entity_name" not in error

    def test_list_gives_kinds_and_their_confidence(self, collection, capsys):
        assert cli_main(["entity", "list", "--json", "--collection", collection]) == 0
        rows = json.loads(capsys.readouterr().out)
        by_name = {row["name"]: row for row in rows}
        assert by_name["Henrik Dahl"]["kind"] == "person" and by_name["Nordvik"]["kind"] == "organization"
        assert all(0 < row["kind_confidence"] <= 1 and row["fact_count"] >= 1 for row in rows)
        counts = [row["fact_count"] for row in rows]
        assert counts == sorted(counts, reverse=True) and rows[0]["name"] == "Nordvik"
        assert "dahl" in by_name["Henrik Dahl"]["aliases"]
        assert cli_main(["entity", "list", "--kind", "person", "--collection", collection]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "2 entities (person), most facts first" and out[1].split() == ["NAME", "KIND", "CONF", "FACTS"]
        assert [line.split()[-3] for line in out[2:]] == ["person", "person"]
        assert {" ".join(line.split()[:2]) for line in out[2:]} == {"Henrik Dahl", "Johan Lindqvist"}
        assert cli_main(["entity", "list", "--limit", "1", "--json", "--collection", collection]) == 0
        assert [row["name"] for row in json.loads(capsys.readouterr().out)] == ["Nordvik"]


def test_the_parser_names_the_graphs_entity_kinds():
    from components.graph.model import ENTITY_KINDS
    from pipelines.cli import entity

    assert entity.ENTITY_KINDS == ENTITY_KINDS
