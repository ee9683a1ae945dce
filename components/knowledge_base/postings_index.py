"""`KeywordPostings`: exact top-k BM25 for the pgvector knowledge base that reads only the postings it needs.

Beside a collection's evidence tables, `<table>_postings` holds one row per (term, chunk) with the term's count in
the chunk and the chunk's length in terms (the analyzer's term counts, the same ones the ranker's BM25 reads), under
a B-tree on `(term, impact DESC)`: each term's postings can be read best first. `<table>_postings_totals` holds the
chunk count and their terms in all, so BM25's average length costs no scan. Both change in the transaction that
writes or deletes the chunk's evidence, so every process on the database sees one consistent index.

A question's top k is found in two steps. First each term's best postings are read to a depth (`FIRST_DEPTH`): a
chunk seen in some lists has a lower bound (what it scored there) and an upper bound (plus, per list it was not seen
in, the best any unread posting of that list can score); the candidates with the best lower bounds (those of several
lists first; four per result) get their exact score from their stored term counts, and the search stops when the
k-th exact score is at least the best any other chunk can score: an unread one (the sum of the lists' bounds) or a
candidate not completed (its upper bound). Otherwise max-score: the k-th exact score is a floor every answer
reaches, so the lists whose best scores together stay below it cannot bring a chunk in alone; every posting of the
other lists is read, and the candidates get their remaining terms from their stored counts, best first, until none
left can win. The result is exactly BM25's top k over the collection (k1 1.2, b 0.75, `components.text.bm25`, IDF
from the collection's document frequencies), ties aside.

`search` runs these steps from the client, a statement each; `<table>_postings_top(...)`, a PL/pgSQL function made
with the tables (`create_function`, from the same SQL), runs them on the server in one call and one snapshot, the
statistics read included: keyword search without filters is one statement (`top`).

`impact` orders a list: the term's saturated frequency at a fixed reference length. Bounds at the collection's real
average length follow from it (the `edge` step of `_round_sql`), so the order never needs rewriting when the
average moves.

Usage:
```python
postings = KeywordPostings(schema="public", collection="research")
with conn.transaction():
    postings.create(conn)
    postings.add(conn, ["c1"], [{"bm25": 2, "rank": 1}])
top = postings.search(conn, {"bm25": 1.3}, 10, average=2.0)  # [(chunk_id, score), ...]
top = postings.search_on_server(conn, ["bm25"], 10)  # the same, statistics read on the server
```
"""

from __future__ import annotations

from typing import Any

from haystack import logging
from psycopg import sql

from components.text import bm25

logger = logging.getLogger(__name__)

# The reference length the stored impacts are computed at; bounds stay exact at any other average
# (the `edge` step of `_round_sql`).
REFERENCE_LENGTH = 100.0
# How deep each list is read first. Most questions at 30k+ chunks go on to max-score whatever the depth (a list's
# postings of one occurrence score nearly alike), so the first read mostly finds the floor: server CPU for 40
# questions at 10k / 30k / 100k chunks was 136 / 319 / 641 ms at 64 against 178 / 412 / 756 ms at 256.
FIRST_DEPTH = 64
# Per round, the candidates with the best upper bounds, this many per result (at least MIN_COMPLETED), get their
# exact score.
COMPLETED = 4
MIN_COMPLETED = 40
# After max-score, candidates get their other terms' scores this many per result at a time (each batch is a round
# trip; a lookup costs about 20 us).
OTHERS_BATCH = 20
# A candidate's other terms read from its stored counts cost about as much as reading this many postings (index
# only); when a batch would cost more than reading the other terms' lists, those lists are read once for every
# candidate left (measured at 100k chunks, server CPU for 40 questions: 1.6 s never reading the lists, 1.4 s at 8,
# 1.1 s at 30, 1.0 s at 100 and 1.0 s always reading them).
LOOKUP_POSTINGS = 100
# One SQL expression for a posting's impact, used on insert and to find the row again on delete (same inputs, same
# float): its saturated term frequency at the reference length.
_IMPACT = (
    f"(({{tf}})::float8 / (({{tf}}) + {bm25.K1} * (1 - {bm25.B} + {bm25.B} * ({{dl}})::float8 / {REFERENCE_LENGTH})))"
    "::real"
)


# Where a new totals row's `generation` starts: a random number, so that a collection dropped and made again under
# its name never repeats a generation an in-memory copy (`keyword_memory`) of the old one was loaded at. Every write
# of postings adds one, in its transaction.
_START = "(floor(random() * 1e15))::bigint"


# How the statements below spell their parameters: psycopg's placeholders (the client-side search) or the
# variables of the server-side function (`create_function`), so that both run the same SQL.
_CLIENT = {
    "terms": "%(terms)s::text[]",
    "idf": "%(idf)s::float8[]",
    "depth": "%(depth)s",
    "limit": "%(limit)s",
    "avg": "%(avg)s::float8",
    "slack": "%(slack)s",
    "complete": "%(complete)s",
    "theta": "%(theta)s",
    "others": "%(others)s::text[]",
    "others_idf": "%(others_idf)s::float8[]",
    "ids": "%(ids)s",
}
_SERVER = {name: f"v_{name}" for name in _CLIENT}
# Bump when the function's body changes: a collection whose function has another version gets it replaced on open.
FUNCTION_VERSION = "keyword-postings-top 6"
FUNCTION_ARGUMENTS = "text[], integer, integer, integer, integer, integer"


def _impact(tf: str, dl: str) -> str:
    return _IMPACT.format(tf=tf, dl=dl)


def _weight(tf: str, dl: str, average: str) -> str:
    """SQL for BM25's saturated, length-normalised term frequency (`bm25.term_weight`), in float8 throughout. A bare
    decimal constant is `numeric` in PostgreSQL: `0.75 * dl` was a numeric product cast back to float8 for every
    posting scored."""
    k1, b = bm25.K1, bm25.B
    return (
        f"({tf})::float8 * {k1 + 1}::float8 / (({tf})::float8 + {k1}::float8 * ({1 - b}::float8 + {b}::float8 "
        f"* ({dl})::float8 / ({average})::float8))"
    )


class KeywordPostings:
    """The impact-ordered postings of one collection's chunk terms, and exact top-k BM25 over them.

    Statements run on a connection the caller gives (inside the caller's transaction), so that the postings change
    with the evidence they are built from.
    """

    def __init__(self, schema: str, collection: str) -> None:
        self.schema = schema
        self.collection = collection
        self._table = sql.Identifier(schema, collection)
        self._postings = sql.Identifier(schema, f"{collection}_postings")
        self._totals = sql.Identifier(schema, f"{collection}_postings_totals")
        self._chunk_terms = sql.Identifier(schema, f"{collection}_chunk_terms")
        self._terms = sql.Identifier(schema, f"{collection}_terms")
        self._order_index = sql.Identifier(f"{collection}_postings_order")
        self._function = sql.Identifier(schema, f"{collection}_postings_top")
        self._function_name = (schema, f"{collection}_postings_top")

    def _q(self, template: str, **more: Any) -> sql.Composed:
        return sql.SQL(template).format(
            postings=self._postings,
            totals=self._totals,
            chunk_terms=self._chunk_terms,
            terms=self._terms,
            function=self._function,
            **more,
        )

    def statement(self, template: str, **more: Any) -> sql.Composed:
        """`template` with the collection's tables filled in: `{postings}`, `{totals}`, `{chunk_terms}`, `{terms}`."""
        return self._q(template, **more)

    # -- schema -----------------------------------------------------------------------------------------------------

    def create(self, conn: Any) -> bool:
        """Create the tables if missing; when the postings are new and the collection already has term counts (made
        before this index existed), fill them from those counts. The search function (`create_function`) is created
        too, or replaced when it is another version's. True when the tables were created now."""
        exists, version, generation = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL, obj_description(to_regprocedure(%s), 'pg_proc'), "
            "EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'generation')",
            (self._postings.as_string(conn), self._signature(conn), self._totals.as_string(conn)),
        ).fetchone()
        if version != FUNCTION_VERSION:
            self.create_function(conn)
            if exists:  # a collection made by an earlier version: its function is brought up to date on open
                logger.info(
                    "Keyword search function of {collection} updated ({old} -> {new})",
                    collection=self.collection,
                    old=version or "none",
                    new=FUNCTION_VERSION,
                )
        if exists:
            if not generation:  # made before the in-memory copies (`keyword_memory`): the column they compare
                conn.execute(self._q(f"ALTER TABLE {{totals}} ADD COLUMN generation bigint NOT NULL DEFAULT {_START}"))
            return False
        conn.execute(
            self._q(
                "CREATE TABLE {postings} (term text NOT NULL, impact real NOT NULL, chunk_id text NOT NULL, "
                "tf integer NOT NULL, dl integer NOT NULL)"
            )
        )
        # INCLUDE: a list is read from the index alone.
        conn.execute(
            self._q(
                "CREATE INDEX {name} ON {postings} (term, impact DESC, chunk_id) INCLUDE (tf, dl)",
                name=self._order_index,
            )
        )
        conn.execute(
            self._q(
                "CREATE TABLE {totals} (one boolean PRIMARY KEY DEFAULT true CHECK (one), chunks bigint NOT NULL, "
                f"terms bigint NOT NULL, generation bigint NOT NULL DEFAULT {_START})"
            )
        )
        conn.execute(
            self._q(
                "INSERT INTO {totals} (chunks, terms) SELECT count(term_total), coalesce(sum(term_total), 0) "
                "FROM {chunk_terms} WHERE term_counts IS NOT NULL AND term_total > 0"
            )
        )
        conn.execute(
            self._q(
                "INSERT INTO {postings} (term, impact, chunk_id, tf, dl) "
                f"SELECT k.key, {_impact('k.value::int', 'c.term_total')}, c.chunk_id, k.value::int, c.term_total "
                "FROM {chunk_terms} c, jsonb_each_text(c.term_counts) k "
                "WHERE c.term_counts IS NOT NULL AND c.term_total > 0"
            )
        )
        return True

    def vacuum(self, conn: Any) -> None:
        """VACUUM (ANALYZE) the postings, on a connection outside any transaction (after a bulk load). Writes leave
        pages the visibility map does not mark all-visible until autovacuum comes, and it comes after a fifth of
        the table changed: until then a keyword search fetches the heap row of every posting on them (16% of the
        pages of a freshly built 100k-chunk collection, 3,000 heap fetches for one question)."""
        conn.execute(self._q("VACUUM (ANALYZE) {postings}"))

    def drop(self, conn: Any) -> None:
        conn.execute(self._q("DROP TABLE IF EXISTS {postings}, {totals}"))
        self._drop_function(conn)

    def _drop_function(self, conn: Any) -> None:
        """Drop the search function, whatever its version's arguments."""
        found = conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = %s AND p.proname = %s",
            self._function_name,
        ).fetchall()
        for (signature,) in found:
            conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}").format(sql.SQL(signature)))

    def _signature(self, conn: Any) -> str:
        return f"{self._function.as_string(conn)}({FUNCTION_ARGUMENTS})"

    def create_function(self, conn: Any) -> None:
        """(Re)create `<table>_postings_top(terms, limit, depth, complete, batch, lookup)`: `search` as one server-side
        call, the statistics read included. It runs the same statements as `search` (the cut-off's round, then
        max-score's essential lists and the other terms a batch at a time), in one snapshot, and returns
        `(chunk_id, score, place)`, best first: exactly what `search` returns for the IDFs of the collection's
        document frequencies, without a round trip per step."""
        # ROWS 10: the planner's estimate of its rows (the default, 1000, made the join with the chunk table read that
        # whole table at 10k chunks instead of looking the ten ids up).
        body = self._function_body().as_string(conn)
        self._drop_function(conn)
        conn.execute(
            self._q(
                "CREATE FUNCTION {function}(p_terms text[], p_limit integer, p_depth integer, p_complete integer, "
                "p_batch integer, p_lookup integer) RETURNS TABLE (chunk_id text, score float8, place bigint) "
                "LANGUAGE plpgsql STABLE ROWS 10 AS {body}",
                body=sql.Literal(body),
            )
        )
        conn.execute(
            self._q(
                f"COMMENT ON FUNCTION {{function}}({FUNCTION_ARGUMENTS}) IS {{version}}",
                version=sql.Literal(FUNCTION_VERSION),
            )
        )

    def _function_body(self) -> sql.Composed:
        p = _SERVER
        order = 'ORDER BY z.s DESC, z.i COLLATE "C"'  # Python's order of (-score, chunk id)
        return sql.SQL(
            f"""
#variable_conflict use_column
DECLARE
    v_n bigint; v_total bigint; v_avg float8; v_slack float8; v_terms text[]; v_idf float8[];
    v_limit integer := p_limit; v_depth integer := p_depth; v_complete integer := p_complete;
    v_found text[]; v_found_scores float8[]; v_unread float8; v_uncompleted float8; v_best_left float8;
    v_theta float8; v_rest float8; v_others text[]; v_others_idf float8[];
    v_candidates text[]; v_partials float8[]; v_count integer; v_done integer := 0; v_batch integer := p_batch;
    v_ids text[]; v_members_partial float8[]; v_ranked text[]; v_ranked_scores float8[];
    v_others_postings bigint; v_scan boolean;
BEGIN
    SELECT chunks, terms INTO v_n, v_total FROM {{totals}};
    IF v_n IS NULL OR v_n <= 0 OR v_limit <= 0 THEN RETURN; END IF;
    v_avg := v_total::float8 / v_n::float8;
    IF v_avg <= 0 THEN RETURN; END IF;
    v_slack := least(1.0::float8, {REFERENCE_LENGTH}::float8 / v_avg);
    -- BM25's IDF of each term of the question the collection holds (components.text.bm25.idf), in Python's order.
    SELECT array_agg(d.term ORDER BY d.term COLLATE "C"),
           array_agg(ln(1.0::float8 + ((v_n - least(d.df, v_n))::float8 + 0.5::float8)
                        / (least(d.df, v_n)::float8 + 0.5::float8)) ORDER BY d.term COLLATE "C")
      INTO v_terms, v_idf FROM {{terms}} d WHERE d.term = ANY(p_terms) AND d.df > 0;
    IF v_terms IS NULL THEN RETURN; END IF;

    SELECT coalesce(array_agg(x.chunk_id ORDER BY x.score DESC, x.chunk_id COLLATE "C")
                    FILTER (WHERE x.chunk_id IS NOT NULL), '{{{{}}}}'),
           coalesce(array_agg(x.score ORDER BY x.score DESC, x.chunk_id COLLATE "C")
                    FILTER (WHERE x.chunk_id IS NOT NULL), '{{{{}}}}'),
           coalesce(max(x.tau), 0), coalesce(max(x.upper), 0)
      INTO v_found, v_found_scores, v_unread, v_uncompleted
      FROM ({{round}}) AS x(chunk_id, score, tau, upper);
    v_best_left := greatest(v_unread, v_uncompleted);
    IF v_best_left <= 0 OR (cardinality(v_found) >= v_limit AND v_found_scores[v_limit] >= v_best_left) THEN
        RETURN QUERY SELECT a.i, a.s, a.n FROM unnest(v_found[1:v_limit], v_found_scores[1:v_limit])
                     WITH ORDINALITY AS a(i, s, n);
        RETURN;
    END IF;

    v_theta := CASE WHEN cardinality(v_found) >= v_limit THEN v_found_scores[v_limit] ELSE 0 END;
    SELECT x.candidates, x.partials, x.bound, x.others, x.others_idf, x.others_postings
      INTO v_candidates, v_partials, v_rest, v_others, v_others_idf, v_others_postings
      FROM ({{essential}}) AS x(candidates, partials, bound, others, others_idf, others_postings);
    v_count := coalesce(cardinality(v_candidates), 0);
    IF v_count = 0 OR v_rest IS NULL OR v_rest = 0 THEN
        RETURN QUERY SELECT a.i, a.s, a.n FROM unnest(v_candidates[1:v_limit], v_partials[1:v_limit])
                     WITH ORDINALITY AS a(i, s, n);
        RETURN;
    END IF;

    v_ranked := '{{{{}}}}'; v_ranked_scores := '{{{{}}}}';
    WHILE v_done < v_count LOOP
        v_ids := v_candidates[v_done + 1 : v_done + v_batch];
        v_scan := cardinality(v_ids) * p_lookup >= v_others_postings;
        IF v_scan THEN v_ids := v_candidates[v_done + 1 : v_count]; END IF;
        v_members_partial := v_partials[v_done + 1 : v_done + cardinality(v_ids)];
        v_done := v_done + cardinality(v_ids);
        IF v_scan THEN
            SELECT array_agg(z.i {order}), array_agg(z.s {order}) INTO v_ranked, v_ranked_scores
              FROM (SELECT a.i, a.s FROM unnest(v_ranked, v_ranked_scores) AS a(i, s)
                    UNION ALL
                    SELECT m.i, m.p + coalesce(o.extra, 0) FROM unnest(v_ids, v_members_partial) AS m(i, p)
                    LEFT JOIN ({{others_scan}}) AS o(chunk_id, extra) ON o.chunk_id = m.i) AS z;
        ELSE
            SELECT array_agg(z.i {order}), array_agg(z.s {order}) INTO v_ranked, v_ranked_scores
              FROM (SELECT a.i, a.s FROM unnest(v_ranked, v_ranked_scores) AS a(i, s)
                    UNION ALL
                    SELECT m.i, m.p + coalesce(o.extra, 0) FROM unnest(v_ids, v_members_partial) AS m(i, p)
                    LEFT JOIN ({{others}}) AS o(chunk_id, extra) ON o.chunk_id = m.i) AS z;
        END IF;
        EXIT WHEN cardinality(v_ranked) >= v_limit AND v_done < v_count
                  AND v_ranked_scores[v_limit] >= v_partials[v_done + 1] + v_rest;
        v_batch := least(v_batch, v_count) * 4;
    END LOOP;
    RETURN QUERY SELECT a.i, a.s, a.n FROM unnest(v_ranked[1:v_limit], v_ranked_scores[1:v_limit])
                 WITH ORDINALITY AS a(i, s, n);
END
"""
        ).format(
            totals=self._totals,
            terms=self._terms,
            round=self._round_sql(p),
            essential=self._essential_sql(p),
            others=self._others_sql(p),
            others_scan=self._others_scan_sql(p),
        )

    def top(self) -> sql.Composed:
        """A FROM item of the function's rows `(chunk_id, score, place)`, whose parameters are `top_params` (the
        question's analyzer terms, in any order: those no chunk holds are left out)."""
        return self._q("{function}(%s::text[], %s, %s, %s, %s, %s)")

    @staticmethod
    def top_params(terms: list[str], limit: int) -> tuple:
        """The parameters of `top`: what `search` passes for the same question and `limit`."""
        return (
            list(terms),
            limit,
            max(FIRST_DEPTH, limit),
            max(COMPLETED * limit, MIN_COMPLETED),
            max(OTHERS_BATCH * limit, MIN_COMPLETED),
            LOOKUP_POSTINGS,
        )

    def search_on_server(self, conn: Any, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """`search` as the one call of the server-side function (the collection's statistics read there)."""
        rows = conn.execute(
            sql.SQL("SELECT chunk_id, score FROM {} ORDER BY place").format(self.top()),
            self.top_params(terms, limit),
        ).fetchall()
        return [(str(chunk_id), float(score)) for chunk_id, score in rows]

    # -- writes (pipelined: nothing is read back) -------------------------------------------------------------------

    def add(self, conn: Any, chunk_ids: list[str], counts: list[dict[str, int] | None]) -> None:
        """Add the postings of these chunks (their term counts; None or no terms adds nothing) and count them in the
        totals. Call `forget` first for chunks that may already be there. A chunk counts in the totals exactly when
        its stored `term_total` is above 0, here, in `forget` and in `create` alike."""
        terms, ids, tfs, lengths = [], [], [], []
        chunks = total = 0
        for chunk_id, chunk in zip(chunk_ids, counts, strict=True):
            length = int(sum(chunk.values())) if chunk else 0
            if length <= 0:
                continue
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
        conn.execute(
            self._q("UPDATE {totals} SET chunks = chunks + %s, terms = terms + %s, generation = generation + 1"),
            (chunks, total),
        )

    def forget(self, conn: Any, chunk_ids: list[str]) -> None:
        """Remove these chunks' postings and take them out of the totals; run it before their rows in the evidence
        table go (each posting is found again from the stored term counts, by its key in the ordered index)."""
        conn.execute(
            self._q(
                "WITH o AS ("
                f"  SELECT k.key AS term, {_impact('k.value::int', 'c.term_total')} AS impact, c.chunk_id "
                "  FROM {chunk_terms} c, jsonb_each_text(c.term_counts) k "
                "  WHERE c.term_counts IS NOT NULL AND c.term_total > 0 AND c.chunk_id = ANY(%s)"
                ") DELETE FROM {postings} p USING o "
                "WHERE p.term = o.term AND p.impact = o.impact AND p.chunk_id = o.chunk_id"
            ),
            (chunk_ids,),
        )
        conn.execute(
            self._q(
                "UPDATE {totals} t SET chunks = t.chunks - g.n, terms = t.terms - g.total, "
                "generation = t.generation + 1 FROM ("
                "  SELECT count(*) AS n, coalesce(sum(term_total), 0) AS total FROM {chunk_terms} "
                "  WHERE term_counts IS NOT NULL AND term_total > 0 AND chunk_id = ANY(%s)) g"
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
        ids, partials, rest, others, others_idf, others_postings = conn.execute(self._essential, values).fetchone()
        candidates = list(zip(ids or [], partials or [], strict=True))
        if not candidates or not rest:  # no non-essential term: the essential scores are exact
            return [(str(row[0]), float(row[1])) for row in candidates[:limit]]
        rest, others_postings = float(rest), int(others_postings)
        # Best essential score first, a growing batch at a time, each chunk's other terms read from its term counts,
        # until no chunk left can beat the k-th exact score (its essential score plus the others' bests); or, when
        # that costs less, the other terms' lists read once for every candidate left.
        scored: list[tuple[str, float]] = []
        done, batch = 0, max(OTHERS_BATCH * limit, MIN_COMPLETED)
        while done < len(candidates):
            members = candidates[done : done + batch]
            scan = len(members) * LOOKUP_POSTINGS >= others_postings
            if scan:
                members = candidates[done:]
            done += len(members)
            extra = dict(
                conn.execute(
                    self._others_scan if scan else self._others,
                    {"avg": average, "others": others, "others_idf": others_idf, "ids": [row[0] for row in members]},
                )
            )
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
        return {
            "terms": terms,
            "idf": weights,
            "depth": depth,
            "limit": limit,
            "avg": average,
            "slack": min(1.0, REFERENCE_LENGTH / average),
            "complete": complete,
        }

    @property
    def _round(self) -> sql.Composed:
        return self._round_sql(_CLIENT)

    def _round_sql(self, p: dict[str, str]) -> sql.Composed:
        """One round of the cut-off at depth `depth`: the top `limit` of the `complete` candidates with the best
        upper bounds, with exact scores, and on every row the best score any other chunk can have (unread, or read
        but not completed); one row with a NULL chunk when nothing was read."""
        k1 = bm25.K1
        average = f"({p['avg']})"
        return self._q(
            f"""
            WITH q AS (SELECT * FROM unnest({p["terms"]}, {p["idf"]}) AS q(term, idf)),
            r AS (
                SELECT q.term, p.chunk_id, p.impact,
                       q.idf * {_weight("p.tf", "p.dl", average)} AS w
                FROM q CROSS JOIN LATERAL (
                    SELECT chunk_id, impact, tf, dl FROM {{postings}} WHERE term = q.term
                    ORDER BY impact DESC LIMIT {p["depth"]}) p
            ),
            edge AS (
                -- The most an unread posting of the list can score (0 once the list is read to its end): at the real
                -- average its saturated frequency is at most s / (s + slack (1 - s)) for a stored impact s.
                SELECT q.term, CASE WHEN count(r.chunk_id) < {p["depth"]} THEN 0::float8
                       ELSE q.idf * {k1 + 1} * min(r.impact) / (min(r.impact) + {p["slack"]} * (1 - min(r.impact)))
                       END AS bound
                FROM q LEFT JOIN r ON r.term = q.term GROUP BY q.term, q.idf
            ),
            tau AS (SELECT coalesce(sum(bound), 0) AS tau FROM edge),
            c AS (
                SELECT r.chunk_id, sum(r.w) AS lower, tau.tau - sum(e.bound) AS unseen
                FROM r JOIN edge e ON e.term = r.term, tau GROUP BY r.chunk_id, tau.tau
            ),
            -- Completed first: the chunks with the best scores seen (most often those of several lists), so that
            -- the k-th exact score is a high floor for max-score.
            ranked AS (
                SELECT chunk_id, lower, unseen, lower + unseen AS upper,
                       row_number() OVER (ORDER BY lower DESC, lower + unseen DESC, chunk_id COLLATE "C") AS place
                FROM c
            ),
            -- The best a chunk not completed here can score.
            rest AS (SELECT coalesce(max(upper), 0) AS upper FROM ranked WHERE place > {p["complete"]}),
            exact AS (
                SELECT c.chunk_id, CASE WHEN c.unseen <= 0 THEN c.lower ELSE (
                    SELECT coalesce(sum(q.idf * {_weight("x.tf", "s.term_total", average)}), 0)
                    FROM {{chunk_terms}} s, q, LATERAL (SELECT (s.term_counts ->> q.term)::float8 AS tf) x
                    WHERE s.chunk_id = c.chunk_id AND x.tf IS NOT NULL) END AS score
                FROM ranked c WHERE c.place <= {p["complete"]}
            ),
            top AS (SELECT chunk_id, score FROM exact ORDER BY score DESC, chunk_id COLLATE "C" LIMIT {p["limit"]})
            SELECT top.chunk_id, top.score, tau.tau, rest.upper
            FROM tau CROSS JOIN rest LEFT JOIN top ON true ORDER BY top.score DESC, top.chunk_id COLLATE "C"
            """
        )

    @property
    def _essential(self) -> sql.Composed:
        return self._essential_sql(_CLIENT)

    def _essential_sql(self, p: dict[str, str]) -> sql.Composed:
        """Max-score: the terms sorted by the best score their list can give; the cheapest ones whose bests add up
        to less than `theta` are non-essential (the others). Every posting of the essential lists is read; returned,
        in one row: the chunks whose essential score plus the others' bests reaches the floor (`theta`, or the k-th
        best essential score if higher) and their essential scores (two arrays, best first), that bound, the other
        terms, their IDFs and how many postings their lists hold."""
        k1 = bm25.K1
        average = f"({p['avg']})"
        theta = p["theta"]
        return self._q(
            f"""
            WITH q AS (
                SELECT u.term, u.idf, sum(best.bound) OVER (ORDER BY best.bound, u.term) AS cumulative
                FROM unnest({p["terms"]}, {p["idf"]}) AS u(term, idf),
                LATERAL (SELECT u.idf * {k1 + 1} * p.impact / (p.impact + {p["slack"]} * (1 - p.impact)) AS bound
                         FROM {{postings}} p WHERE p.term = u.term ORDER BY p.impact DESC LIMIT 1) best
            ),
            rest AS (SELECT coalesce(max(cumulative) FILTER (WHERE cumulative < {theta}), 0) AS bound FROM q),
            e AS (
                SELECT p.chunk_id, sum(q.idf * {_weight("p.tf", "p.dl", average)}) AS partial
                FROM q JOIN {{postings}} p ON p.term = q.term WHERE q.cumulative >= {theta} GROUP BY p.chunk_id
            ),
            -- Essential scores are part of the exact ones: their k-th best is a floor too, often a higher one.
            floor AS (SELECT greatest({theta}, (SELECT partial FROM e ORDER BY partial DESC
                                                OFFSET {p["limit"]} - 1 LIMIT 1)) AS theta),
            -- Both arrays from one sort of the kept chunks (an aggregate reads a sorted subquery in its order).
            kept AS (
                SELECT array_agg(k.chunk_id) AS candidates, array_agg(k.partial) AS partials FROM (
                    SELECT e.chunk_id, e.partial FROM e, rest, floor WHERE e.partial + rest.bound >= floor.theta
                    ORDER BY e.partial DESC, e.chunk_id COLLATE "C") k
            )
            SELECT kept.candidates, kept.partials, rest.bound,
                   (SELECT array_agg(term ORDER BY term) FROM q WHERE cumulative < {theta}) AS others,
                   (SELECT array_agg(idf ORDER BY term) FROM q WHERE cumulative < {theta}) AS others_idf,
                   (SELECT coalesce(sum(d.df), 0) FROM {{terms}} d
                    WHERE d.term IN (SELECT term FROM q WHERE cumulative < {theta})) AS others_postings
            FROM rest, kept
            """
        )

    @property
    def _others(self) -> sql.Composed:
        return self._others_sql(_CLIENT)

    @property
    def _others_scan(self) -> sql.Composed:
        return self._others_scan_sql(_CLIENT)

    def _others_scan_sql(self, p: dict[str, str]) -> sql.Composed:
        """`_others` from the given terms' postings, each list read once (the same arithmetic, so the same scores)."""
        return self._q(
            f"""
            SELECT p.chunk_id,
                   sum(q.idf * {_weight("p.tf", "p.dl", p["avg"])})
            FROM unnest({p["others"]}, {p["others_idf"]}) AS q(term, idf)
            JOIN {{postings}} p ON p.term = q.term JOIN unnest({p["ids"]}::text[]) AS m(id) ON m.id = p.chunk_id
            GROUP BY p.chunk_id
            """
        )

    def _others_sql(self, p: dict[str, str]) -> sql.Composed:
        """Per chunk of the given ids, the BM25 of the given terms read from its stored term counts."""
        return self._q(
            f"""
            SELECT s.chunk_id,
                   sum(q.idf * {_weight("x.tf", "s.term_total", p["avg"])})
            FROM unnest({p["others"]}, {p["others_idf"]}) AS q(term, idf), {{chunk_terms}} s,
                 LATERAL (SELECT (s.term_counts ->> q.term)::float8 AS tf) x
            WHERE s.chunk_id = ANY({p["ids"]}) AND x.tf IS NOT NULL GROUP BY s.chunk_id
            """
        )

    def filtered_top(self, where: sql.Composable) -> sql.Composed:
        """A statement of the `(chunk_id, score)` top k with a filter, best first, the statistics read in it: every
        posting of the terms scored (as `search` does with `where`). Its parameters: the question's analyzer terms,
        the filter's parameters, the limit."""
        return self._q(
            f"""
            WITH s AS (SELECT chunks::float8 AS n, terms::float8 / chunks::float8 AS average FROM {{totals}}
                       WHERE chunks > 0 AND terms > 0),
            d AS (SELECT d.term, ln(1.0::float8 + ((s.n - least(d.df, s.n))::float8 + 0.5::float8)
                                    / (least(d.df, s.n)::float8 + 0.5::float8)) AS idf
                  FROM {{terms}} d, s WHERE d.term = ANY(%s::text[]) AND d.df > 0)
            SELECT p.chunk_id, sum(d.idf * {_weight("p.tf", "p.dl", "s.average")})
                   AS score
            FROM d JOIN {{postings}} p ON p.term = d.term JOIN {{table}} ON {{table}}.id = p.chunk_id, s
            WHERE true {{where}}
            GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id COLLATE "C" LIMIT %s
            """,
            table=self._table,
            where=where,
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
        statement = self._q(
            f"""
            SELECT p.chunk_id, sum(q.idf * {_weight("p.tf", "p.dl", "%s::float8")})
                   AS score
            FROM unnest(%s::text[], %s::float8[]) AS q(term, idf)
            JOIN {{postings}} p ON p.term = q.term JOIN {{table}} ON {{table}}.id = p.chunk_id
            WHERE true {{where}}
            GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id COLLATE "C" LIMIT %s
            """,
            table=self._table,
            where=where,
        )
        rows = conn.execute(statement, (average, terms, weights, *params, limit)).fetchall()
        return [(str(chunk_id), float(score)) for chunk_id, score in rows]
