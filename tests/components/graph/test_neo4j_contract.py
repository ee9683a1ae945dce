"""`Neo4jGraphStore` through the official `neo4j` driver against the Bolt contract server: the statements and
parameters the store sends, the facts and entities it builds from the records a server answers, and the documented
failures (a refused login, a transient error, a server that never answers, a connection closed)."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from haystack.utils import Secret

from components.graph.extraction import LanguageExtractor
from components.graph.neo4j_store import _RETRY_S, _SCHEMA, QUERIES, Neo4jGraphStore
from components.graph.store import GraphUnavailable
from tests.components.graph.conftest import nordvik_documents
from tests.contract_servers.bolt import UNAVAILABLE, BoltContractServer, Node

ENTITY_FACTS = r"^MATCH \(f:Fact \{collection: \$c\}\)-\[:MENTIONS\]->\(e:Entity \{collection: \$c\}\) WHERE e\.uuid IN"


def make_store(server: BoltContractServer, password: str = "contract-pw", **timeouts: float) -> Neo4jGraphStore:
    timeouts = {"connection_timeout": 1.0, "query_timeout": 5.0, **timeouts}
    return Neo4jGraphStore(server.uri, "neo4j", Secret.from_token(password), collection="kb1", **timeouts)


@pytest.fixture()
def store(bolt_server):
    made = make_store(bolt_server)
    made.warm_up()
    bolt_server.runs.clear()
    bolt_server.messages.clear()
    yield made
    made.close()


def wait_for(condition, seconds: float = 2.0) -> bool:
    """Whether `condition()` holds within `seconds` (for what the server reads after the client has gone on)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def fact_record(uuid: str, text: str, valid: str | None, entities: list[tuple[str, str]]) -> dict:
    """A row as `entity_facts` RETURNs it: the fact node, and its entities with their positions."""
    properties = {
        "collection": "kb1",
        "uuid": uuid,
        "text": text,
        "document_id": "d1",
        "sentence_index": 2,
        "valid_from": valid,
        "valid_to": valid,
        "valid_precision": "day" if valid else None,
        "document_date": "2020-01-28",
        "date_method": "stated",
        "chunk_id": "d1-c0",
        "chunk_index": 0,
        "confidence": 0.75,
    }
    linked = [{"uuid": u, "name": n, "key": n.lower(), "position": i} for i, (u, n) in enumerate(entities)]
    node = Node({k: v for k, v in properties.items() if v is not None}, ["Fact"], id=int(uuid.strip("f")))
    return {"fact": node, "entities": linked[::-1]}


def test_warm_up_logs_in_and_creates_the_schema_once(bolt_server):
    store = make_store(bolt_server, query_timeout=7.5)
    store.warm_up()
    store.warm_up()
    assert bolt_server.agreed and bolt_server.agreed[0] >= (5, 1)
    assert bolt_server.messages[:2] == ["HELLO", "LOGON"]
    assert bolt_server.queries() == list(_SCHEMA)
    # Each statement's transaction carries the store's database and its deadline as the server-side timeout.
    assert len(bolt_server.begins) == len(_SCHEMA)
    assert {(begin.get("db"), begin.get("tx_timeout")) for begin in bolt_server.begins} == {("neo4j", 7500)}
    store.close()
    # GOODBYE has no answer: the driver does not wait for the server to read it.
    assert wait_for(lambda: bolt_server.messages[-1:] == ["GOODBYE"])


def test_replace_document_sends_the_rows_the_store_builds_in_one_transaction(bolt_server, store):
    document, chunks = nordvik_documents()[0]
    graph = LanguageExtractor().extract(document, chunks)
    taught_key = sorted(m.key for m in graph.entities)[0]
    # Another document taught one of this document's keys as the alias of its entity: the store joins that entity.
    bolt_server.answer(r"RETURN a\.key AS key, collect", [{"key": taught_key, "uuids": ["taught-uuid"]}])
    bolt_server.answer(r"DETACH DELETE f RETURN count\(f\) AS n", [{"n": 0}])
    store.replace_document(graph)
    assert bolt_server.messages.count("BEGIN") == 1 and bolt_server.messages[-1] == "COMMIT"
    assert (bolt_server.begins[0]["db"], bolt_server.begins[0]["tx_timeout"]) == ("neo4j", 5000)
    names = {text: name for name, text in QUERIES.items()}
    assert [names[query] for query in bolt_server.queries()] == [
        "delete_stamp",
        "delete_aliases",
        "document_entity_uuids",
        "delete_facts",
        "delete_orphans",
        "stamp",
        "taught_aliases",
        "write_entities",
        "write_aliases",
        "write_facts",
        "write_links",
        "write_mentions",
        "delete_orphans",
    ]
    sent = {names[run["query"]]: run["parameters"] for run in bolt_server.runs}
    assert all(parameters["c"] == "kb1" for parameters in sent.values())
    assert sent["delete_stamp"]["d"] == "nordvik-2019" and sent["stamp"]["x"] == LanguageExtractor().stamp
    assert sent["taught_aliases"]["keys"] == sorted({m.key for m in graph.entities})
    entities = sent["write_entities"]["rows"]
    assert taught_key not in {row["key"] for row in entities}
    assert set(entities[0]) == {"uuid", "key", "name", "kind", "confidence", "evidence"}
    assert {
        "key": taught_key,
        "uuid": "taught-uuid",
        "d": "nordvik-2019",
        "reason": "the same name another document gave as this entity's alias",
    } in sent["write_aliases"]["rows"]
    facts = sent["write_facts"]["rows"]
    assert len(facts) == len(graph.facts)
    launched = next(row for row in facts if row["text"].startswith("The company had launched"))
    assert (launched["valid_from"], launched["valid_to"], launched["valid_precision"]) == (
        "2000-12-01",
        "2000-12-31",
        "month",
    )
    assert launched["document_date"] == "2019-02-14" and launched["document_id"] == "nordvik-2019"
    links = sent["write_links"]["rows"]
    assert {row["fact"] for row in links} == {fact.uuid for fact in graph.facts}
    taught_entity = next(m.uuid for m in graph.entities if m.key == taught_key)
    assert taught_entity not in {row["entity"] for row in links}
    assert {"nv900"} <= {key for row in sent["write_mentions"]["rows"] for key in row["keys"]}
    # The entities this document wrote and left without a fact go at the end.
    assert sent["delete_orphans"]["uuids"] == [row["uuid"] for row in entities]


def test_a_read_after_a_write_waits_for_the_write_on_a_cluster(bolt_server, store):
    document, chunks = nordvik_documents()[0]
    store.replace_document(LanguageExtractor().extract(document, chunks))
    written = bolt_server.begins[-1]
    store.entity_facts(["e1"])
    # The read's BEGIN carries the bookmark the write's COMMIT returned, so a follower answers only once it has it.
    assert written.get("mode") != "r" and bolt_server.begins[-1].get("mode") == "r"
    read_after = bolt_server.begins[-1].get("bookmarks")
    assert read_after and read_after != written.get("bookmarks")  # the write's own, newer than any it began with


def test_entity_facts_are_built_from_the_records_the_server_answers(bolt_server, store):
    bolt_server.answer(
        ENTITY_FACTS,
        [
            fact_record("f1", "Nordvik was founded.", "1970-12-18", [("e1", "Nordvik")]),
            fact_record("f2", "Nordvik and Halden competed.", None, [("e2", "Halden"), ("e1", "Nordvik")]),
        ],
    )
    hits = store.entity_facts(["e1"], start=dt.date(1970, 1, 1), end=dt.date(2020, 12, 31), limit=20)
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["entity_facts"]
    assert run["parameters"] == {
        "c": "kb1",
        "uuids": ["e1"],
        "start": "1970-01-01",
        "end": "2020-12-31",
        "as_of": None,
        "limit": 20,
    }
    first, second = (hit.fact for hit in hits)
    assert (first.uuid, first.text, first.valid_at.iso(), first.document_date) == (
        "f1",
        "Nordvik was founded.",
        "1970-12-18",
        dt.date(2020, 1, 28),
    )
    assert (first.chunk_id, first.sentence_index, first.confidence, first.date_method) == ("d1-c0", 2, 0.75, "stated")
    assert second.valid_at is None
    assert second.entity_names == ["Halden", "Nordvik"] and second.entity_uuids == ["e2", "e1"]
    assert second.source_node_uuid == "e2"


def test_match_entities_ranks_the_candidates_the_server_answers(bolt_server, store):
    undated = {"first_from": None, "first_precision": None, "last_from": None, "last_precision": None}
    bolt_server.answer(
        r"^MATCH \(e:Entity \{collection: \$c\}\) WHERE \(\$kinds IS NULL",
        [
            {
                "uuid": "2",
                "key": "nordvik defence",
                "name": "Nordvik Defence",
                "kind": "organization",
                "n": 9,
                "aliases": [],
                **undated,
            },
            {
                "uuid": "1",
                "key": "nordvik",
                "name": "Nordvik",
                "kind": "organization",
                "n": 5,
                "aliases": ["nordvik se", "nordvik se"],
                "first_from": "2000-12-01",
                "first_precision": "month",
                "last_from": "2021-01-01",
                "last_precision": "year",
            },
        ],
    )
    matches = store.match_entities("Nordvik SE", kinds=["organization"], as_of=dt.date(2020, 1, 1))
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["entity_candidates"]
    params = run["parameters"]
    assert (params["key"], params["words"], params["heads"], params["tails"]) == (
        "nordvik",
        ["nordvik"],
        ["nor"],
        ["vik"],
    )
    assert (params["kinds"], params["as_of"], params["c"]) == (["organization"], "2020-01-01", "kb1")
    assert [(m.entity.name, m.match) for m in matches] == [("Nordvik", "exact"), ("Nordvik Defence", "prefix")]
    assert matches[0].entity.aliases == ["nordvik se"] and matches[0].entity.fact_count == 5
    assert (matches[0].first_date.iso(), matches[0].last_date.iso(), matches[1].first_date) == ("2000-12", "2021", None)
    assert store.find_entities("Nordvik")[0].name == "Nordvik"


def test_whether_a_collection_has_a_graph_and_which_do(bolt_server, store):
    assert store.exists() is False  # the server answers no row
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["collection_exists"] and run["parameters"] == {"c": "kb1"}
    assert ":GraphDocument {collection: $c}" in run["query"] and "MATCH (n)" not in run["query"]  # by label
    bolt_server.answer(r"^RETURN EXISTS \{ MATCH \(:GraphDocument", [{"found": True}])
    bolt_server.answer(r"^MATCH \(d:GraphDocument\)", [{"collection": "team"}, {"collection": "kb1"}])
    assert store.exists() is True and store.collections() == ["kb1", "team"]
    assert bolt_server.runs[-1]["query"] == QUERIES["graph_collections"]


def test_list_entities_asks_the_candidates_query_without_a_name(bolt_server, store):
    bolt_server.answer(
        r"^MATCH \(e:Entity \{collection: \$c\}\) WHERE \(\$kinds IS NULL",
        [
            {
                "uuid": "1",
                "key": "nordvik",
                "name": "Nordvik",
                "kind": "organization",
                "confidence": 0.9,
                "n": 5,
                "aliases": [],
                "first_from": None,
                "first_precision": None,
                "last_from": None,
                "last_precision": None,
            },
        ],
    )
    (entity,) = store.list_entities(["organization"], limit=7)
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["entity_candidates"]
    assert (run["parameters"]["key"], run["parameters"]["kinds"], run["parameters"]["cap"]) == (
        None,
        ["organization"],
        7,
    )
    assert (entity.name, entity.kind, entity.confidence, entity.fact_count) == ("Nordvik", "organization", 0.9, 5)


def test_a_longer_name_asks_for_and_ranks_the_shorter_names_inside_it(bolt_server, store):
    undated = {"first_from": None, "first_precision": None, "last_from": None, "last_precision": None}
    bolt_server.answer(
        r"^MATCH \(e:Entity \{collection: \$c\}\) WHERE \(\$kinds IS NULL",
        [
            {"uuid": "1", "key": "vennick", "name": "Vennick", "kind": "person", "n": 3, "aliases": [], **undated},
            {
                "uuid": "2",
                "key": "orla vennick",
                "name": "Orla Vennick",
                "kind": "person",
                "n": 1,
                "aliases": [],
                **undated,
            },
        ],
    )
    matches = store.match_entities("Orla Vennick")
    (run,) = bolt_server.runs
    assert run["parameters"]["words"] == ["orla", "vennick"]
    assert [(m.entity.name, m.match) for m in matches] == [("Orla Vennick", "exact"), ("Vennick", "within")]


def test_a_refused_login_is_one_sentence_without_the_password(bolt_server):
    store = make_store(bolt_server, password="wrong-secret")
    started = time.monotonic()
    with pytest.raises(GraphUnavailable) as excinfo:
        store.warm_up()
    assert time.monotonic() - started < 2.0  # a refused login is not retried
    message = str(excinfo.value)
    assert message.startswith(f"Neo4j at {bolt_server.uri} cannot be used: AuthError")
    assert "NEO4J_PASSWORD" in message and "wrong-secret" not in message and "\n" not in message
    assert "LOGON" in bolt_server.messages and bolt_server.runs == []
    store.close()


def test_a_transient_error_is_retried_until_the_server_answers(bolt_server, store):
    bolt_server.fail_run(ENTITY_FACTS, UNAVAILABLE, "Database 'neo4j' is unavailable.", times=1)
    bolt_server.answer(ENTITY_FACTS, [fact_record("f1", "Nordvik was founded.", "1970-12-18", [("e1", "Nordvik")])])
    hits = store.entity_facts(["e1"])
    assert [hit.fact.uuid for hit in hits] == ["f1"]
    assert bolt_server.queries() == [QUERIES["entity_facts"]] * 2
    # A write transaction is retried whole: the second attempt starts again from the first statement.
    bolt_server.runs.clear()
    bolt_server.fail_run(r"^CREATE \(:GraphDocument", UNAVAILABLE, "Database 'neo4j' is unavailable.", times=1)
    document, chunks = nordvik_documents()[1]
    store.replace_document(LanguageExtractor().extract(document, chunks))
    queries = bolt_server.queries()
    assert queries.count(QUERIES["stamp"]) == 2 and queries.count(QUERIES["delete_stamp"]) == 2
    assert queries[-1] == QUERIES["delete_orphans"] and bolt_server.messages[-1] == "COMMIT"


def test_a_server_that_never_answers_the_handshake_ends_at_the_connection_timeout(bolt_server):
    bolt_server.fail("hang", "handshake")
    store = make_store(bolt_server, connection_timeout=0.3, query_timeout=10.0)
    started = time.monotonic()
    with pytest.raises(GraphUnavailable, match="cannot be used: ServiceUnavailable$"):
        store.warm_up()
    # The connection timeout, then the driver's retries within their own short budget (2 s).
    assert time.monotonic() - started < 4.0
    store.close()


def test_a_query_the_server_never_answers_ends_at_the_query_timeout_and_the_store_recovers(bolt_server):
    store = make_store(bolt_server)
    store.warm_up()  # within the default deadline: a loaded machine can take over a second to log in
    store.query_timeout = 1.0
    bolt_server.fail("hang", "run")
    started = time.monotonic()
    with pytest.raises(GraphUnavailable) as excinfo:
        store.entity_facts(["e1"])
    assert time.monotonic() - started < 2.0
    assert str(excinfo.value) == f"Neo4j at {bolt_server.uri} did not answer within 1 s"
    store.query_timeout = 5.0
    bolt_server.reset()  # the server answers again: the store opens a new driver and goes on
    bolt_server.answer(ENTITY_FACTS, [fact_record("f1", "Nordvik was founded.", None, [("e1", "Nordvik")])])
    assert [hit.fact.uuid for hit in store.entity_facts(["e1"])] == ["f1"]
    store.close()


def test_a_closed_connection_is_one_sentence(bolt_server, store):
    bolt_server.fail("close", "run")
    started = time.monotonic()
    with pytest.raises(GraphUnavailable) as excinfo:
        store.entity_facts(["e1"])
    assert time.monotonic() - started < 5.0  # the driver's retries stop within their 2 s budget
    assert str(excinfo.value) == f"Neo4j at {bolt_server.uri} cannot be used: ServiceUnavailable"
    assert bolt_server.queries().count(QUERIES["entity_facts"]) >= 2  # retried on a new connection first


def test_a_failed_write_is_one_sentence_and_never_committed(bolt_server, store):
    bolt_server.fail_run(
        r"^CREATE \(:GraphDocument",
        "Neo.ClientError.Schema.ConstraintValidationFailed",
        "Node already exists with label `GraphDocument`",
    )
    with pytest.raises(GraphUnavailable) as excinfo:
        store.replace_document(LanguageExtractor().extract(*nordvik_documents()[0]))
    assert str(excinfo.value) == f"Neo4j at {bolt_server.uri} cannot be used: ConstraintError"
    assert bolt_server.queries().count(QUERIES["stamp"]) == 1  # a client error is not retried
    assert "BEGIN" in bolt_server.messages and "COMMIT" not in bolt_server.messages  # nothing of it is kept


def test_the_server_speaks_packstream_and_bolt_framing_as_the_driver_does(bolt_server):
    import neo4j

    values = {
        "ints": [-16, 0, 127, -17, -128, -129, 128, -32768, 32767, 32768, -(2**31), 2**31, -(2**63), 2**63 - 1],
        "float": -1.5,
        "none": None,
        "flags": [True, False],
        "text": "Nordvik å" * 3,
        "long": "x" * 70_000,  # a message longer than one chunk, both ways
        "list": list(range(300)),
        "map": {f"k{i}": i for i in range(20)},
        "nested": [{"a": [None, "b", []]}, {}],
        # 16-bit string, 8-bit list, 16-bit map and 16-bit bytes sizes
        "mid": "y" * 300,
        "short": list(range(20)),
        "wide": {f"k{i}": i for i in range(300)},
        "raw": b"\x00\xff" * 200,
    }
    bolt_server.answer(r"^RETURN \$v AS v$", [{"v": values}])
    with neo4j.GraphDatabase.driver(bolt_server.uri, auth=("neo4j", "contract-pw")) as driver:
        records = driver.execute_query("RETURN $v AS v", v=values).records
    assert bolt_server.runs[0]["parameters"] == {"v": values}
    assert records[0]["v"] == values
    assert bolt_server.agreed == [(5, 4)] and "TELEMETRY" in bolt_server.messages


def test_bolt_5_0_logs_in_at_hello_and_a_server_without_a_shared_version_is_one_sentence():
    with BoltContractServer(versions=((5, 0),)) as server:
        store = make_store(server)
        store.warm_up()
        assert server.agreed == [(5, 0)] and "LOGON" not in server.messages and len(server.runs) == len(_SCHEMA)
        store.close()
        refused = make_store(server, password="wrong-secret")
        with pytest.raises(GraphUnavailable, match="AuthError .*NEO4J_PASSWORD"):
            refused.warm_up()
        refused.close()
    with BoltContractServer(versions=((4, 0),)) as server:
        store = make_store(server)
        with pytest.raises(GraphUnavailable, match=r"cannot be used: \w+$"):
            store.warm_up()
        assert server.runs == []
        store.close()


def store_threads(monkeypatch) -> list:
    """The futures of every thread the Neo4j store starts from now on (to check that each one ends)."""
    import components.graph.neo4j_store as neo4j_store

    calls: list = []
    submit = neo4j_store.submit_in_thread
    monkeypatch.setattr(neo4j_store, "submit_in_thread", lambda work: calls.append(submit(work)) or calls[-1])
    return calls


def store_with_watched_driver(bolt_server, monkeypatch) -> tuple:
    """A warmed-up store, its driver, and an event set when that driver is closed."""
    import threading

    store = make_store(bolt_server, query_timeout=10.0)
    store.warm_up()
    driver = store._driver
    closed = threading.Event()
    close = driver.close
    monkeypatch.setattr(driver, "close", lambda: (close(), closed.set()))
    return store, driver, closed


def test_the_call_abandoned_at_the_deadline_ends_though_the_server_still_hangs(bolt_server, monkeypatch):

    calls = store_threads(monkeypatch)
    store = make_store(bolt_server)
    store.warm_up()  # within the default deadline: a loaded machine can take over a second to log in
    store.query_timeout = 0.5
    bolt_server.fail("hang", "run")
    for _ in range(2):
        with pytest.raises(GraphUnavailable, match="did not answer within 0.5 s"):
            store.entity_facts(["e1"])
    # Closing the driver ends the read; the driver's retry on a new connection finds the call abandoned and does not
    # send the statement again, so no thread (and no connection) stays with the hung server, however many calls.
    # (At most once each: on a loaded machine a call can reach its deadline before its statement was sent.)
    assert wait_for(lambda: all(call.done() for call in calls), seconds=10.0)
    assert bolt_server.queries().count(QUERIES["entity_facts"]) <= 2
    store.close()


def test_a_read_for_a_guarded_call_ends_by_its_deadline_though_the_store_allows_a_minute(bolt_server, monkeypatch):
    from components.resilience.budget import deadline_scope

    calls = store_threads(monkeypatch)
    store = make_store(bolt_server, query_timeout=60.0)
    store.warm_up()
    bolt_server.begins.clear()
    bolt_server.fail("hang", "run")
    started = time.monotonic()
    with deadline_scope(started + 1.0), pytest.raises(GraphUnavailable, match="did not answer within the caller's"):
        store.entity_facts(["e1"])
    assert time.monotonic() - started < 1.5
    # The server was told to end the transaction by the caller's deadline, and the store's thread was let go (after
    # the driver's retry pause, not the minute: the retry finds the call abandoned).
    assert bolt_server.begins and all(0 < begin["tx_timeout"] <= 1000 for begin in bolt_server.begins)
    assert wait_for(lambda: all(call.done() for call in calls), seconds=_RETRY_S + 1.0)
    # Past the deadline the read is not sent at all; outside a guarded call (ingestion) the minute still holds.
    with deadline_scope(time.monotonic() - 0.1), pytest.raises(GraphUnavailable, match="time was spent"):
        store.entity_facts(["e1"])
    bolt_server.reset()
    bolt_server.begins.clear()
    store.delete_document("d1")
    assert bolt_server.begins[-1]["tx_timeout"] == 60000
    store.close()


def test_the_graph_branchs_read_ends_by_the_branchs_deadline_on_the_server_too(bolt_server, monkeypatch):
    from components.contracts import StatusKind
    from components.graph.graph_search import GraphSearch

    calls = store_threads(monkeypatch)
    store = make_store(bolt_server, query_timeout=60.0)  # the store's own deadline, as ingestion uses it
    # The walk's graph is not read at warm-up, so the question reads it (as after a change to the graph).
    bolt_server.fail_run(r"UNION ALL MATCH", "Neo.ClientError.Statement.SyntaxError", "not now", times=1)
    search = GraphSearch(collection="kb1", timeout_s=1.0, graph_store=store)
    search.warm_up()
    bolt_server.begins.clear()
    bolt_server.fail("hang", "run")
    started = time.monotonic()
    status = search.run(query="Where was Nordvik Aviation founded?", sources=["graph"])["status"]
    assert status.status is not StatusKind.SUCCESS and time.monotonic() - started < 2.0
    # The read the branch gave up on was abandoned with it, and the server was told the branch's deadline.
    assert wait_for(lambda: all(call.done() for call in calls), seconds=_RETRY_S + 1.0)
    assert QUERIES["passage_links"] in bolt_server.queries()
    assert bolt_server.begins and all(0 < begin["tx_timeout"] <= 1000 for begin in bolt_server.begins)
    store.close()


def test_the_comprehensive_searchs_graph_side_ends_by_the_sides_own_wait(bolt_server):
    from components.graph.tools import GraphTools

    store = make_store(bolt_server, query_timeout=60.0)
    store.warm_up()
    bolt_server.begins.clear()
    bolt_server.fail("hang", "run")
    started = time.monotonic()
    found, _, _ = GraphTools(store).comprehensive("Nordvik Aviation", use_vector=False, timeout_s=0.5)
    # The side's wait and the store's deadline end at the same moment: either may tell it, both naming the 0.5 s.
    assert found["errors"]["graph"] in {
        "graph search did not answer within 0.5 s",
        f"Neo4j at {store.uri} did not answer within the caller's deadline (0.5 s)",
    }
    assert set(found["errors"]) == {"graph"}
    assert time.monotonic() - started < 1.5
    # The server was told the side's wait, not the store's minute.
    assert bolt_server.begins and all(0 < begin["tx_timeout"] <= 500 for begin in bolt_server.begins)
    store.close()


def test_a_read_abandoned_at_its_deadline_cuts_no_call_still_within_its_time(bolt_server, monkeypatch):
    import threading

    from components.resilience.budget import deadline_scope

    calls = store_threads(monkeypatch)
    store, shared, closed = store_with_watched_driver(bolt_server, monkeypatch)
    # Ingestion's write is slow but within its time; a question's read on the same driver never gets an answer.
    bolt_server.answer(r"^MATCH \(d:GraphDocument", [], delay_s=1.5)
    bolt_server.hang_run(ENTITY_FACTS)
    written: list[BaseException | None] = []

    def write() -> None:
        try:
            store.delete_document("d1")
            written.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            written.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    assert wait_for(lambda: QUERIES["delete_stamp"] in bolt_server.queries())
    with deadline_scope(time.monotonic() + 0.3), pytest.raises(GraphUnavailable, match="caller's deadline"):
        store.entity_facts(["e1"])
    # The read was given up, its driver swapped out, but not closed while the write still runs on it.
    assert store._driver is not shared
    assert not wait_for(closed.is_set, seconds=0.5)
    writer.join(timeout=10)
    # The write went through in one go: its connection was not cut, so the driver did not run it again.
    assert written == [None] and bolt_server.queries().count(QUERIES["delete_stamp"]) == 1
    # The write was the last call within its time on the old driver: it closed it, which ended the hung read.
    assert wait_for(closed.is_set, seconds=2.0)
    assert wait_for(lambda: all(call.done() for call in calls), seconds=_RETRY_S + 2.0)
    # New calls run on a new driver; closing the store closes it.
    bolt_server.reset()
    store.delete_document("d1")
    renewed = store._driver
    assert renewed is not None and renewed is not shared
    store.close()
    assert store._driver is None


def test_closing_the_store_closes_a_driver_still_held_by_a_call_within_its_time(bolt_server, monkeypatch):
    import threading

    from components.resilience.budget import deadline_scope

    store, shared, closed = store_with_watched_driver(bolt_server, monkeypatch)
    bolt_server.answer(r"^MATCH \(d:GraphDocument", [], delay_s=3.0)
    bolt_server.hang_run(ENTITY_FACTS)
    ended = []

    def write() -> None:
        try:
            store.delete_document("d1")
        except GraphUnavailable:
            pass  # whether the driver's retry gets through after the close is the driver's affair
        ended.append(True)

    writer = threading.Thread(target=write)
    writer.start()
    assert wait_for(lambda: QUERIES["delete_stamp"] in bolt_server.queries())
    with deadline_scope(time.monotonic() + 0.3), pytest.raises(GraphUnavailable):
        store.entity_facts(["e1"])
    assert not closed.is_set()
    store.close()  # the swapped-out driver, which the slow write still holds, is closed with the store
    assert closed.is_set()
    writer.join(timeout=10)
    assert ended == [True]


def test_the_extractor_stamps_are_counted_in_one_read(bolt_server, store):
    bolt_server.answer(
        r"^MATCH \(d:GraphDocument \{collection: \$c\}\) RETURN d\.extractor",
        [{"extractor": "spacy/27", "n": 5}, {"extractor": "spacy/27+failed2", "n": 1}],
    )
    assert store.extractor_stamp_counts() == {"spacy/27": 5, "spacy/27+failed2": 1}
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["stamp_counts"] and run["parameters"] == {"c": "kb1"}


def test_restamp_sets_the_stamp_alone_in_one_transaction_and_says_whether_there_was_one(bolt_server, store):
    bolt_server.answer(r"SET d\.extractor = \$x RETURN 1 AS n", [{"n": 1}])
    assert store.restamp_document("nordvik-2019", "spacy/28+failed@1f0c9a2e+kept") is True
    assert bolt_server.messages.count("BEGIN") == 1 and bolt_server.messages[-1] == "COMMIT"
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["restamp"] and "DELETE" not in run["query"]
    assert run["parameters"] == {"c": "kb1", "d": "nordvik-2019", "x": "spacy/28+failed@1f0c9a2e+kept"}
    bolt_server.rules.clear()
    assert store.restamp_document("never-extracted", "spacy/28+failed") is False  # no stamp matched


def test_the_stamp_carries_the_source_mark_and_the_marks_are_read_in_one_query(bolt_server, store):
    document, chunks = nordvik_documents()[0]
    graph = LanguageExtractor().extract(document, chunks)
    graph.extractor, graph.source = "spacy/27", "0123abcd0123abcd"
    bolt_server.answer(r"DETACH DELETE f RETURN count\(f\) AS n", [{"n": 0}])
    store.replace_document(graph)
    (stamp,) = [run["parameters"] for run in bolt_server.runs if run["query"] == QUERIES["stamp"]]
    assert (stamp["x"], stamp["s"]) == ("spacy/27", "0123abcd0123abcd")
    bolt_server.runs.clear()
    bolt_server.answer(r"d\.source IS NOT NULL RETURN", [{"document_id": "nordvik-2019", "source": "0123abcd0123abcd"}])
    assert store.source_marks(["nordvik-2019", "other"]) == {"nordvik-2019": "0123abcd0123abcd"}
    (run,) = bolt_server.runs
    assert run["query"] == QUERIES["source_marks"]
    assert run["parameters"] == {"c": "kb1", "ids": ["nordvik-2019", "other"]}
