"""`research ask --session NAME`: a follow-up is rewritten against the session's memory; `--as-typed` undoes it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid

import pytest

from pipelines.cli import main
from tests.pipelines.cli.test_ask import use_collection  # noqa: F401 - the fixture
from tests.pipelines.knowledge import fresh_collection_name

pytestmark = pytest.mark.integration

PROFILES = [
    (
        "brevik",
        "Brevik Labs",
        "Brevik Labs is a drone maker founded in 2019 in Kestrel Bay. Orla Venn leads Brevik "
        "Labs as its chief executive.",
    ),
    (
        "zorvan",
        "Zorvan Systems",
        "Zorvan Systems is a sensor maker founded in 2016 in Corvane. Tomas Hale leads Zorvan Systems.",
    ),
]


@pytest.fixture(scope="module")
def invented_collection(settings, database_url, embedding_model) -> str:
    from components.knowledge_base.factory import open_knowledge_base
    from components.knowledge_base.store import ChunkRecord, DocumentRecord

    collection = fresh_collection_name()
    store = open_knowledge_base(settings, collection)
    for (doc_id, title, text), vector in zip(PROFILES, embedding_model.embed([p[2] for p in PROFILES]), strict=True):
        document = DocumentRecord(
            document_id=doc_id,
            title=title,
            source=f"test:{doc_id}",
            doc_type="txt",
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            text=text,
            date=dt.date(2024, 1, 1),
        )
        store.upsert_document(document, [ChunkRecord(f"{doc_id}-0", doc_id, 0, text, vector)])
    return collection


def ask_json(capsys, *arguments: str) -> dict:  # noqa: ANN001 - pytest's capsys
    assert main(["ask", *arguments, "--sources", "kb", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_follow_up_in_a_session_and_its_undo(invented_collection, use_collection, capsys):  # noqa: F811
    use_collection(invented_collection)
    session = uuid.uuid4().hex
    ask_json(capsys, "When was Zorvan Systems founded?", "--session", session)
    follow_up = ask_json(capsys, "Who leads it?", "--session", session)
    assert follow_up["asked"] == "Who leads it?" and follow_up["answered_as"] == "Who leads Zorvan Systems?"
    assert "Tomas Hale" in follow_up["answer"]
    typed = ask_json(capsys, "Who leads it?", "--session", session, "--as-typed")
    assert typed["answered_as"] == "" and typed["question"] == "Who leads it?"
    # Without a session nothing earlier is known: the question stands as typed.
    assert ask_json(capsys, "Who leads it?")["answered_as"] == ""
    assert main(["ask", "When was it founded?", "--session", session, "--sources", "kb"]) == 0
    assert capsys.readouterr().out.startswith("Answered as: When was Zorvan Systems founded?")
