"""The Entities page shows what an analyst needs to trust an entity: its kind with confidence and evidence, why
merged names are one entity, facts placed only where their sentence dates them, and documents by title."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.app.conftest import run_page
from tests.components.knowledge_base.conftest import environment

HISTORY = """---
title: "Nordvik Analytics: a history"
date: 2024-01-23
url: https://example.org/nordvik
---

# Nordvik Analytics: a history

Nordvik Analytics began as an open-source project by Andrei Zorvanek, a database engineer from Tallinn.
In 2021 Zorvanek founded the company in Tallinn with two friends. Zorvanek led the company until 2023.
"""


@pytest.fixture(scope="module")
def invented_collection(database_url, tmp_path_factory):
    """A collection holding one invented document, ingested with the graph."""
    import streamlit as st

    from components.knowledge_base.factory import open_knowledge_base
    from ingest.ingestor import Ingestor

    folder = tmp_path_factory.mktemp("invented")
    (folder / "nordvik.md").write_text(HISTORY, encoding="utf-8")
    name = f"app_{uuid.uuid4().hex[:8]}"
    with environment({"KB_COLLECTION": name}):
        report = Ingestor(open_knowledge_base(collection=name)).ingest_paths([folder])
        assert report.chunks_written > 0
        st.cache_resource.clear()
        yield name
    st.cache_resource.clear()


@pytest.mark.integration
def test_kind_merge_undated_facts_and_titles(invented_collection):
    at = run_page("entities.py")
    at.text_input[0].input("Andrei Zorvanek").run()
    assert not at.exception
    assert at.subheader[0].value == "Andrei Zorvanek"
    shown = [element.value.replace("\\", "") for element in at.markdown]  # without Markdown escapes
    assert any(text.startswith("Kind: **person**, confidence") for text in shown)
    # The merged surname, and why.
    assert any("Why these names are one entity" in expander.label for expander in at.expander)
    assert any("zorvanek" in text and "surname" in text for text in shown)
    # A fact dated by its sentence is on the timeline; the one only the document dates is listed as undated.
    # Each drawn fact is numbered (the numbers a disagreement cites): "1. **2021** · title".
    assert any(re.match(r"\d+\. \*\*2021", text) for text in shown)
    assert any("undated, from a document of 2024-01-23" in text for text in shown)
    assert not any(re.match(r"(\d+\. )?\*\*2024-01-23", text) for text in shown)
    # Documents are named by title, linked; no internal ids.
    assert any("[Nordvik Analytics: a history](https://example.org/nordvik)" in text for text in shown)
    assert not any("hop" in text and "· 2024-01-23 ·" in text for text in shown)  # nor in the relationships
    assert not any("doc_" in text for text in shown + [c.value for c in at.caption])
