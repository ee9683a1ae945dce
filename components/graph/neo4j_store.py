"""`Neo4jGraphStore`: the same graph in Neo4j, through the official driver (Bolt, Cypher with parameters).

Nodes `Entity`, `Fact` and `Alias` carry a `collection` property, so one database holds several knowledge
bases' graphs; `(:Fact)-[:MENTIONS {position}]->(:Entity)` links facts to entities and
`(:Alias)-[:NAMES {document_id}]->(:Entity)` records the names a document taught; a fact's `mentions` are the
other names its sentence mentions (for the retrieval walk) and `GraphDocument` nodes hold each document's
extractor version. Dates are ISO text, which orders like the dates themselves. The password is a Haystack
`Secret` (by default the environment variable `NEO4J_PASSWORD`): `to_dict` writes only the variable's name, never
a value, and it is never logged. The driver is made on first use (`warm_up` or the first query), with short
timeouts, so a missing server is one sentence in seconds rather than a minute of retries. Every read and write
transaction also has a deadline (`query_timeout`, sent to the server as the transaction's timeout too): the driver
has no read timeout of its own, so a server that stops answering mid-query would hold the caller forever; at the
deadline the driver is swapped out, made again on next use (once however many threads ask), and closed (which ends
its waiting read) as soon as no other call still within its own time runs on it (the server ends the abandoned
transaction itself at the timeout it was sent); the driver's retry of the abandoned transaction finds it abandoned
and gives up before it sends the statement again, so the call ends rather than wait with the server. A read (and
the schema made before the first one) done for a guarded call, such as a research question's graph branch, ends by
that call's deadline too
(`question_deadline()`, which the guard sets): the deadline, when sooner than `query_timeout`, is both the
transaction's timeout sent to the server and the wait, so a read the branch gave up on does not go on on the server
or hold a connection after it; writes (ingestion) keep `query_timeout`. Driver failures reach the caller as
`GraphUnavailable` with one sentence, never as the driver's own exceptions.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from haystack.utils import Secret
from haystack.utils.auth import SecretType

from components.graph.store import GraphStore, GraphUnavailable
from components.resilience.budget import question_deadline
from components.resilience.guard import submit_in_thread
from components.settings import default_setting
from components.validation import positive

# The defaults are the NEO4J_USERNAME, NEO4J_DATABASE and KB_COLLECTION settings' own.
USERNAME: str = default_setting("neo4j_username")
DATABASE: str = default_setting("neo4j_database")
COLLECTION: str = default_setting("kb_collection")
# Seconds the driver retries a transaction that failed with a transient error or lost its connection.
_RETRY_S = 2.0


class _Abandoned(Exception):
    """Raised in a transaction the driver retries after its call missed the deadline: not a driver error, so the
    driver does not retry it again."""


class _Call:
    """One bounded call: the driver it runs on while it counts as live there (None before and after)."""

    driver: Any = None


_SCHEMA = (
    "CREATE CONSTRAINT graph_entity_uuid IF NOT EXISTS FOR (e:Entity) REQUIRE (e.collection, e.uuid) IS UNIQUE",
    "CREATE CONSTRAINT graph_fact_uuid IF NOT EXISTS FOR (f:Fact) REQUIRE (f.collection, f.uuid) IS UNIQUE",
    "CREATE INDEX graph_fact_document IF NOT EXISTS FOR (f:Fact) ON (f.collection, f.document_id)",
    "CREATE INDEX graph_alias_key IF NOT EXISTS FOR (a:Alias) ON (a.collection, a.key)",
    "CREATE FULLTEXT INDEX graph_fact_text IF NOT EXISTS FOR (f:Fact) ON EACH [f.text]",
)

# A fact row as `fact_from_row` reads it: the fact's properties, and its entities with their positions.
_FACT = (
    "f AS fact, [(f)-[m:MENTIONS]->(x:Entity) | "
    "{uuid: x.uuid, name: x.name, key: x.key, kind: x.kind, position: m.position}] AS entities"
)
_AS_OF = (
    " AND ($as_of IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= $as_of)"
    " AND (f.invalid_from IS NULL OR f.invalid_from > $as_of)))"
)
_SCOPE = (
    _AS_OF + " AND ($document_ids IS NULL OR f.document_id IN $document_ids)"
    " AND ($date_from IS NULL OR f.document_date >= $date_from) AND ($date_to IS NULL OR f.document_date <= $date_to)"
)
_NAMES_GRAM = "(e.key IN $grams OR EXISTS { MATCH (a:Alias {collection: $c})-[:NAMES]->(e) WHERE a.key IN $grams })"
# An entity (`e`) or alias (`a`) whose key is the search key, starts with it, shares a word with it, or has a word
# sharing the first or last three letters of a longer word of it: the same candidates as the embedded store's.
_NAMED = (
    "{v}.key = $key OR {v}.key STARTS WITH $key OR any(w IN split({v}.key, ' ') WHERE w IN $words "
    "OR (size(w) >= 4 AND (left(w, 3) IN $heads OR right(w, 3) IN $tails)))"
)

QUERIES = {
    "delete_stamp": "MATCH (d:GraphDocument {collection: $c, document_id: $d}) DELETE d",
    "delete_aliases": "MATCH (:Alias {collection: $c})-[r:NAMES {document_id: $d}]->() DELETE r",
    "document_entity_uuids": "MATCH (:Fact {collection: $c, document_id: $d})-[:MENTIONS]->(e:Entity) "
    "RETURN DISTINCT e.uuid AS uuid",
    "delete_facts": "MATCH (f:Fact {collection: $c, document_id: $d}) DETACH DELETE f RETURN count(f) AS n",
    # The aggregation leaves one row whether or not an entity went, so unused aliases are always removed.
    "delete_orphans": "MATCH (e:Entity {collection: $c}) WHERE e.uuid IN $uuids AND NOT (e)<-[:MENTIONS]-(:Fact) "
    "DETACH DELETE e WITH count(*) AS done "
    "MATCH (a:Alias {collection: $c}) WHERE NOT (a)-[:NAMES]->() DELETE a",
    "stamp": "CREATE (:GraphDocument {collection: $c, document_id: $d, extractor: $x, source: $s})",
    "restamp": "MATCH (d:GraphDocument {collection: $c, document_id: $d}) SET d.extractor = $x RETURN 1 AS n",
    "taught_aliases": "MATCH (a:Alias {collection: $c})-[:NAMES]->(e:Entity) WHERE a.key IN $keys "
    "AND NOT EXISTS { MATCH (x:Entity {collection: $c, key: a.key}) } "
    "RETURN a.key AS key, collect(DISTINCT e.uuid) AS uuids",
    "write_entities": "UNWIND $rows AS row MERGE (e:Entity {collection: $c, uuid: row.uuid}) "
    "ON CREATE SET e.key = row.key, e.name = row.name, e.kind = row.kind, e.confidence = row.confidence, "
    "e.evidence = row.evidence "
    "ON MATCH SET e.name = CASE WHEN size(row.name) < size(e.name) THEN row.name ELSE e.name END, "
    "e.kind = CASE WHEN row.confidence > coalesce(e.confidence, 0) THEN row.kind ELSE e.kind END, "
    "e.evidence = CASE WHEN row.confidence > coalesce(e.confidence, 0) THEN row.evidence ELSE e.evidence END, "
    "e.confidence = CASE WHEN row.confidence > coalesce(e.confidence, 0) THEN row.confidence ELSE e.confidence END",
    "write_aliases": "UNWIND $rows AS row MERGE (a:Alias {collection: $c, key: row.key}) WITH a, row "
    "MATCH (e:Entity {collection: $c, uuid: row.uuid}) MERGE (a)-[n:NAMES {document_id: row.d}]->(e) "
    "SET n.reason = row.reason",
    "entity_notes": "MATCH (e:Entity {collection: $c, uuid: $uuid}) OPTIONAL MATCH (a:Alias)-[n:NAMES]->(e) "
    "RETURN coalesce(e.confidence, 0.0) AS confidence, coalesce(e.evidence, '') AS evidence, a.key AS alias_key, "
    "coalesce(n.reason, '') AS reason, n.document_id AS document_id ORDER BY alias_key, document_id",
    "write_facts": "UNWIND $rows AS row MERGE (f:Fact {collection: $c, uuid: row.uuid}) SET f += row",
    "write_links": "UNWIND $rows AS row MATCH (f:Fact {collection: $c, uuid: row.fact}) "
    "MATCH (e:Entity {collection: $c, uuid: row.entity}) MERGE (f)-[m:MENTIONS]->(e) SET m.position = row.position",
    "write_mentions": "UNWIND $rows AS row MATCH (f:Fact {collection: $c, uuid: row.fact}) SET f.mentions = row.keys",
    "entity_candidates": f"MATCH (e:Entity {{collection: $c}}) WHERE ($kinds IS NULL OR e.kind IN $kinds) "
    f"AND ($key IS NULL OR {_NAMED.format(v='e')} "
    f"OR EXISTS {{ MATCH (a:Alias {{collection: $c}})-[:NAMES]->(e) WHERE {_NAMED.format(v='a')} }}) "
    f"MATCH (e)<-[:MENTIONS]-(f:Fact {{collection: $c}}) WHERE true{_AS_OF} "
    "WITH e, f ORDER BY f.valid_from "
    "WITH e, count(f) AS n, "
    "collect(CASE WHEN f.valid_from IS NOT NULL THEN [f.valid_from, f.valid_precision] END) AS dated "
    "RETURN e.uuid AS uuid, e.key AS key, e.name AS name, e.kind AS kind, e.confidence AS confidence, n, "
    "[(a:Alias)-[:NAMES]->(e) | a.key] AS aliases, dated[0][0] AS first_from, dated[0][1] AS first_precision, "
    "dated[-1][0] AS last_from, dated[-1][1] AS last_precision "
    "ORDER BY CASE WHEN key = $key THEN 0 WHEN $key IN aliases THEN 1 WHEN key STARTS WITH $key THEN 2 "
    "ELSE 3 END, n DESC, name LIMIT $cap",
    # Bound to the labels (and the `collection` indexes), not a scan of every node of the database.
    "collection_exists": "RETURN EXISTS { MATCH (:GraphDocument {collection: $c}) } "
    "OR EXISTS { MATCH (:Entity {collection: $c}) } AS found",
    "graph_collections": "MATCH (d:GraphDocument) RETURN DISTINCT d.collection AS collection "
    "UNION MATCH (e:Entity) RETURN DISTINCT e.collection AS collection",
    "best_entity_facts": "MATCH (e:Entity {collection: $c})<-[m:MENTIONS]-(f:Fact {collection: $c}) "
    f"WHERE e.uuid IN $uuids{_AS_OF} "
    "AND ($min_confidence IS NULL OR f.confidence IS NULL OR f.confidence >= $min_confidence) "
    "WITH e, f, m.position = 0 AS about, EXISTS { MATCH (f)-[:MENTIONS]->(o:Entity) WHERE o <> e } AS linking "
    "ORDER BY e.uuid, about DESC, linking DESC, f.valid_from IS NULL, f.valid_from DESC, "
    "f.document_date IS NULL, f.document_date DESC, f.document_id, f.sentence_index "
    "WITH e, collect(f)[..$per] AS best UNWIND best AS f "
    f"RETURN e.uuid AS for_entity, {_FACT}",
    "document_entities": "MATCH (f:Fact {collection: $c, document_id: $d})-[:MENTIONS]->(e:Entity) "
    "RETURN e.uuid AS uuid, e.name AS name, e.kind AS kind, count(f) AS n ORDER BY n DESC, name LIMIT $limit",
    "named_facts": "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity {collection: $c}) "
    f"WHERE {_NAMES_GRAM}{_SCOPE} "
    f"WITH DISTINCT f RETURN {_FACT}, 0.0 AS rank, true AS named ORDER BY f.valid_from DESC LIMIT $limit",
    "text_facts": "CALL db.index.fulltext.queryNodes('graph_fact_text', reduce(s = '', w IN $words | s + ' ' + w)) "
    f"YIELD node AS f, score WHERE f.collection = $c{_SCOPE} "
    f"RETURN {_FACT}, score AS rank, EXISTS {{ MATCH (f)-[:MENTIONS]->(e:Entity) WHERE {_NAMES_GRAM} }} AS named "
    "ORDER BY score DESC LIMIT $limit",
    "entity_facts": "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity {collection: $c}) WHERE e.uuid IN $uuids "
    f"AND ($start IS NULL OR f.valid_to >= $start) AND ($end IS NULL OR f.valid_from <= $end){_AS_OF} "
    f"WITH DISTINCT f RETURN {_FACT} "
    "ORDER BY f.valid_from IS NULL, f.valid_from, f.document_date, f.document_id, f.sentence_index LIMIT $limit",
    "linking_facts": "MATCH (e:Entity {collection: $c})<-[:MENTIONS]-(f:Fact {collection: $c})-[:MENTIONS]->(o:Entity) "
    f"WHERE e.uuid IN $frontier AND o.uuid <> e.uuid{_AS_OF} "
    f"WITH DISTINCT f RETURN {_FACT} ORDER BY f.valid_from LIMIT $cap",
    "known_names": "MATCH (e:Entity {collection: $c}) WHERE e.key IN $keys RETURN e.key AS key "
    "UNION MATCH (a:Alias {collection: $c}) WHERE a.key IN $keys RETURN a.key AS key",
    "extractor_stamps": "MATCH (d:GraphDocument {collection: $c}) WHERE d.document_id IN $ids "
    "RETURN d.document_id AS document_id, d.extractor AS extractor",
    "source_marks": "MATCH (d:GraphDocument {collection: $c}) WHERE d.document_id IN $ids AND d.source IS NOT NULL "
    "RETURN d.document_id AS document_id, d.source AS source",
    "stamp_counts": "MATCH (d:GraphDocument {collection: $c}) RETURN d.extractor AS extractor, count(d) AS n",
    "document_fact_count": "MATCH (f:Fact {collection: $c, document_id: $d}) RETURN count(f) AS n",
    "counts": "RETURN COUNT { (:Entity {collection: $c}) } AS entities, COUNT { (:Fact {collection: $c}) } AS facts, "
    "COUNT { (:Alias {collection: $c})-[:NAMES]->() } AS aliases",
    "passage_links": "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity) "
    "RETURN true AS link, e.uuid AS entity, f.chunk_id AS passage, f.document_id AS document, count(*) AS n "
    "UNION ALL MATCH (f:Fact {collection: $c}) UNWIND coalesce(f.mentions, []) AS k "
    "OPTIONAL MATCH (e:Entity {collection: $c, key: k}) "
    "RETURN true AS link, coalesce(e.uuid, 'mention:' + k) AS entity, f.chunk_id AS passage, "
    "f.document_id AS document, count(*) AS n "
    "UNION ALL MATCH (e:Entity {collection: $c}) "
    "RETURN false AS link, e.uuid AS entity, e.key AS passage, null AS document, 0 AS n "
    "UNION ALL MATCH (a:Alias {collection: $c})-[:NAMES]->(e:Entity) "
    "RETURN false AS link, e.uuid AS entity, a.key AS passage, null AS document, 0 AS n "
    "UNION ALL MATCH (f:Fact {collection: $c}) UNWIND coalesce(f.mentions, []) AS k WITH DISTINCT k "
    "WHERE NOT EXISTS { MATCH (:Entity {collection: $c, key: k}) } "
    "RETURN false AS link, 'mention:' + k AS entity, k AS passage, null AS document, 0 AS n",
}


def _plain(value: Any) -> Any:
    """A parameter as Neo4j stores it: dates as ISO text, inside lists and rows too."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return {key: _plain(item) for key, item in value.items()} if isinstance(value, dict) else value


class Neo4jGraphStore(GraphStore):
    """The graph in Neo4j (a server or cluster), behind the same interface as the embedded store.

    Usage:
    ```python
    store = Neo4jGraphStore("neo4j://localhost:7687", collection="research")  # password from NEO4J_PASSWORD
    store.warm_up()
    store.entity_facts([e.uuid for e in store.find_entities("Nordvik Aviation")])
    ```
    """

    in_process_parameters = ("driver", "fallback_password")
    backend = "neo4j"

    def __init__(
        self,
        uri: str,
        username: str = USERNAME,
        password: Secret | None = Secret.from_env_var("NEO4J_PASSWORD", strict=False),  # noqa: B008
        database: str = DATABASE,
        collection: str = COLLECTION,
        driver: Any = None,
        connection_timeout: float = 5.0,
        query_timeout: float = 60.0,
        fallback_password: Secret | None = None,
    ) -> None:
        """
        :param uri: the Bolt URI of the server or cluster (`neo4j://host:7687`, `bolt://...`, `neo4j+s://...`).
        :param username: the user to log in as.
        :param password: the password as an env-var `Secret` (a token secret works but cannot be serialised);
            None logs in without authentication.
        :param database: the Neo4j database holding the graphs.
        :param collection: the knowledge base's collection; one database holds several collections' graphs.
        :param driver: an open `neo4j.Driver` to use instead of making one (tests; never serialised).
        :param connection_timeout: seconds to open a connection (and its handshake and login) or to wait for one
            from the pool.
        :param query_timeout: seconds a read or a write transaction may take, retries of transient errors
            included; then `GraphUnavailable`. A read done for a guarded call (a question's graph branch) ends by
            that call's deadline when it is sooner.
        :param fallback_password: the password when `password` reads `NEO4J_PASSWORD` and the environment does not
            set it: the value the settings read from their `.env` file, which `graph_store_from_settings` passes.
            In-process only, never serialised.
        """
        if not uri or not uri.strip():
            raise ValueError("uri must be a Neo4j Bolt URI such as neo4j://localhost:7687")
        if not collection or not collection.strip():
            raise ValueError("collection must be a non-empty name")
        if password is not None and not isinstance(password, Secret):
            raise ValueError("password must be a haystack Secret, e.g. Secret.from_env_var('NEO4J_PASSWORD')")
        if fallback_password is not None and not isinstance(fallback_password, Secret):
            raise ValueError("fallback_password must be a haystack Secret or None")
        self.uri = uri
        self.username = username
        self.password = password
        self.database = database
        self.collection = collection
        self.connection_timeout = positive("connection_timeout", connection_timeout)
        self.query_timeout = positive("query_timeout", query_timeout)
        self.fallback_password = fallback_password
        self._driver = driver
        self._ready = False
        self._lock = threading.Lock()
        # Makes and swaps the driver and counts its calls. Not `_lock`: the schema is made under that, by work in
        # another thread.
        self._driver_lock = threading.Lock()
        # The calls still within their time on each driver (by `id`), and the drivers swapped out after a missed
        # deadline but not closed yet, because such calls still run on them.
        self._live: dict[int, int] = {}
        self._retired: dict[int, Any] = {}

    def _resolve_password(self) -> str | None:
        """The secret's value; when it reads `NEO4J_PASSWORD` and that is unset, `fallback_password`'s."""
        if self.password is None:
            return None
        value = self.password.resolve_value()
        named = self.password.to_dict()["env_vars"] if self.password.type is SecretType.ENV_VAR else ()
        if value is None and "NEO4J_PASSWORD" in named and self.fallback_password is not None:
            value = self.fallback_password.resolve_value()
        return value

    def _get_driver(self) -> Any:
        """The store's one driver, made on first use (by one thread, however many ask at once)."""
        with self._driver_lock:
            return self._current_driver()

    def _current_driver(self) -> Any:
        """`_get_driver`, with `_driver_lock` held."""
        if self._driver is None:
            from neo4j import GraphDatabase

            password = self._resolve_password()
            auth = (self.username, password) if password is not None else None
            # Short budgets: a missing server must be one clear error in seconds, not a minute of retries.
            self._driver = GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=self.connection_timeout,
                connection_acquisition_timeout=self.connection_timeout,
                max_transaction_retry_time=_RETRY_S,
            )
        return self._driver

    def _unavailable(self, exc: BaseException) -> GraphUnavailable:
        """The one sentence a driver failure becomes (never the password, which the driver never echoes)."""
        from neo4j.exceptions import AuthError

        reason = type(exc).__name__
        if isinstance(exc, AuthError):
            reason += " (the server refused the username or password: check NEO4J_USERNAME and NEO4J_PASSWORD)"
        return GraphUnavailable(f"Neo4j at {self.uri} cannot be used: {reason}")

    def _bounded(self, work: Callable[[Any, Callable[..., Any]], Any], deadline: float | None = None) -> Any:
        """`work(driver, unit)` within `query_timeout`, or by `deadline` (a `time.monotonic()` instant, the caller's)
        when that is sooner; a driver failure or the deadline is `GraphUnavailable`.

        `unit(function)` is `function` as the transaction function to give the driver (`session.execute_read` or
        `execute_write`): with the time left as the transaction's timeout, and never run again once the call was
        abandoned, so the driver's retry ends instead of waiting again with a server that hangs.
        """
        from neo4j import unit_of_work
        from neo4j.exceptions import DriverError, Neo4jError

        wait = self.query_timeout
        ends_at = None  # the caller's deadline, when it comes before `query_timeout`
        if deadline is not None and deadline - time.monotonic() < wait:
            ends_at, wait = deadline, deadline - time.monotonic()
            if wait <= 0:
                raise GraphUnavailable(f"Neo4j at {self.uri} was not asked: the caller's time was spent")
        call = _Call()
        abandoned = threading.Event()

        def unit(function: Callable[..., Any]) -> Callable[..., Any]:
            def once_live(tx: Any, *args: Any) -> Any:
                if abandoned.is_set():
                    raise _Abandoned("the call missed its deadline")
                return function(tx, *args)

            # The server ends the transaction when the caller stops waiting (the driver sends at least 1 ms).
            left = self.query_timeout if ends_at is None else max(ends_at - time.monotonic(), 0.001)
            return unit_of_work(timeout=left)(once_live)

        def attempt() -> Any:
            try:
                return work(self._take_driver(call, abandoned), unit)
            finally:
                self._let_go(call)

        future = submit_in_thread(attempt)
        try:
            return future.result(timeout=wait)
        except TimeoutError as exc:
            if future.done():  # the work's own TimeoutError (a socket's), not the deadline
                raise self._unavailable(exc) from exc
            abandoned.set()  # before the driver is closed: its retry must find the call abandoned
            self._abandon(call)
            within = f"{wait:g} s" if ends_at is None else f"the caller's deadline ({wait:.1f} s)"
            raise GraphUnavailable(f"Neo4j at {self.uri} did not answer within {within}") from None
        except (DriverError, Neo4jError) as exc:
            raise self._unavailable(exc) from exc

    def _take_driver(self, call: _Call, abandoned: threading.Event) -> Any:
        """The store's driver for `call`, counted as live on it until `_let_go(call)`; `_Abandoned` when the caller
        gave up before the call's thread started (a busy machine), so that it neither asks the server nor, hung on
        it, keeps a swapped-out driver from being closed."""
        with self._driver_lock:
            # Checked under the lock `_abandon` takes after setting `abandoned`: a call either gets here first and
            # is swapped out with its driver, or finds itself abandoned.
            if abandoned.is_set():
                raise _Abandoned("the call missed its deadline before it started")
            call.driver = self._current_driver()
            self._live[id(call.driver)] = self._live.get(id(call.driver), 0) + 1
            return call.driver

    def _let_go(self, call: _Call) -> None:
        """`call` no longer counts on its driver (it ended, or missed its deadline; once however often asked). A
        driver swapped out after a missed deadline is closed when the last call still within its time lets go."""
        with self._driver_lock:
            driver, call.driver = call.driver, None
            if driver is None:
                return
            left = self._live.pop(id(driver)) - 1
            if left:
                self._live[id(driver)] = left
                return
            retired = self._retired.pop(id(driver), None)
        if retired is not None:
            threading.Thread(target=retired.close, name="neo4j-abandon", daemon=True).start()

    def _abandon(self, call: _Call) -> None:
        """Give up `call`, which missed its deadline; the next call makes a new driver.

        The driver has no read timeout: closing it ends the read the call waits in. It is closed once no call still
        within its time runs on it (at once when none does; else when the last of them ends), so a concurrent write
        or another question's read is not cut by this call's deadline. Meanwhile the server ends the abandoned
        transaction itself at the timeout `_bounded` sent with it. After the close the driver retries the
        transaction on a new connection, but the transaction function finds the call abandoned (`_bounded`) and
        raises, so the statement is not sent again and the thread is not held by a server that still hangs.
        Another caller's driver, made after this one was swapped out, is left alone.
        """
        with self._driver_lock:
            driver = call.driver
            if driver is None:  # the call had not reached the driver (or ended just now)
                return
            if self._driver is driver:
                self._driver = None
                self._retired[id(driver)] = driver
            # Else it was swapped out already (retired: it stays so), or `close()` closed it: not closed again, since
            # the driver's `close` is not safe to call while another is under way.
        self._let_go(call)

    def _session(self, driver: Any) -> Any:
        """A session on the store's database that chains its transactions after every earlier one of the driver (the
        bookmark manager `execute_query` shares), so a read sees the writes before it on a cluster too."""
        return driver.session(database=self.database, bookmark_manager=driver.execute_query_bookmark_manager)

    def _create_schema(self) -> None:
        """The constraints and indexes."""

        def create(driver: Any, unit: Callable[..., Any]) -> None:
            driver.verify_connectivity()
            for statement in _SCHEMA:
                with self._session(driver) as session:
                    session.execute_write(unit(lambda tx, text=statement: tx.run(text).consume()))

        try:
            # Made by the first read or write: a question's read must not wait past its deadline for it.
            self._bounded(create, question_deadline())
        except GraphUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - the driver raises many kinds; the message must stay short
            raise self._unavailable(exc) from exc

    def _run(self, tx: Any, name: str, **params: Any) -> list[Mapping[str, Any]]:
        return list(tx.run(QUERIES[name], c=self.collection, **_plain(params)))

    def _read(self, name: str, **params: Any) -> list[Mapping[str, Any]]:
        self.ensure_schema()
        parameters = {"c": self.collection, **_plain(params)}

        def read(driver: Any, unit: Callable[..., Any]) -> list[Mapping[str, Any]]:
            with self._session(driver) as session:
                return session.execute_read(unit(lambda tx: list(tx.run(QUERIES[name], parameters))))

        # A read for a guarded call (a question's branch) ends with it: see the module's docstring.
        return self._bounded(read, question_deadline())

    def exists(self) -> bool:
        """Whether a node of the collection is in the database (its constraints and indexes are the database's,
        shared by every collection, so reading a collection without a graph creates nothing of it)."""
        rows = self._read("collection_exists")
        return bool(rows and rows[0]["found"])

    def collections(self) -> list[str]:
        return sorted({row["collection"] for row in self._read("graph_collections") if row["collection"]})

    def _in_transaction(self, work: Callable[..., Any], *args: Any, connection: Any = None) -> Any:
        self.ensure_schema()

        def write(driver: Any, unit: Callable[..., Any]) -> Any:
            with self._session(driver) as session:
                return session.execute_write(unit(work), *args)

        return self._bounded(write)

    def drop(self) -> None:
        self.ensure_schema()
        text = (
            "MATCH (n) WHERE n.collection = $c AND (n:Entity OR n:Fact OR n:Alias OR n:GraphDocument) DETACH DELETE n"
        )

        def delete(driver: Any, unit: Callable[..., Any]) -> None:
            with self._session(driver) as session:
                session.execute_write(unit(lambda tx: tx.run(text, c=self.collection).consume()))

        self._bounded(delete)

    def close(self) -> None:
        """Close the driver, and any swapped out after a missed deadline that calls still ran on."""
        with self._driver_lock:
            drivers = [self._driver, *self._retired.values()]
            self._driver = None
            self._retired.clear()
        for driver in drivers:
            if driver is not None:
                driver.close()
