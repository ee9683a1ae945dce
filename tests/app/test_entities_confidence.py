"""The Entities page draws only the facts whose event confidence reaches the fitted threshold, shows each fact's
certainty as a badge, and lists the less certain facts apart instead of dropping them."""

from __future__ import annotations

import uuid

import pytest

from components.graph.event_confidence import default_threshold
from components.graph.model import DocumentGraph, EntityMention
from tests.app.conftest import run_page
from tests.components.graph.facts import halvard_fact
from tests.components.knowledge_base.conftest import environment


@pytest.fixture(scope="module")
def halvard_collection(database_url):
    """A collection whose graph holds a sure fact and a doubtful one about an invented company."""
    import streamlit as st

    from components.graph.factory import graph_store_from_settings

    name = f"app_{uuid.uuid4().hex[:8]}"
    store = graph_store_from_settings(name)
    store.replace_document(
        DocumentGraph(
            document_id="doc-halvard",
            entities=[EntityMention("halvard mills", "Halvard Mills", "organization", confidence=0.9)],
            facts=[
                halvard_fact(0, "Halvard Mills opened its first mill in 1998.", 0.97, 1998),
                halvard_fact(1, "Halvard Mills might have sold a mill in 2005.", 0.05, 2005),
            ],
        )
    )
    with environment({"KB_COLLECTION": name}):
        st.cache_resource.clear()
        yield name
    st.cache_resource.clear()
    store.drop()


@pytest.mark.integration
def test_a_doubtful_fact_is_listed_as_less_certain_not_drawn(halvard_collection):
    assert 0.05 < default_threshold() < 0.97
    at = run_page("entities.py")
    at.text_input[0].input("Halvard Mills").run()
    assert not at.exception
    shown = [element.value.replace("\\", "") for element in at.markdown]
    drawn = [text for text in shown if text.startswith("1. ")]
    assert len(drawn) == 1 and drawn[0].startswith("1. **1998**") and ":green-badge[sure event]" in drawn[0]
    assert not any(text.startswith("2. ") for text in shown)  # the doubtful fact is not numbered on the timeline
    assert any(text.startswith("**Less certain** (1)") for text in shown)
    listed = [text for text in shown if text.startswith("2005 · ")]
    assert len(listed) == 1 and ":orange-badge[less certain]" in listed[0]
    assert "[Halvard Mills through the years](https://example.org/halvard)" in listed[0]
