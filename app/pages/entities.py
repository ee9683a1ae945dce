"""Entities: find an entity, see how it is connected, and read its dated facts on a timeline."""

from __future__ import annotations

import datetime as dt

import altair as alt
import streamlit as st

from app import services
from app.document_text import plain, show_text
from components.generation.conflict_finder import timeline_conflicts
from components.graph.event_confidence import default_threshold
from components.text.dates import iso_date

services.session_state()
st.title("Entities")

try:
    tools = services.graph_tools()
    counts = tools.store.counts()
except Exception as exc:  # noqa: BLE001
    st.error(f"The knowledge graph cannot be opened: {plain(services.friendly_error(exc))}")
    st.stop()

if not counts.get("entities"):
    st.info(
        "The knowledge graph is empty. Entities and dated facts are extracted when documents are ingested: "
        "add some on the Ingest page or run `research ingest PATH`."
    )
    st.stop()

query = st.text_input(
    "Find an entity",
    value=st.session_state.get("entity_focus", ""),
    placeholder="e.g. PostgreSQL, Andrew Kane, Snowflake",
)
if not query.strip():
    st.caption(f"{counts.get('entities', 0)} entities and {counts.get('facts', 0)} dated facts in the graph.")
    st.stop()
try:
    # The same ranked search as the `entity_search` pipeline and endpoint.
    matches = [match.entity for match in tools.entity_matches(query, limit=25)]
except ValueError as exc:
    st.error(plain(str(exc)))
    st.stop()
if not matches:
    st.warning(f"No entity matches “{query}”.")
    st.stop()

labels = {entity.uuid: f"{plain(entity.name)} · {entity.kind} · {entity.fact_count} facts" for entity in matches}
chosen_uuid = st.radio(
    "Matches", options=list(labels), format_func=labels.get, horizontal=False, label_visibility="collapsed"
)
entity = next(entity for entity in matches if entity.uuid == chosen_uuid)
st.subheader(plain(entity.name))
notes = tools.store.entity_notes(entity.uuid)
kind_line = f"Kind: **{entity.kind}**, confidence {notes['confidence']:.2f}"
if entity.kind == "other" and notes["evidence"]:
    kind_line += " (the evidence is weak or disagrees)"
st.markdown(kind_line)
if notes["evidence"]:
    st.caption("Evidence: " + plain(notes["evidence"]))
if entity.aliases:
    st.caption("Also known as: " + ", ".join(plain(alias) for alias in entity.aliases[:12]))
merged = [note for note in notes["merged"] if note["reason"]]
if merged:
    with st.expander(f"Why these names are one entity ({len(merged)})"):
        for note in dict((note["alias"], note) for note in merged).values():
            st.markdown(f"- **{plain(note['alias'])}**: {plain(note['reason'])}")

timeline_tab, network_tab = st.tabs(["Timeline", "Relationships"])


def _parse(value: str | None) -> dt.date | None:
    """The first day of an ISO date of any precision (YYYY, YYYY-MM, YYYY-MM-DD)."""
    found = iso_date(value or "")
    return found[0] if found else None


threshold = default_threshold()

with timeline_tab:
    left, right = st.columns(2)
    start = left.date_input("From", value=None, min_value=dt.date(1800, 1, 1), key="timeline_from")
    end = right.date_input("To", value=None, min_value=dt.date(1800, 1, 1), key="timeline_to")
    try:
        _, hits = tools.timeline_hits(
            entity.name, start.isoformat() if start else None, end.isoformat() if end else None
        )
    except ValueError as exc:
        st.error(plain(str(exc)))
        hits = []
    # Facts whose event confidence is below the fitted threshold are listed apart, not drawn as events.
    certain, unsure = tools.split_certain(hits)
    facts = [hit.fact.contract() for hit in certain]
    less_certain = [hit.fact.contract() for hit in unsure]
    # Facts that date the same event differently in different documents are a disagreement, not two events.
    disputed: dict[int, str] = {}
    for conflict in timeline_conflicts(facts, entity.name):
        sides = "; ".join(
            f"**{plain(side['value'])}** (fact {', '.join(str(n) for n in side['citations'])})"
            for side in conflict["values"]
        )
        st.warning(f"Sources disagree on the date it was {plain(conflict['attribute'])}: {sides}")
        disputed.update({n: conflict["attribute"] for side in conflict["values"] for n in side["citations"]})
    # A fact is drawn where its sentence dates it; one whose only date is its document's is listed apart.
    dated = [fact for fact in facts if not fact.get("undated") and _parse(fact["valid_at"])]
    undated = [fact for fact in facts if fact not in dated]

    def _certainty(fact: dict) -> tuple[str, str]:
        """How sure the extractor is that the fact is an event of the entity at its date, in words and as a
        coloured badge (the confidence itself is a probability an analyst need not read)."""
        confidence = fact.get("confidence")
        if confidence is None:
            return "not scored", ""
        if confidence >= max(0.8, threshold):
            return "sure event", ":green-badge[sure event]"
        if confidence >= threshold:
            return "likely event", ":blue-badge[likely event]"
        return "less certain", ":orange-badge[less certain]"

    def _source(fact: dict) -> str:
        """The fact's document by title, linked when it has an address."""
        title = plain(fact.get("document_title") or "untitled document")
        url = fact.get("document_url")
        if not url or not str(url).startswith(("http://", "https://")):
            return title
        target = str(url).replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        return f"[{title}]({target})"

    positions = {id(fact): number for number, fact in enumerate(facts, start=1)}

    if not facts and not less_certain:
        st.info("No facts in this range.")
    if dated:
        rows = []
        for fact in dated:
            begin = _parse(fact["valid_at"])
            rows.append(
                {
                    "date": begin.isoformat(),
                    "until": (_parse(fact["invalid_at"]) or begin).isoformat(),
                    "precision": fact["valid_at"],
                    "fact": fact["fact"],
                    "document": fact.get("document_title") or "untitled document",
                    "certainty": _certainty(fact)[0],
                    "confidence": fact.get("confidence") if fact.get("confidence") is not None else 1.0,
                }
            )
        base = alt.Chart(alt.Data(values=rows))
        spans = base.mark_rule(strokeWidth=3, opacity=0.5).encode(
            x=alt.X("date:T", title=None), x2="until:T", y=alt.Y("document:N", title=None)
        )
        points = base.mark_circle(size=90).encode(
            x="date:T",
            y="document:N",
            color=alt.Color("document:N", legend=None),
            # The surer the event, the more solid its dot.
            opacity=alt.Opacity("confidence:Q", scale=alt.Scale(domain=[0, 1], range=[0.35, 1]), legend=None),
            tooltip=["precision:N", "fact:N", "document:N", "certainty:N"],
        )
        st.altair_chart(
            (spans + points).properties(height=max(160, 28 * len({r["document"] for r in rows}))),
            use_container_width=True,
        )
        for fact in dated:
            position = positions[id(fact)]
            with st.container(border=True):
                when = fact["valid_at"]
                if fact.get("invalid_at"):
                    when += f" – {fact['invalid_at']}"
                mark = " :red-badge[sources disagree]" if position in disputed else ""
                st.markdown(f"{position}. **{plain(when)}** · {_source(fact)} {_certainty(fact)[1]}{mark}")
                show_text(fact["fact"])
                st.caption(f"date from {plain(fact.get('date_method') or 'the text')}")
    if undated:
        st.markdown(f"**Undated facts** ({len(undated)}): the text gives them no date of their own.")
        for fact in undated:
            with st.container(border=True):
                of = fact.get("document_date") or "unknown date"
                st.markdown(f"undated, from a document of {plain(of)} · {_source(fact)} {_certainty(fact)[1]}")
                show_text(fact["fact"])
    if less_certain:
        st.markdown(
            f"**Less certain** ({len(less_certain)}): the extractor is not sure these are events of "
            f"{plain(entity.name)} at these dates, so they are not drawn."
        )
        for fact in less_certain:
            with st.container(border=True):
                when = (
                    f"undated, from a document of {fact.get('document_date') or 'unknown date'}"
                    if fact.get("undated")
                    else fact.get("valid_at") or "undated"
                )
                st.markdown(f"{plain(when)} · {_source(fact)} {_certainty(fact)[1]}")
                show_text(fact["fact"])

with network_tab:
    depth = st.slider("Depth", min_value=1, max_value=5, value=2, help="How many hops from the entity to follow")
    result = tools.get_entity_relationships(entity.name, depth)
    related = result["related_facts"]
    if not related:
        st.info("No facts link this entity to another yet.")
    else:
        edges: dict[tuple[str, str], int] = {}
        for fact in related:
            names = list(dict.fromkeys(fact.get("entities") or []))
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    key = tuple(sorted((a, b)))
                    edges[key] = edges.get(key, 0) + 1
        central = result["central_entity"]

        def quote(name: str) -> str:
            return '"' + name.replace('"', "'") + '"'

        dot = [
            "graph G {",
            "  graph [overlap=false, splines=true];",
            '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="sans-serif"];',
            f'  {quote(central)} [fillcolor="#1f5fbf", fontcolor="white"];',
        ]
        for (a, b), weight in sorted(edges.items(), key=lambda item: -item[1])[:80]:
            dot.append(f'  {quote(a)} -- {quote(b)} [penwidth={min(1 + weight, 6)}, tooltip="{weight} facts"];')
        dot.append("}")
        st.graphviz_chart("\n".join(dot), use_container_width=True)
        st.caption(f"{len(related)} facts within {result['depth']} hops ({result['search_method']}).")
        with st.expander("The facts behind the links"):
            for fact in related:
                when = plain(
                    f"undated, from a document of {fact.get('document_date') or 'unknown date'}"
                    if fact.get("undated")
                    else fact.get("valid_at") or "undated"
                )
                st.markdown(f"- hop {fact.get('hop', 0)} · {when} · {plain(fact['fact'])}")
