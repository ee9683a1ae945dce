"""The Ask page's agent mode: a tool-calling chat model answers with the research tools the manager chooses.

Offered only when a chat model is configured (OPENAI_API_KEY, with OPENAI_BASE_URL for a local server). The
question runs the catalog's `research_agent` pipeline, the earlier agent turns of the session as its conversation;
the page shows the cited answer, each tool call with its arguments, status and time, why those tools were chosen,
and the numbered evidence.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from app import services
from app.document_text import plain, show_text

AGENT_HISTORY = "agent_history"  # [{"question", "result"}] of this session's agent turns
STATUS_ICONS = {"success": "✅", "partial": "🟠", "timeout": "⏱️", "error": "❌", "skipped": "⏭️"}


def chat_model_configured() -> bool:
    """True when the app's settings (those its runtime, and so the agent it runs, was started with) name a
    tool-calling chat model."""
    return services.runtime().settings.openai_api_key is not None


def _conversation(turns: list[dict[str, Any]], last: int = 3) -> list[dict[str, str]]:
    conversation = []
    for turn in turns[-last:]:
        conversation.append({"role": "user", "content": turn["question"]})
        if turn["result"]["answer"]:
            conversation.append({"role": "assistant", "content": turn["result"]["answer"]})
    return conversation


def _ask(question: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    from components.tools.research_agent import agent_result_json

    outputs = services.catalog().run(
        "research_agent", {"question": question, "conversation": _conversation(turns) or None}
    )
    return agent_result_json(outputs)


def _answer_markdown(result: dict[str, Any]) -> str:
    """The answer (the chat model's words: shown as text) with each sentence its citations do not support flagged."""
    if not result["sentences"]:
        return plain(result["answer"])
    parts = []
    for sentence in result["sentences"]:
        text = plain(sentence["text"])
        if sentence["citations"] and not sentence["supported"]:
            text = f"{text} :orange-badge[unsupported by its citation]"
        parts.append(text)
    return " ".join(parts)


def _show(question: str, result: dict[str, Any]) -> None:
    st.subheader(plain(question))
    status = result["status"]
    if status["status"] != "success":
        st.error(f"The agent could not answer: {plain(status['message'])}")
    st.markdown(_answer_markdown(result) or "_No answer._")
    st.markdown("#### Tool calls")
    if result["tool_calls"]:
        st.table(
            {
                "tool": [call["tool"] for call in result["tool_calls"]],
                "arguments": [
                    plain(json.dumps(call["arguments"], ensure_ascii=False)) for call in result["tool_calls"]
                ],
                "status": [f"{STATUS_ICONS.get(call['status'], '')} {call['status']}" for call in result["tool_calls"]],
                "time (ms)": [f"{call['ms']:.0f}" for call in result["tool_calls"]],
                "message": [plain(call["message"]) for call in result["tool_calls"]],
            }
        )
    else:
        st.caption("The model called no tool.")
    with st.expander("Why these tools"):
        selection = result["selection"]
        for tool in selection.get("tools", []):
            st.markdown(f"- **{plain(tool)}**: {plain('; '.join(selection['reasons'].get(tool, [])))}")
    if result["chunks"]:
        st.markdown("#### Evidence")
    for chunk in result["chunks"]:
        title = chunk["source_title"] or chunk["source_id"]
        with st.expander(
            f"[{chunk['n']}] {plain(title)} · {plain(chunk['source_type'])}", expanded=chunk["n"] in result["citations"]
        ):
            show_text(chunk["content"] or "")
            if chunk["source_url"]:
                st.caption(plain(chunk["source_url"]))


def agent_mode() -> bool:
    """Offer the agent mode when a chat model is configured; when the analyst turns it on, render it and return
    True (the page's own research form is then not shown)."""
    if not chat_model_configured():
        return False
    if not st.toggle("Agent mode: the chat model calls the research tools", key="agent_mode"):
        return False
    state = st.session_state
    state.setdefault(AGENT_HISTORY, [])
    question = st.text_area("Question for the agent", key="agent_question", height=80)
    if st.button("Ask the agent", type="primary", key="agent_ask"):
        if not question.strip():
            st.error("Type a question first.")
        else:
            with st.spinner("The agent is choosing and calling tools…"):
                try:
                    result = _ask(question.strip(), state[AGENT_HISTORY])
                except Exception as exc:  # noqa: BLE001 - one sentence, the page stays usable
                    st.error(f"The agent could not answer: {plain(services.friendly_error(exc))}")
                else:
                    state[AGENT_HISTORY].append({"question": question.strip(), "result": result})
    if state[AGENT_HISTORY]:
        turn = state[AGENT_HISTORY][-1]
        _show(turn["question"], turn["result"])
    else:
        st.caption("The agent picks the tools your question needs, calls them, and cites what they return.")
    return True
