"""`KeywordPostings`: exact top-k BM25 for the pgvector knowledge base that reads only the postings it needs.

Beside a collection's evidence tables, `<table>_postings` holds one row per (term, chunk) with the term's count in
the chunk and the chunk's length in terms (the analyzer's term counts, the same ones the ranker's BM25 reads), under
a B-tree on `(term, impact DESC)`: each term's postings can be read best first. `<table>_postings_totals` holds the
chunk count and their terms in all, so BM25's average length costs no scan. Both change in the transaction that
writes or deletes the chunk's evidence, so every process on the database sees one consistent index.

A question's top k is found by reading each term's best postings to a depth m (64 first, then four times deeper):
a chunk seen in some lists has a lower bound (what it scored there) and an upper bound (plus, per list it was not
seen in, the best any unread posting of that list can score); the candidates with the best upper bounds (four per
result) get their exact score from their stored term counts, and the search stops when the k-th exact score is at
least the best any other chunk can score: an unread one (the sum of the lists' bounds) or a candidate not completed
(its upper bound). The result is exactly BM25's top k over
the collection (k1 1.2, b 0.75, `components.text.bm25`, IDF from the collection's document frequencies), ties aside.

`impact` orders a list: the term's saturated frequency at a fixed reference length. Bounds at the collection's real
average length follow from it (see `_bound`), so the order never needs rewriting when the average moves.

Usage:
```python
postings = KeywordPostings(schema="public", collection="research")
with conn.transaction():
    postings.create(conn)
    postings.add(conn, ["c1"], [{"bm25": 2, "rank": 1}])
top = postings.search(conn, {"bm25": 1.3}, 10)  # [(chunk_id, score), ...]
```
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from components.text import bm25

# The reference length the stored impacts are computed at; bounds stay exact at any other average (see `_bound`).
REFERENCE_LENGTH = 100.0
FIRST_DEPTH = 256
# Per round, the candidates with the best upper bounds, this many per result (at least MIN_COMPLETED), get their
# exact score.
COMPLETED = 4
MIN_COMPLETED = 40
# After max-score, candidates get their other terms' scores this many per result at a time (each batch is a round
# trip; a lookup costs about 20 us).
OTHERS_BATCH = 20
# One SQL expression for a posting's impact, used on insert and to find the row again on delete (same inputs, same
# float): its saturated term frequency at the reference length.
_IMPACT = (
    f"(({{tf}})::float8 / (({{tf}}) + {bm25.K1} * (1 - {bm25.B} + {bm25.B} * ({{dl}})::float8 / {REFERENCE_LENGTH})))"
    "::real"
)


def _impact(tf: str, dl: str) -> str:
    return _IMPACT.format(tf=tf, dl=dl)


class KeywordPostings:
    """The impact-ordered postings of one collection's chunk terms, and exact top-k BM25 over them.

    Statements run on a connection the caller gives (inside the caller's transaction), so that the postings change
    with the evidence they are built from.
    """

    def __init__(self, schema: str, collection: str) -> None:
        self.collection = collection
        self._table = sql.Identifier(schema, collection)
        self._postings = sql.Identifier(schema, f"{collection}_postings")
        self._totals = sql.Identifier(schema, f"{collection}_postings_totals")
        self._chunk_terms = sql.Identifier(schema, f"{collection}_chunk_terms")
        self._order_index = sql.Identifier(f"{collection}_postings_order")

    def _q(self, template: str, **more: Any) -> sql.Composed:
        return sql.SQL(template).format(
            postings=self._postings, totals=self._totals, chunk_terms=self._chunk_terms, **more
        )

    # -- schema -----------------------------------------------------------------------------------------------------

    def create(self, conn: Any) -> bool:
        """Create the tables if missing; when the postings are new and the collection already has term counts (made
        before this index existed), fill them from those counts. True when they were created now."""
        exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (self._postings.as_string(conn),)).fetchone()[0]
        if exists:
            return False
        conn.execute(
            self._q(
                "CREATE TABLE {postings} (term text NOT NULL, impact real NOT NULL, chunk_id text NOT NULL, "
                "tf integer NOT NULL, dl integer NOT NULL)"
            )
        )
        # INCLUDE: a list is read from the index alone.
        conn.execute(
            self._q("CREATE INDEX {name} ON {postings} (term, impact DESC, chunk_id) INCLUDE (tf, dl)",
                    name=self._order_index)
        )
        conn.execute(
            self._q(
                "CREATE TABLE {totals} (one boolean PRIMARY KEY DEFAULT true CHECK (one), chunks bigint NOT NULL, "
                "terms bigint NOT NULL)"
            )
        )
        conn.execute(
            self._q(
                "INSERT INTO {totals} (chunks, terms) SELECT count(term_total), coalesce(sum(term_total), 0) "
                "FROM {chunk_terms} WHERE term_counts IS NOT NULL"
            )
        )
        conn.execute(
            self._q(
                "INSERT INTO {postings} (term, impact, chunk_id, tf, dl) "
                f"SELECT k.key, {_impact('k.value::int', 'c.term_total')}, c.chunk_id, k.value::int, c.term_total "
                "FROM {chunk_terms} c, jsonb_each_text(c.term_counts) k WHERE c.term_counts IS NOT NULL"
            )
        )
        return True

    def drop(self, conn: Any) -> None:
        conn.execute(self._q("DROP TABLE IF EXISTS {postings}, {totals}"))

    # -- writes (pipelined: nothing is read back) -------------------------------------------------------------------

    def add(self, conn: Any, chunk_ids: list[str], counts: list[dict[str, int] | None]) -> None:
        """Add the postings of these chunks (their term counts; None adds nothing) and count them in the totals.
        Call `forget` first for chunks that may already be there."""
        terms, ids, tfs, lengths = [], [], [], []
        chunks = total = 0
        for chunk_id, chunk in zip(chunk_ids, counts, strict=True):
            if not chunk:
                continue
            length = int(sum(chunk.values()))
            chunks += 1
            total += length
            for term, tf in chunk.items():
                terms.append(str(term))
                ids.append(str(chunk_id))
                tfs.append(int(tf))
                lengths.append(length)
        if not chunks:
            return
        conn.execute(
            self._q(
                "INSERT INTO {postings} (term, impact, chunk_id, tf, dl) "
                f"SELECT u.term, {_impact('u.tf', 'u.dl')}, u.id, u.tf, u.dl "
                "FROM unnest(%s::text[], %s::text[], %s::integer[], %s::integer[]) AS u(term, id, tf, dl)"
            ),
            (terms, ids, tfs, lengths),
        )
        conn.execute(self._q("UPDATE {totals} SET chunks = chunks + %s, terms = terms + %s"), (chunks, total))

    def forget(self, conn: Any, chunk_ids: list[str]) -> None:
        """Remove these chunks' postings and take them out of the totals; run it before their rows in the evidence
        table go (each posting is found again from the stored term counts, by its key in the ordered index)."""
        conn.execute(
            self._q(
                "WITH o AS ("
                f"  SELECT k.key AS term, {_impact('k.value::int', 'c.term_total')} AS impact, c.chunk_id "
                "  FROM {chunk_terms} c, jsonb_each_text(c.term_counts) k "
                "  WHERE c.term_counts IS NOT NULL AND c.chunk_id = ANY(%s)"
                ") DELETE FROM {postings} p USING o "
                "WHERE p.term = o.term AND p.impact = o.impact AND p.chunk_id = o.chunk_id"
            ),
            (chunk_ids,),
        )
        conn.execute(
            self._q(
                "UPDATE {totals} t SET chunks = t.chunks - g.n, terms = t.terms - g.total FROM ("
                "  SELECT count(*) AS n, coalesce(sum(term_total), 0) AS total FROM {chunk_terms} "
                "  WHERE term_counts IS NOT NULL AND chunk_id = ANY(%s)) g"
            ),
            (chunk_ids,),
        )

    # -- reads ------------------------------------------------------------------------------------------------------

    @property
    def totals_table(self) -> sql.Identifier:
        """The one-row table of the chunk count (`chunks`) and their terms in all (`terms`)."""
        return self._totals

    def search(
        self,
        conn: Any,
        idf: dict[str, float],
        limit: int,
        average: float,
        where: sql.Composable | None = None,
        params: tuple = (),
    ) -> list[tuple[str, float]]:
        """The `limit` best chunks by BM25 over the terms of `idf` (term -> its IDF), `(chunk_id, score)` best first
        (ties by chunk id). `average` is the collection's average length. With `where` (`AND ...` on the chunk
        table's columns, whose parameters are `params`) every posting of the terms is scored: a filter can leave any
        chunk as the best, so the cut-off does not apply; the cost still follows the terms' postings."""
        terms = [term for term, value in idf.items() if value > 0]
        if not terms or limit <= 0 or average <= 0:
            return []
        weights = [float(idf[term]) for term in terms]
        if where is not None:
            return self._score_all(conn, terms, weights, limit, average, where, params)
        values = self._round_values(
            terms, weights, max(FIRST_DEPTH, limit), limit, average, max(COMPLETED * limit, MIN_COMPLETED)
        )
        rows = conn.execute(self._round, values).fetchall()
        unread, uncompleted = (float(rows[0][2]), float(rows[0][3])) if rows else (0.0, 0.0)
        found = [(str(chunk_id), float(score)) for chunk_id, score, _, _ in rows if chunk_id is not None]
        best_left = max(unread, uncompleted)
        if best_left <= 0 or (len(found) >= limit and found[limit - 1][1] >= best_left):
            return found[:limit]
        # Not settled by the best postings: the k-th score found is a floor every answer reaches, so the lists
        # whose best scores together stay below it cannot bring a chunk in on their own.
        values["theta"] = found[limit - 1][1] if len(found) >= limit else 0.0
        candidates = conn.execute(self._essential, values).fetchall()
        if not candidates or not candidates[0][2]:  # no non-essential term: the essential scores are exact
            return [(str(row[0]), float(row[1])) for row in candidates[:limit]]
        rest, others, others_idf = float(candidates[0][2]), candidates[0][3], candidates[0][4]
        # Best essential score first, a growing batch at a time, each chunk's other terms read from its term counts,
        # until no chunk left can beat the k-th exact score (its essential score plus the others' bests).
        scored: list[tuple[str, float]] = []
        done, batch = 0, max(OTHERS_BATCH * limit, MIN_COMPLETED)
        while done < len(candidates):
            members = candidates[done : done + batch]
            done += len(members)
            extra = dict(conn.execute(self._others, (average, others, others_idf, [row[0] for row in members])))
            scored.extend((str(row[0]), float(row[1]) + float(extra.get(row[0]) or 0.0)) for row in members)
            scored.sort(key=lambda item: (-item[1], item[0]))
            if len(scored) >= limit and done < len(candidates) and scored[limit - 1][1] >= candidates[done][1] + rest:
                break
            batch *= 4
        return scored[:limit]

    @staticmethod
    def _round_values(
        terms: list[str], weights: list[float], depth: int, limit: int, average: float, complete: int
    ) -> dict:
        return {"terms": terms, "idf": weights, "depth": depth, "limit": limit, "avg": average,
                "slack": min(1.0, REFERENCE_LENGTH / average), "complete": complete}

    @property
    def _round(self) -> sql.Composed:
        """One round of the cut-off at depth `depth`: the top `limit` of the `complete` candidates with the best
        upper bounds, with exact scores, and on every row the best score any other chunk can have (unread, or read
        but not completed); one row with a NULL chunk when nothing was read."""
        k1, b = bm25.K1, bm25.B
        average = "(%(avg)s::float8)"
        return self._q(
            f"""
            WITH q AS (SELECT * FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)),
            r AS (
                SELECT q.term, p.chunk_id, p.impact,
                       q.idf * p.tf * {k1 + 1} / (p.tf + {k1} * (1 - {b} + {b} * p.dl / {average})) AS w
                FROM q CROSS JOIN LATERAL (
                    SELECT chunk_id, impact, tf, dl FROM {{postings}} WHERE term = q.term
                    ORDER BY impact DESC LIMIT %(depth)s) p
            ),
            edge AS (
                -- The most an unread posting of the list can score (0 once the list is read to its end): at the real
                -- average its saturated frequency is at most s / (s + slack (1 - s)) for a stored impact s.
                SELECT q.term, CASE WHEN count(r.chunk_id) < %(depth)s THEN 0::float8
                       ELSE q.idf * {k1 + 1} * min(r.impact) / (min(r.impact) + %(slack)s * (1 - min(r.impact)))
                       END AS bound
                FROM q LEFT JOIN r ON r.term = q.term GROUP BY q.term, q.idf
            ),
            tau AS (SELECT coalesce(sum(bound), 0) AS tau FROM edge),
            c AS (
                SELECT r.chunk_id, sum(r.w) AS lower, tau.tau - sum(e.bound) AS unseen
                FROM r JOIN edge e ON e.term = r.term, tau GROUP BY r.chunk_id, tau.tau
            ),
            ranked AS (
                SELECT chunk_id, lower, unseen, lower + unseen AS upper,
                       row_number() OVER (ORDER BY lower + unseen DESC, chunk_id) AS place
                FROM c ORDER BY upper DESC, chunk_id LIMIT %(complete)s + 1
            ),
            -- The best a chunk not completed here can score.
            rest AS (SELECT coalesce((SELECT upper FROM ranked WHERE place > %(complete)s), 0) AS upper),
            exact AS (
                SELECT c.chunk_id, CASE WHEN c.unseen <= 0 THEN c.lower ELSE (
                    SELECT coalesce(sum(q.idf * x.tf * {k1 + 1} / (x.tf + {k1} * (1 - {b} + {b} * s.term_total
                                                                                     / {average}))), 0)
                    FROM {{chunk_terms}} s, q, LATERAL (SELECT (s.term_counts ->> q.term)::float8 AS tf) x
                    WHERE s.chunk_id = c.chunk_id AND x.tf IS NOT NULL) END AS score
                FROM ranked c WHERE c.place <= %(complete)s
            ),
            top AS (SELECT chunk_id, score FROM exact ORDER BY score DESC, chunk_id LIMIT %(limit)s)
            SELECT top.chunk_id, top.score, tau.tau, rest.upper
            FROM tau CROSS JOIN rest LEFT JOIN top ON true ORDER BY top.score DESC, top.chunk_id
            """
        )

    @property
    def _essential(self) -> sql.Composed:
        """Max-score: the terms sorted by the best score their list can give; the cheapest ones whose bests add up
        to less than `theta` are non-essential (the others). Every posting of the essential lists is read; returned
        are the chunks whose essential score plus the others' bests reaches the floor (`theta`, or the k-th best
        essential score if higher), best essential score first, with that bound and the other terms and IDFs."""
        k1, b = bm25.K1, bm25.B
        average = "(%(avg)s::float8)"
        weight = f"{k1 + 1} / ({{tf}} + {k1} * (1 - {b} + {b} * {{dl}} / {average}))"
        return self._q(
            f"""
            WITH q AS (
                SELECT u.term, u.idf, sum(best.bound) OVER (ORDER BY best.bound, u.term) AS cumulative
                FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS u(term, idf),
                LATERAL (SELECT u.idf * {k1 + 1} * p.impact / (p.impact + %(slack)s * (1 - p.impact)) AS bound
                         FROM {{postings}} p WHERE p.term = u.term ORDER BY p.impact DESC LIMIT 1) best
            ),
            rest AS (SELECT coalesce(max(cumulative) FILTER (WHERE cumulative < %(theta)s), 0) AS bound FROM q),
            e AS (
                SELECT p.chunk_id, sum(q.idf * p.tf * {weight.format(tf="p.tf", dl="p.dl")}) AS partial
                FROM q JOIN {{postings}} p ON p.term = q.term WHERE q.cumulative >= %(theta)s GROUP BY p.chunk_id
            ),
            -- Essential scores are part of the exact ones: their k-th best is a floor too, often a higher one.
            floor AS (SELECT greatest(%(theta)s, (SELECT partial FROM e ORDER BY partial DESC
                                                  OFFSET %(limit)s - 1 LIMIT 1)) AS theta)
            SELECT e.chunk_id, e.partial, rest.bound,
                   (SELECT array_agg(term ORDER BY term) FROM q WHERE cumulative < %(theta)s) AS others,
                   (SELECT array_agg(idf ORDER BY term) FROM q WHERE cumulative < %(theta)s) AS others_idf
            FROM e, rest, floor WHERE e.partial + rest.bound >= floor.theta
            ORDER BY e.partial DESC, e.chunk_id
            """
        )

    @property
    def _others(self) -> sql.Composed:
        """Per chunk of the given ids, the BM25 of the given terms read from its stored term counts."""
        k1, b = bm25.K1, bm25.B
        return self._q(
            f"""
            SELECT s.chunk_id,
                   sum(q.idf * x.tf * {k1 + 1} / (x.tf + {k1} * (1 - {b} + {b} * s.term_total / %s::float8)))
            FROM unnest(%s::text[], %s::float8[]) AS q(term, idf), {{chunk_terms}} s,
                 LATERAL (SELECT (s.term_counts ->> q.term)::float8 AS tf) x
            WHERE s.chunk_id = ANY(%s) AND x.tf IS NOT NULL GROUP BY s.chunk_id
            """
        )

    def _score_all(
        self,
        conn: Any,
        terms: list[str],
        weights: list[float],
        limit: int,
        average: float,
        where: sql.Composable,
        params: tuple,
    ) -> list[tuple[str, float]]:
        k1, b = bm25.K1, bm25.B
        statement = self._q(
            f"""
            SELECT p.chunk_id, sum(q.idf * p.tf * {k1 + 1} / (p.tf + {k1} * (1 - {b} + {b} * p.dl / %s::float8)))
                   AS score
            FROM unnest(%s::text[], %s::float8[]) AS q(term, idf)
            JOIN {{postings}} p ON p.term = q.term JOIN {{table}} ON {{table}}.id = p.chunk_id
            WHERE true {{where}}
            GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s
            """,
            table=self._table,
            where=where,
        )
        rows = conn.execute(statement, (average, terms, weights, *params, limit)).fetchall()
        return [(str(chunk_id), float(score)) for chunk_id, score in rows]
