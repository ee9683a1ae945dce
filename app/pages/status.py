"""Status: what each backend and tool is, whether it is reachable, how much it holds, and tool telemetry."""

from __future__ import annotations

import streamlit as st

from app import services
from app.document_text import plain

st.title("Status")

if st.button("Check again", icon=":material/refresh:"):
    st.rerun()

from pipelines.status import collect_status  # noqa: E402 - after the page's first paint

with st.spinner("Probing every backend…"):
    report = collect_status(services.runtime().settings)

if report["healthy"]:
    st.success("Every required part is reachable.")
else:
    st.error("A required part is unreachable: see below.")

for part in report["parts"]:
    icon = "🟢" if part["reachable"] else ("⚪" if part["optional"] else "🔴")
    with st.container(border=True):
        st.markdown(f"{icon} **{plain(part['name'])}** — {plain(part['detail'])}")  # details quote upstreams
        if part["counts"]:
            columns = st.columns(len(part["counts"]))
            for column, (key, value) in zip(columns, part["counts"].items(), strict=False):
                column.metric(key, value)
        st.caption(f"probed in {part['probe_ms']:.0f} ms" + (" · optional" if part["optional"] else ""))

st.subheader("Tools")
tools = report["tools"]
if not tools:
    st.caption("No tool has been called in this server process yet.")
else:
    rows = []
    for tool in tools:
        stats = tool.get("telemetry") or {}
        rows.append(
            {
                "tool": tool["name"],
                "enabled": bool(tool.get("enabled", True)),
                "calls": stats.get("calls", 0),
                "successes": stats.get("successes", 0),
                "failures": sum((stats.get("failures") or {}).values()),
                "failure kinds": ", ".join(f"{kind}: {count}" for kind, count in (stats.get("failures") or {}).items()),
                "p50 ms": stats.get("p50_ms"),
                "p95 ms": stats.get("p95_ms"),
                "cache hits": stats.get("cache_hits", 0),
            }
        )
    st.dataframe(rows, hide_index=True, use_container_width=True)
st.caption(f"Data folder: {plain(str(report['data_dir']))}")
services.session_state()
