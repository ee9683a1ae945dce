"""The Neo4j store's configuration, and translations to Cypher with the official driver mocked (the driver against
the Bolt contract server is in test_neo4j_contract.py; a real server runs the conformance suite when NEO4J_URI is
set)."""

from __future__ import annotations

import datetime as dt
from unittest.mock import MagicMock, Mock

import pytest
from haystack.utils import Secret
from neo4j import Driver

from components.graph.factory import graph_store_from_settings
from components.graph.neo4j_store import Neo4jGraphStore
from components.graph.store import GraphUnavailable
from components.settings import Settings
from tests.components.graph.test_neo4j_contract import wait_for


class Transactions:
    """The driver's sessions, mocked: every transaction function runs on one `tx` whose `run` records the statement
    and its parameters (`runs`) and answers the next of `answers`, else no record."""

    def __init__(self, driver: Mock) -> None:
        self.runs: list[tuple[str, dict]] = []
        self.answers: list[list[dict]] = []
        self.tx = Mock()
        self.tx.run.side_effect = self._run
        session = MagicMock()
        session.__enter__.return_value = session
        session.execute_read.side_effect = lambda work, *args: work(self.tx, *args)
        session.execute_write.side_effect = lambda work, *args: work(self.tx, *args)
        driver.session.return_value = session

    def _run(self, text: str, parameters: dict | None = None, **kwargs) -> MagicMock:
        self.runs.append((text, {**(parameters or {}), **kwargs}))
        result = MagicMock()
        result.__iter__.return_value = iter(self.answers.pop(0) if self.answers else [])
        return result


def fact_record(uuid: str, text: str, valid: str | None, entities: list[tuple[str, str]]) -> dict:
    return {
        "fact": {
            "uuid": uuid,
            "text": text,
            "document_id": "d1",
            "sentence_index": 0,
            "valid_from": valid,
            "valid_precision": "day" if valid else None,
            "document_date": "2020-01-28",
            "date_method": "stated",
        },
        "entities": [{"uuid": u, "name": n, "key": n.lower(), "position": i} for i, (u, n) in enumerate(entities)],
    }


@pytest.fixture()
def driver():
    return Mock(spec=Driver)


@pytest.fixture()
def transactions(driver):
    return Transactions(driver)


class TestNeo4jGraphStore:
    def test_init_validates_and_never_serialises_the_password(self, driver, monkeypatch):
        with pytest.raises(ValueError, match="Bolt URI"):
            Neo4jGraphStore("")
        with pytest.raises(ValueError, match="Secret"):
            Neo4jGraphStore("neo4j://127.0.0.1:7687", password="s3cret-pass")
        monkeypatch.setenv("NEO4J_PASSWORD", "s3cret-pass")
        store = Neo4jGraphStore("neo4j://127.0.0.1:7687", "neo4j", database="graphs", collection="research")
        data = store.to_dict()
        assert data == {
            "type": "components.graph.neo4j_store.Neo4jGraphStore",
            "init_parameters": {
                "uri": "neo4j://127.0.0.1:7687",
                "username": "neo4j",
                "database": "graphs",
                "collection": "research",
                "password": {"type": "env_var", "env_vars": ["NEO4J_PASSWORD"], "strict": False},
                "connection_timeout": 5.0,
                "query_timeout": 60.0,
            },
        }
        assert "s3cret-pass" not in repr(data)
        again = Neo4jGraphStore.from_dict(data)
        assert (again.uri, again.database, again.collection) == ("neo4j://127.0.0.1:7687", "graphs", "research")
        assert again.password.resolve_value() == "s3cret-pass"
        with pytest.raises(ValueError, match="query_timeout"):
            Neo4jGraphStore("neo4j://127.0.0.1:7687", query_timeout=0)

    def test_a_token_password_cannot_be_serialised(self):
        store = Neo4jGraphStore("neo4j://127.0.0.1:7687", password=Secret.from_token("typed-in"))
        with pytest.raises(ValueError):
            store.to_dict()

    def test_from_settings_reads_the_environment(self, monkeypatch):
        with pytest.raises(GraphUnavailable, match="NEO4J_URI"):
            graph_store_from_settings("research", Settings(graph_backend="neo4j"))
        monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:7687")
        monkeypatch.setenv("NEO4J_PASSWORD", "from-env")
        monkeypatch.setenv("NEO4J_DATABASE", "kg")
        store = graph_store_from_settings("research", Settings(graph_backend="neo4j"))
        assert (store.uri, store.database) == ("bolt://127.0.0.1:7687", "kg")
        assert store.password.resolve_value() == "from-env"
        assert "from-env" not in repr(store.to_dict())

    def test_a_password_in_the_settings_env_file_counts_and_is_never_serialised(self, monkeypatch, tmp_path):
        from haystack.utils import Secret
        from pydantic import SecretStr

        import components.graph.factory as factory
        from components.graph.entity_search import EntitySearch

        monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
        (tmp_path / ".env").write_text("NEO4J_PASSWORD=from-dotenv\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)  # the settings read `.env` in the working folder
        settings = Settings(graph_backend="neo4j", neo4j_uri="neo4j://127.0.0.1:7687")
        assert settings.neo4j_password.get_secret_value() == "from-dotenv"
        store = graph_store_from_settings("research", settings)
        assert store._resolve_password() == "from-dotenv"
        data = store.to_dict()
        assert "from-dotenv" not in repr(data) and "fallback_password" not in data["init_parameters"]
        # A store loaded from its YAML (a component's `graph_store`) reads the `.env` file's value too.
        monkeypatch.setattr(factory, "get_settings", lambda: settings)
        loaded = factory.deserialize_graph_store(data)
        assert loaded._resolve_password() == "from-dotenv" and "from-dotenv" not in repr(loaded.to_dict())
        component = EntitySearch(collection="research", graph_store=store)
        assert "from-dotenv" not in repr(component.to_dict())
        assert EntitySearch.from_dict(component.to_dict()).graph_store._resolve_password() == "from-dotenv"
        # The fallback stands in for NEO4J_PASSWORD only; the store itself never reads the settings.
        fallback = Secret.from_token("from-dotenv")
        assert Neo4jGraphStore("neo4j://127.0.0.1:7687")._resolve_password() is None
        assert Neo4jGraphStore("neo4j://h:7687", password=None, fallback_password=fallback)._resolve_password() is None
        other = Secret.from_env_var("QUORVANE_GRAPH_PASSWORD", strict=False)
        assert Neo4jGraphStore("neo4j://h:7687", password=other, fallback_password=fallback)._resolve_password() is None
        either = Secret.from_env_var(["QUORVANE_GRAPH_PASSWORD", "NEO4J_PASSWORD"], strict=False)
        assert Neo4jGraphStore("neo4j://h:7687", password=either, fallback_password=fallback)._resolve_password() == (
            "from-dotenv"
        )
        monkeypatch.setenv("NEO4J_PASSWORD", "from-env")  # the environment wins over the file
        assert store._resolve_password() == "from-env"
        with pytest.raises(ValueError, match="fallback_password must be a haystack Secret"):
            Neo4jGraphStore("neo4j://h:7687", fallback_password=SecretStr("plain"))

    def test_an_empty_password_in_the_settings_env_file_is_no_password(self, monkeypatch, tmp_path):
        import components.graph.factory as factory

        monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
        (tmp_path / ".env").write_text("NEO4J_PASSWORD=\n", encoding="utf-8")  # as a copied example file leaves it
        monkeypatch.chdir(tmp_path)
        settings = Settings(graph_backend="neo4j", neo4j_uri="neo4j://127.0.0.1:7687")
        store = graph_store_from_settings("research", settings)
        assert store._resolve_password() is None
        monkeypatch.setattr(factory, "get_settings", lambda: settings)
        assert factory.deserialize_graph_store(store.to_dict())._resolve_password() is None

    def test_the_driver_is_made_on_first_use_and_a_missing_server_is_one_quick_sentence(self, monkeypatch):
        import socket
        import time

        with socket.socket() as probe:  # a port nothing listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        monkeypatch.setenv("NEO4J_PASSWORD", "secret-pw")
        store = Neo4jGraphStore(f"bolt://127.0.0.1:{port}", collection="kb1")
        assert store._driver is None  # nothing is opened by making the store
        started = time.monotonic()
        with pytest.raises(GraphUnavailable) as excinfo:
            store.warm_up()
        assert time.monotonic() - started < 10.0
        message = str(excinfo.value)
        assert message == f"Neo4j at bolt://127.0.0.1:{port} cannot be used: ServiceUnavailable"
        assert "secret-pw" not in message
        store.close()

    def test_entity_passage_links_in_one_query(self, driver, transactions):
        store = Neo4jGraphStore("neo4j://h:7687", "neo4j", None, collection="kb1", driver=driver)
        store._ready = True
        transactions.answers = [
            [
                {"link": True, "entity": "e1", "passage": "d1-c0", "document": "d1", "n": 2},
                {"link": True, "entity": "e2", "passage": None, "document": "d2", "n": 1},
                {"link": False, "entity": "e1", "passage": "nordvik", "document": None, "n": 0},
                {"link": False, "entity": "e1", "passage": "nordvik se", "document": None, "n": 0},
            ]
        ]
        found = store.entity_passage_links()
        [(query, params)] = transactions.runs
        # Links and names of the entities taking part, then of the names only mentioned (`f.mentions`).
        assert query.count("UNION ALL") == 4 and "f.mentions" in query and params["c"] == "kb1"
        assert found.links == (("e1", "d1-c0", "d1", 2), ("e2", None, "d2", 1))
        assert found.names == (("nordvik", "e1"), ("nordvik se", "e1"))
        assert store.graph_version() is None  # no change counter: the walk's cache re-reads after its TTL

    def test_relationships_walk_hop_by_hop(self, driver, transactions):
        store = Neo4jGraphStore("neo4j://h:7687", "neo4j", None, driver=driver)
        store._ready = True
        transactions.answers = [
            [fact_record("f1", "A met B.", "2020-01-01", [("a", "A"), ("b", "B")])],
            [
                fact_record("f1", "A met B.", "2020-01-01", [("a", "A"), ("b", "B")]),
                fact_record("f2", "B met C.", "2020-02-01", [("b", "B"), ("c", "C")]),
            ],
        ]
        hits = store.related_facts("a", depth=2)
        assert [(hit.fact.uuid, hit.hop) for hit in hits] == [("f1", 1), ("f2", 2)]
        frontiers = [params["frontier"] for _, params in transactions.runs]
        assert frontiers == [["a"], ["b"]]

    def test_find_entities_ranks_like_the_embedded_store(self, driver, transactions):
        store = Neo4jGraphStore("neo4j://h:7687", "neo4j", None, driver=driver)
        store._ready = True
        undated = {"first_from": None, "first_precision": None, "last_from": None, "last_precision": None}
        transactions.answers = [
            [
                {
                    "uuid": "1",
                    "key": "quillmoor",
                    "name": "Quillmoor",
                    "kind": "organization",
                    "n": 9,
                    "aliases": [],
                    **undated,
                },
                {
                    "uuid": "2",
                    "key": "quillmoor records",
                    "name": "Quillmoor Records",
                    "kind": "organization",
                    "n": 3,
                    "aliases": [],
                    **undated,
                },
            ]
        ]
        assert [e.name for e in store.find_entities("Saltmarsh Quillmoor Records")] == ["Quillmoor Records"]
        assert transactions.runs[-1][1]["words"] == ["saltmarsh", "quillmoor", "records"]

    def test_best_entity_facts_is_one_query_grouped_by_entity(self, driver, transactions):
        store = Neo4jGraphStore("neo4j://h:7687", "neo4j", None, driver=driver)
        store._ready = True
        shared = fact_record(
            "f1", "Nordvik hired Lindqvist.", "2019-04-01", [("e1", "Nordvik"), ("e2", "Johan Lindqvist")]
        )
        transactions.answers = [
            [
                {"for_entity": "e1", **shared},
                {"for_entity": "e1", **fact_record("f2", "Nordvik was founded.", "1970-12-18", [("e1", "Nordvik")])},
                {"for_entity": "e2", **shared},
            ]
        ]
        best = store.best_entity_facts(["e1", "e2"], per_entity=2, as_of=dt.date(2020, 1, 1))
        [(query, params)] = transactions.runs
        assert "collect(f)[..$per]" in query and "f.valid_from <= $as_of" in query
        assert (params["uuids"], params["per"], params["as_of"]) == (["e1", "e2"], 2, "2020-01-01")
        grouped = {key: [hit.fact.uuid for hit in hits] for key, hits in best.items()}
        assert grouped == {"e1": ["f1", "f2"], "e2": ["f1"]}
        assert best["e2"][0].fact.entity_names == ["Nordvik", "Johan Lindqvist"]
        assert store.best_entity_facts([]) == {} and len(transactions.runs) == 1


class TestDriverLifecycle:
    def test_callers_at_once_share_one_driver(self, monkeypatch):
        import threading
        import time

        import neo4j

        made = []

        def slow_driver(*args, **kwargs):
            time.sleep(0.1)  # every caller is past the check before the first driver exists
            made.append(Mock(spec=Driver))
            return made[-1]

        monkeypatch.setattr(neo4j.GraphDatabase, "driver", slow_driver)
        store = Neo4jGraphStore("bolt://127.0.0.1:7687", password=None)
        got = []
        callers = [threading.Thread(target=lambda: got.append(store._get_driver())) for _ in range(4)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
        assert len(made) == 1 and got == made * 4  # no second driver made and left open

    def test_a_late_call_closes_its_own_driver_not_the_one_made_since(self):
        import threading

        old, new = Mock(spec=Driver), Mock(spec=Driver)
        store = Neo4jGraphStore("bolt://127.0.0.1:7687", password=None, driver=old, query_timeout=0.2)
        store._ready = True
        release = threading.Event()

        def hang(*args, **kwargs):
            with store._driver_lock:  # meanwhile another caller's deadline swapped the driver out, a new one made
                store._retired[id(old)] = old
                store._driver = new
            release.wait(5)

        old.session.side_effect = hang
        with pytest.raises(GraphUnavailable, match="did not answer within 0.2 s"):
            store.counts()
        release.set()
        assert store._driver is new and not new.close.called
        old.close.assert_called()

    def test_a_call_given_up_before_its_thread_started_never_runs_nor_keeps_the_driver_open(self, monkeypatch):
        import threading

        import components.graph.neo4j_store as neo4j_store

        driver = Mock(spec=Driver)
        store = Neo4jGraphStore("bolt://127.0.0.1:7687", password=None, driver=driver, query_timeout=0.2)
        store._ready = True
        hung = threading.Event()
        driver.session.side_effect = lambda *args, **kwargs: hung.wait(5)  # the server never answers
        start, late = threading.Event(), []
        submit = neo4j_store.submit_in_thread

        def started_late(work):
            late.append(submit(lambda: start.wait(5) and work()))
            return late[-1]

        monkeypatch.setattr(neo4j_store, "submit_in_thread", started_late)
        with pytest.raises(GraphUnavailable, match="did not answer within 0.2 s"):
            store.counts()  # its thread (a busy machine) had not started by the deadline
        monkeypatch.setattr(neo4j_store, "submit_in_thread", submit)
        start.set()
        try:
            # Once started, it finds the call given up: it asks the server nothing and holds no driver.
            with pytest.raises(neo4j_store._Abandoned):
                late[0].result(timeout=2)
            assert not driver.session.called and not store._live
            # So the next call that misses its deadline on that driver closes it (which ends its hung read).
            with pytest.raises(GraphUnavailable, match="did not answer within 0.2 s"):
                store.counts()
            assert wait_for(lambda: driver.close.called)
        finally:
            hung.set()

    def test_a_driver_the_store_closed_is_not_closed_again_by_a_call_that_then_misses_its_deadline(self):
        import threading

        driver = Mock(spec=Driver)
        store = Neo4jGraphStore("bolt://127.0.0.1:7687", password=None, driver=driver, query_timeout=0.5)
        store._ready = True
        asked, hung = threading.Event(), threading.Event()
        driver.session.side_effect = lambda *args, **kwargs: (asked.set(), hung.wait(5))
        failed = []
        caller = threading.Thread(target=lambda: pytest.raises(GraphUnavailable, store.counts) and failed.append(1))
        caller.start()
        try:
            assert asked.wait(2)
            store.close()  # while the call waits on the driver
            assert driver.close.call_count == 1
            caller.join(timeout=3)
            assert failed == [1]  # the call missed its deadline after the close
            # The neo4j driver's `close` is not safe to call twice at once: the call must not close it again.
            assert not wait_for(lambda: driver.close.call_count > 1, seconds=0.5)
            assert not store._retired
        finally:
            hung.set()

    def test_the_drivers_own_timeout_error_is_not_the_deadline(self, driver):
        driver.session.side_effect = TimeoutError("timed out")
        store = Neo4jGraphStore("bolt://127.0.0.1:7687", password=None, driver=driver, query_timeout=30.0)
        store._ready = True
        with pytest.raises(GraphUnavailable) as excinfo:
            store.counts()
        assert str(excinfo.value) == "Neo4j at bolt://127.0.0.1:7687 cannot be used: TimeoutError"
        assert store._driver is driver and not driver.close.called
