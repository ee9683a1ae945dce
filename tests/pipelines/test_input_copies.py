"""`input_copies`: Haystack's deep copies of component inputs, the same copies without a Protocol check per value."""

from __future__ import annotations

import collections
from typing import Any

from haystack import Document, component
from haystack.core.pipeline.utils import _deepcopy_with_exceptions
from haystack.dataclasses import ChatMessage

from components.contracts import BranchDocuments, SourceStatus
from pipelines import input_copies
from tests.pipelines.test_research_result import chunk as web_chunk

Pair = collections.namedtuple("Pair", "left right")


@component
class Echo:
    @component.output_types(value=str)
    def run(self, value: str) -> dict[str, Any]:
        return {"value": value}


def chunk(number: int) -> Document:
    return web_chunk(number, ranks={"web": number})


def inputs() -> dict[str, Any]:
    first = chunk(1)
    return {
        "documents": [first, chunk(2), first],
        "query": "Who?",
        "top_k": None,
        "limit": 3,
        "weight": 0.5,
        "flag": True,
        "raw": b"x",
        "status": SourceStatus.skipped("web", "not selected"),
        "branch": BranchDocuments((first,)),
        "messages": [ChatMessage.from_user("Who?")],
        "plain": Document(content="plain", meta={"nested": {"list": [1, 2]}}),
        "pair": Pair("a", first),
        "tuple": ("a", first),
        "set": {1, 2},
        "component": Echo(),
        "analysis": {"parts": [{"kind": "who", "terms": ["x"]}]},
    }


def same(ours: Any, theirs: Any) -> None:
    """Equal values of the same types, container by container."""
    assert type(ours) is type(theirs)
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for key in ours:
            same(ours[key], theirs[key])
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for left, right in zip(ours, theirs, strict=True):
            same(left, right)
    else:
        assert ours == theirs


def test_the_copies_are_haystacks() -> None:
    input_copies.install()
    original = inputs()
    ours, theirs = input_copies.copy_inputs(original), _deepcopy_with_exceptions(original)
    same(ours, theirs)
    # Copies where Haystack copies, the same objects where it hands them on.
    for key in ("documents", "status", "messages", "plain", "analysis"):
        assert ours[key] is not original[key]
    assert ours["documents"][0] is not original["documents"][0]
    assert ours["documents"][0].meta is not original["documents"][0].meta
    assert ours["documents"][0].meta["ranks"] is not original["documents"][0].meta["ranks"]
    assert ours["documents"][0] is not ours["documents"][2]
    assert ours["branch"] is original["branch"]
    assert ours["component"] is original["component"]
    assert ours["query"] is original["query"]


def test_the_set_up_installs_it_where_haystack_copies() -> None:
    import haystack.core.pipeline.base as base
    import haystack.core.pipeline.pipeline as pipeline

    from pipelines.runtime import setup

    setup()  # what every entry point calls (constructing a catalog patches nothing: tests/pipelines/test_runtime.py)
    assert pipeline._deepcopy_with_exceptions is input_copies.copy_inputs
    assert base._deepcopy_with_exceptions is input_copies.copy_inputs
    assert input_copies.install()  # idempotent
