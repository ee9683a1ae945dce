"""`Neo4jGraphStore`: the same graph in Neo4j, through the official driver (Bolt, Cypher with parameters).

Nodes `Entity`, `Fact` and `Alias` carry a `collection` property, so one database holds several knowledge
bases' graphs; `(:Fact)-[:MENTIONS {position}]->(:Entity)` links facts to entities and
`(:Alias)-[:NAMES {document_id}]->(:Entity)` records the names a document taught. Dates are ISO text, which
orders like the dates themselves. The password is a Haystack `Secret` (by default the environment variable
`NEO4J_PASSWORD`): `to_dict` writes only the variable's name, never a value, and it is never logged. The driver
is made on first use (`warm_up` or the first query), with short timeouts, so a missing server is one sentence in
seconds rather than a minute of retries.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from typing import Any

from haystack import logging
from haystack.utils import Secret

from components.graph.dates import FuzzyDate
from components.graph.model import DocumentGraph, Entity, EntityMatch, Fact, FactHit, name_grams
from components.graph.store import (
    MAX_ENTITY_CANDIDATES,
    EntityPassageLinks,
    EntitySearchTerms,
    FactScope,
    GraphStore,
    GraphUnavailable,
    entity_merge,
    fact_entity_positions,
)

logger = logging.getLogger(__name__)

_SCHEMA = (
    "CREATE CONSTRAINT graph_entity_uuid IF NOT EXISTS FOR (e:Entity) REQUIRE (e.collection, e.uuid) IS UNIQUE",
    "CREATE CONSTRAINT graph_fact_uuid IF NOT EXISTS FOR (f:Fact) REQUIRE (f.collection, f.uuid) IS UNIQUE",
    "CREATE INDEX graph_fact_document IF NOT EXISTS FOR (f:Fact) ON (f.collection, f.document_id)",
    "CREATE INDEX graph_alias_key IF NOT EXISTS FOR (a:Alias) ON (a.collection, a.key)",
    "CREATE FULLTEXT INDEX graph_fact_text IF NOT EXISTS FOR (f:Fact) ON EACH [f.text]",
)

_FACT_RETURN = (
    "f AS fact, [(f)-[m:MENTIONS]->(x:Entity) | {uuid: x.uuid, name: x.name, key: x.key, position: m.position}] "
    "AS entities"
)
_AS_OF = " AND (f.valid_from IS NULL OR f.valid_from <= $as_of) AND (f.invalid_from IS NULL OR f.invalid_from > $as_of)"
# An entity (`e`) or alias (`a`) whose key is the search key, starts with it, shares a word with it, or has a word
# sharing the first or last three letters of a longer word of it: the same candidates as the embedded store's.
_NAMED = (
    "{v}.key = $key OR {v}.key STARTS WITH $key OR any(w IN split({v}.key, ' ') WHERE w IN $words "
    "OR (size(w) >= 4 AND (left(w, 3) IN $heads OR right(w, 3) IN $tails)))"
)
_LUCENE_SPECIAL = re.compile(r"[^A-Za-z0-9 ]+")


def _iso(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _fuzzy(value: str | None, precision: str | None) -> FuzzyDate | None:
    return FuzzyDate(dt.date.fromisoformat(value), precision or "day") if value else None


def _dated(pair: Any) -> FuzzyDate | None:
    """A `FuzzyDate` from a `[valid_from, valid_precision]` pair (None when there is none)."""
    return _fuzzy(pair[0], pair[1]) if pair else None


def record_to_fact(record: Any) -> Fact:
    """A `Fact` from a record holding `fact` (node properties) and `entities` (uuid, name, key, position)."""
    props = dict(record["fact"])
    linked = sorted(record["entities"] or [], key=lambda item: item["position"])
    return Fact(
        uuid=props["uuid"],
        text=props["text"],
        document_id=props["document_id"],
        sentence_index=int(props.get("sentence_index") or 0),
        entity_keys=[item["key"] for item in linked],
        valid_at=_fuzzy(props.get("valid_from"), props.get("valid_precision")),
        invalid_at=_fuzzy(props.get("invalid_from"), props.get("invalid_precision")),
        date_method=props.get("date_method") or "document",
        chunk_id=props.get("chunk_id"),
        chunk_index=props.get("chunk_index"),
        document_title=props.get("document_title") or "",
        document_url=props.get("document_url"),
        document_date=dt.date.fromisoformat(props["document_date"]) if props.get("document_date") else None,
        entity_names=[item["name"] for item in linked],
        entity_uuids=[item["uuid"] for item in linked],
    )


class Neo4jGraphStore(GraphStore):
    """The graph in Neo4j (a server or cluster), behind the same interface as the embedded store.

    Usage:
    ```python
    store = Neo4jGraphStore("neo4j://localhost:7687", collection="research")  # password from NEO4J_PASSWORD
    store.warm_up()
    store.entity_facts([e.uuid for e in store.find_entities("Airbus")])
    ```
    """

    in_process_parameters = ("driver",)
    backend = "neo4j"

    def __init__(
        self,
        uri: str,
        username: str = "neo4j",
        password: Secret | None = Secret.from_env_var("NEO4J_PASSWORD", strict=False),  # noqa: B008
        database: str = "neo4j",
        collection: str = "research",
        driver: Any = None,
    ) -> None:
        """
        :param uri: the Bolt URI of the server or cluster (`neo4j://host:7687`, `bolt://...`, `neo4j+s://...`).
        :param username: the user to log in as.
        :param password: the password as an env-var `Secret` (a token secret works but cannot be serialised);
            None logs in without authentication.
        :param database: the Neo4j database holding the graphs.
        :param collection: the knowledge base's collection; one database holds several collections' graphs.
        :param driver: an open `neo4j.Driver` to use instead of making one (tests; never serialised).
        """
        if not uri or not uri.strip():
            raise ValueError("uri must be a Neo4j Bolt URI such as neo4j://localhost:7687")
        if not collection or not collection.strip():
            raise ValueError("collection must be a non-empty name")
        if password is not None and not isinstance(password, Secret):
            raise ValueError("password must be a haystack Secret, e.g. Secret.from_env_var('NEO4J_PASSWORD')")
        self.uri = uri
        self.username = username
        self.password = password
        self.database = database
        self.collection = collection
        self._driver = driver
        self._ready = False
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, collection: str, settings: Any) -> Neo4jGraphStore:
        """The store the settings name (`NEO4J_URI`, `NEO4J_USERNAME`, `NEO4J_DATABASE`; the password is read
        from `NEO4J_PASSWORD` when the driver is made)."""
        if not settings.neo4j_uri:
            raise GraphUnavailable("GRAPH_BACKEND is neo4j but NEO4J_URI is not set.")
        return cls(settings.neo4j_uri, settings.neo4j_username, database=settings.neo4j_database, collection=collection)

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _resolve_password(self) -> str | None:
        """The secret's value; `NEO4J_PASSWORD` written in the settings' `.env` file counts as set."""
        if self.password is None:
            return None
        value = self.password.resolve_value()
        if value is None and "NEO4J_PASSWORD" in getattr(self.password, "_env_vars", ()):
            from components.settings import get_settings

            stored = get_settings().neo4j_password
            value = stored.get_secret_value() if stored is not None else None
        return value

    def _get_driver(self) -> Any:
        if self._driver is None:
            from neo4j import GraphDatabase

            password = self._resolve_password()
            auth = (self.username, password) if password is not None else None
            # Short budgets: a missing server must be one clear error in seconds, not a minute of retries.
            self._driver = GraphDatabase.driver(
                self.uri, auth=auth, connection_timeout=5.0, connection_acquisition_timeout=5.0,
                max_transaction_retry_time=2.0,
            )
        return self._driver

    def _create_schema(self) -> None:
        """The constraints and indexes."""
        try:
            self._get_driver().verify_connectivity()
            for statement in _SCHEMA:
                self._get_driver().execute_query(statement, database_=self.database)
        except Exception as exc:  # noqa: BLE001 - the driver raises many kinds; the message must stay short
            raise GraphUnavailable(f"Neo4j at {self.uri} cannot be used: {type(exc).__name__}") from exc

    def _read(self, query: str, **params: Any) -> list[Any]:
        from neo4j import RoutingControl

        self.ensure_schema()
        result = self._get_driver().execute_query(
            query, parameters_={"c": self.collection, **params}, database_=self.database, routing_=RoutingControl.READ
        )
        return list(result.records)

    # -- writes -------------------------------------------------------------------------------------------------

    def _delete(self, tx: Any, document_id: str) -> int:
        c = self.collection
        tx.run("MATCH (d:GraphDocument {collection: $c, document_id: $d}) DELETE d", c=c, d=document_id)
        tx.run("MATCH (:Alias {collection: $c})-[r:NAMES {document_id: $d}]->() DELETE r", c=c, d=document_id)
        record = tx.run(
            "MATCH (f:Fact {collection: $c, document_id: $d}) "
            "OPTIONAL MATCH (f)-[:MENTIONS]->(e:Entity) "
            "WITH f, collect(e.uuid) AS es DETACH DELETE f "
            "RETURN count(f) AS n, reduce(acc = [], x IN collect(es) | acc + x) AS touched",
            c=c,
            d=document_id,
        ).single()
        removed = int(record["n"]) if record else 0
        touched = sorted(set(record["touched"] or [])) if record else []
        if touched:
            tx.run(
                "MATCH (e:Entity {collection: $c}) WHERE e.uuid IN $touched AND NOT (e)<-[:MENTIONS]-(:Fact) "
                "DETACH DELETE e",
                c=c,
                touched=touched,
            )
        tx.run("MATCH (a:Alias {collection: $c}) WHERE NOT (a)-[:NAMES]->() DELETE a", c=c)
        return removed

    def _write(self, tx: Any, graph: DocumentGraph) -> None:
        c = self.collection
        self._delete(tx, graph.document_id)
        if graph.extractor:
            tx.run(
                "CREATE (:GraphDocument {collection: $c, document_id: $d, extractor: $x})",
                c=c, d=graph.document_id, x=graph.extractor,
            )
        if not graph.facts:
            return
        keys = sorted({mention.key for mention in graph.entities})
        by_alias: dict[str, str] = {}
        for record in tx.run(
            "MATCH (a:Alias {collection: $c})-[:NAMES]->(e:Entity) WHERE a.key IN $keys "
            "AND NOT EXISTS { MATCH (x:Entity {collection: $c, key: a.key}) } "
            "RETURN a.key AS key, collect(DISTINCT e.uuid) AS uuids",
            c=c,
            keys=keys,
        ):
            if len(record["uuids"]) == 1:
                by_alias[record["key"]] = record["uuids"][0]
        uuid_of, own, aliases = entity_merge(graph, by_alias)
        entities = [{"uuid": m.uuid, "key": m.key, "name": m.name, "kind": m.kind} for m in own]
        tx.run(
            "UNWIND $rows AS row MERGE (e:Entity {collection: $c, uuid: row.uuid}) "
            "ON CREATE SET e.key = row.key, e.name = row.name, e.kind = row.kind "
            "ON MATCH SET e.name = CASE WHEN size(row.name) < size(e.name) THEN row.name ELSE e.name END",
            c=c,
            rows=entities,
        )
        if aliases:
            tx.run(
                "UNWIND $rows AS row MERGE (a:Alias {collection: $c, key: row.key}) WITH a, row "
                "MATCH (e:Entity {collection: $c, uuid: row.uuid}) MERGE (a)-[:NAMES {document_id: $d}]->(e)",
                c=c,
                d=graph.document_id,
                rows=[{"key": k, "uuid": u} for k, u in aliases],
            )
        facts, links = [], []
        for fact in graph.facts:
            valid, invalid = fact.valid_at, fact.invalid_at
            facts.append(
                {
                    "uuid": fact.uuid,
                    "document_id": fact.document_id,
                    "chunk_id": fact.chunk_id,
                    "chunk_index": fact.chunk_index,
                    "sentence_index": fact.sentence_index,
                    "text": fact.text,
                    "valid_from": _iso(valid.value) if valid else None,
                    "valid_to": _iso(valid.end) if valid else None,
                    "valid_precision": valid.precision if valid else None,
                    "invalid_from": _iso(invalid.value) if invalid else None,
                    "invalid_precision": invalid.precision if invalid else None,
                    "date_method": fact.date_method,
                    "document_title": fact.document_title,
                    "document_url": fact.document_url,
                    "document_date": _iso(fact.document_date),
                }
            )
            links += [{"fact": fact.uuid, "entity": uuid, "position": position}
                      for uuid, position in fact_entity_positions(fact, uuid_of)]
        tx.run("UNWIND $rows AS row MERGE (f:Fact {collection: $c, uuid: row.uuid}) SET f += row", c=c, rows=facts)
        tx.run(
            "UNWIND $rows AS row MATCH (f:Fact {collection: $c, uuid: row.fact}) "
            "MATCH (e:Entity {collection: $c, uuid: row.entity}) "
            "MERGE (f)-[m:MENTIONS]->(e) SET m.position = row.position",
            c=c,
            rows=links,
        )

    def replace_document(self, graph: DocumentGraph, *, connection: Any = None) -> None:
        self.ensure_schema()
        with self._get_driver().session(database=self.database) as session:
            session.execute_write(self._write, graph)

    def delete_document(self, document_id: str, *, connection: Any = None) -> int:
        self.ensure_schema()
        with self._get_driver().session(database=self.database) as session:
            return int(session.execute_write(self._delete, document_id))

    # -- reads --------------------------------------------------------------------------------------------------

    def extractor_stamps(self, document_ids: list[str]) -> dict[str, str]:
        if not document_ids:
            return {}
        records = self._read(
            "MATCH (d:GraphDocument {collection: $c}) WHERE d.document_id IN $ids "
            "RETURN d.document_id AS document_id, d.extractor AS extractor",
            ids=list(document_ids),
        )
        return {r["document_id"]: r["extractor"] for r in records}

    def _entity_candidates(self, key: str) -> list[Entity]:
        records = self._read(
            "MATCH (e:Entity {collection: $c}) "
            "WHERE any(w IN split(e.key, ' ') WHERE w IN $words) "
            "OR EXISTS { MATCH (a:Alias {collection: $c, key: $key})-[:NAMES]->(e) } "
            "RETURN e.uuid AS uuid, e.name AS name, e.kind AS kind, COUNT { (e)<-[:MENTIONS]-(:Fact) } AS n, "
            "[(a:Alias)-[:NAMES]->(e) | a.key] AS aliases LIMIT $cap",
            words=key.split(),
            key=key,
            cap=MAX_ENTITY_CANDIDATES,
        )
        return [Entity(r["uuid"], r["name"], r["kind"], sorted(set(r["aliases"])), int(r["n"])) for r in records]

    def _entity_match_candidates(
        self, terms: EntitySearchTerms, kinds: list[str] | None, as_of: dt.date | None
    ) -> list[EntityMatch]:
        kind_clause = "e.kind IN $kinds AND " if kinds else ""
        fact_clause = " WHERE" + _AS_OF.removeprefix(" AND") if as_of is not None else ""
        records = self._read(
            f"MATCH (e:Entity {{collection: $c}}) WHERE {kind_clause}({_NAMED.format(v='e')} "
            f"OR EXISTS {{ MATCH (a:Alias {{collection: $c}})-[:NAMES]->(e) WHERE {_NAMED.format(v='a')} }}) "
            f"MATCH (e)<-[:MENTIONS]-(f:Fact {{collection: $c}}){fact_clause} "
            "WITH e, f ORDER BY f.valid_from "
            "WITH e, count(f) AS n, "
            "collect(CASE WHEN f.valid_from IS NOT NULL THEN [f.valid_from, f.valid_precision] END) AS dated "
            "RETURN e.uuid AS uuid, e.key AS entity_key, e.name AS name, e.kind AS kind, n, "
            "[(a:Alias)-[:NAMES]->(e) | a.key] AS aliases, dated[0] AS first_dated, dated[-1] AS last_dated "
            "ORDER BY CASE WHEN entity_key = $key THEN 0 WHEN $key IN aliases THEN 1 "
            "WHEN entity_key STARTS WITH $key THEN 2 "
            "ELSE 3 END, n DESC, name LIMIT $cap",
            key=terms.key,
            words=list(terms.words),
            heads=list(terms.heads),
            tails=list(terms.tails),
            kinds=list(kinds or []),
            as_of=_iso(as_of),
            cap=MAX_ENTITY_CANDIDATES,
        )
        return [
            EntityMatch(
                Entity(r["uuid"], r["name"], r["kind"], sorted(set(r["aliases"])), int(r["n"])),
                match="",
                score=0.0,
                matched=r["entity_key"],
                first_date=_dated(r["first_dated"]),
                last_date=_dated(r["last_dated"]),
            )
            for r in records
        ]

    def _best_entity_facts(
        self, entity_uuids: list[str], per_entity: int, as_of: dt.date | None
    ) -> list[tuple[str, Fact]]:
        records = self._read(
            "MATCH (e:Entity {collection: $c})<-[m:MENTIONS]-(f:Fact {collection: $c}) "
            f"WHERE e.uuid IN $uuids{_AS_OF if as_of is not None else ''} "
            "WITH e, f, m.position = 0 AS about, EXISTS { MATCH (f)-[:MENTIONS]->(o:Entity) WHERE o <> e } AS linking "
            "ORDER BY e.uuid, about DESC, linking DESC, f.valid_from IS NULL, f.valid_from DESC, "
            "f.document_date IS NULL, f.document_date DESC, f.document_id, f.sentence_index "
            "WITH e, collect(f)[..$per] AS best UNWIND best AS f "
            f"RETURN e.uuid AS for_entity, {_FACT_RETURN}",
            uuids=list(entity_uuids),
            per=per_entity,
            as_of=_iso(as_of),
        )
        return [(record["for_entity"], record_to_fact(record)) for record in records]

    def document_entities(self, document_id: str, limit: int = 200) -> list[Entity]:
        records = self._read(
            "MATCH (f:Fact {collection: $c, document_id: $d})-[:MENTIONS]->(e:Entity) "
            "RETURN e.uuid AS uuid, e.name AS name, e.kind AS kind, count(f) AS n ORDER BY n DESC, name LIMIT $limit",
            d=document_id,
            limit=max(1, min(int(limit), 1000)),
        )
        return [Entity(r["uuid"], r["name"], r["kind"], [], int(r["n"])) for r in records]

    def search_facts(
        self, query: str, limit: int = 10, as_of: dt.date | None = None, scope: FactScope | None = None
    ) -> list[FactHit]:
        grams = name_grams(query)
        as_of_clause = _AS_OF if as_of is not None else ""
        scope = scope or FactScope()
        if scope.document_ids:
            as_of_clause += " AND f.document_id IN $document_ids"
        if scope.date_from:
            as_of_clause += " AND f.document_date >= $date_from"
        if scope.date_to:
            as_of_clause += " AND f.document_date <= $date_to"
        params = {
            "document_ids": list(scope.document_ids),
            "date_from": _iso(scope.date_from),
            "date_to": _iso(scope.date_to),
            "limit": limit,
            "as_of": _iso(as_of),
        }
        hits: dict[str, FactHit] = {}
        if grams:
            for record in self._read(
                "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity {collection: $c}) "
                "WHERE (e.key IN $grams "
                "OR EXISTS { MATCH (a:Alias {collection: $c})-[:NAMES]->(e) WHERE a.key IN $grams })"
                f"{as_of_clause} WITH DISTINCT f RETURN {_FACT_RETURN} ORDER BY f.valid_from DESC LIMIT $limit",
                grams=grams,
                **params,
            ):
                fact = record_to_fact(record)
                hits[fact.uuid] = FactHit(fact, 0.5)
        text = " ".join(_LUCENE_SPECIAL.sub(" ", query).split())
        if text:
            for record in self._read(
                "CALL db.index.fulltext.queryNodes('graph_fact_text', $text) YIELD node AS f, score "
                f"WHERE f.collection = $c{as_of_clause} RETURN {_FACT_RETURN}, score ORDER BY score DESC LIMIT $limit",
                text=text,
                **params,
            ):
                fact = record_to_fact(record)
                rank = float(record["score"] or 0.0)
                base = hits[fact.uuid].score if fact.uuid in hits else 0.0
                hits[fact.uuid] = FactHit(fact, round(min(1.0, base + 0.5 * rank / (rank + 1.0)), 6))
        return sorted(hits.values(), key=lambda hit: -hit.score)[:limit]

    def _entity_facts(
        self, entity_uuids: list[str], start: dt.date | None, end: dt.date | None, as_of: dt.date | None, limit: int
    ) -> list[FactHit]:
        where = ""
        if start is not None:
            where += " AND f.valid_to >= $start"
        if end is not None:
            where += " AND f.valid_from <= $end"
        if as_of is not None:
            where += _AS_OF
        records = self._read(
            "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity {collection: $c}) WHERE e.uuid IN $uuids"
            f"{where} WITH DISTINCT f RETURN {_FACT_RETURN} "
            "ORDER BY f.valid_from IS NULL, f.valid_from, f.document_date, f.document_id, f.sentence_index "
            "LIMIT $limit",
            uuids=list(entity_uuids),
            start=_iso(start),
            end=_iso(end),
            as_of=_iso(as_of),
            limit=limit,
        )
        return [FactHit(record_to_fact(record), 1.0) for record in records]

    def related_facts(
        self, entity_uuid: str, depth: int = 2, limit: int = 50, as_of: dt.date | None = None
    ) -> list[FactHit]:
        # Breadth first, one query per hop: the same walk as the embedded store's recursive query.
        seen_entities = {entity_uuid}
        frontier = [entity_uuid]
        found: dict[str, FactHit] = {}
        as_of_clause = _AS_OF if as_of is not None else ""
        for hop in range(1, depth + 1):
            if not frontier or len(found) >= limit:
                break
            records = self._read(
                "MATCH (e:Entity {collection: $c})<-[:MENTIONS]-(f:Fact {collection: $c})-[:MENTIONS]->(o:Entity) "
                f"WHERE e.uuid IN $frontier AND o.uuid <> e.uuid{as_of_clause} "
                f"WITH DISTINCT f RETURN {_FACT_RETURN} ORDER BY f.valid_from LIMIT $cap",
                frontier=frontier,
                as_of=_iso(as_of),
                cap=limit * 4,
            )
            next_frontier: list[str] = []
            for record in records:
                fact = record_to_fact(record)
                if fact.uuid not in found:
                    found[fact.uuid] = FactHit(fact, round(1.0 / hop, 6), hop=hop)
                for uuid in fact.entity_uuids:
                    if uuid not in seen_entities:
                        seen_entities.add(uuid)
                        next_frontier.append(uuid)
            frontier = next_frontier
        hits = sorted(found.values(), key=lambda h: (h.hop, h.fact.valid_at.value if h.fact.valid_at else dt.date.max))
        return hits[:limit]

    def _known_names(self, keys: list[str]) -> set[str]:
        records = self._read(
            "MATCH (e:Entity {collection: $c}) WHERE e.key IN $keys RETURN e.key AS key "
            "UNION MATCH (a:Alias {collection: $c}) WHERE a.key IN $keys RETURN a.key AS key",
            keys=keys,
        )
        return {record["key"] for record in records}

    def entity_passage_links(self) -> EntityPassageLinks:
        records = self._read(
            "MATCH (f:Fact {collection: $c})-[:MENTIONS]->(e:Entity) "
            "RETURN true AS link, e.uuid AS entity, f.chunk_id AS passage, f.document_id AS document, count(*) AS n "
            "UNION ALL MATCH (e:Entity {collection: $c}) "
            "RETURN false AS link, e.uuid AS entity, e.key AS passage, null AS document, 0 AS n "
            "UNION ALL MATCH (a:Alias {collection: $c})-[:NAMES]->(e:Entity) "
            "RETURN false AS link, e.uuid AS entity, a.key AS passage, null AS document, 0 AS n"
        )
        links = tuple((r["entity"], r["passage"], r["document"], int(r["n"])) for r in records if r["link"])
        names = tuple((r["passage"], r["entity"]) for r in records if not r["link"])
        return EntityPassageLinks(links=links, names=names)

    def document_fact_count(self, document_id: str) -> int:
        records = self._read("MATCH (f:Fact {collection: $c, document_id: $d}) RETURN count(f) AS n", d=document_id)
        return int(records[0]["n"]) if records else 0

    def counts(self) -> dict[str, int]:
        records = self._read(
            "RETURN COUNT { (:Entity {collection: $c}) } AS entities, COUNT { (:Fact {collection: $c}) } AS facts, "
            "COUNT { (:Alias {collection: $c})-[:NAMES]->() } AS aliases"
        )
        return {key: int(records[0][key]) for key in ("entities", "facts", "aliases")}

    def drop(self) -> None:
        self.ensure_schema()
        self._get_driver().execute_query(
            "MATCH (n) WHERE n.collection = $c AND (n:Entity OR n:Fact OR n:Alias OR n:GraphDocument) DETACH DELETE n",
            parameters_={"c": self.collection},
            database_=self.database,
        )

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
