"""The research branches' contract, declared once: the inputs every source's `run` takes from the question router
(`BranchQuery`) and the outputs it gives (`SOURCE_OUTPUTS`).

A source writes `run(self, branch: BranchQuery, <its own inputs>)` under `@branch_run`; its Haystack inputs (the
sockets the pipeline connects) are still `query`, `query_embedding`, `filters`, `as_of` and `sources`, followed by
its own, and `run` receives the first five as one `BranchQuery`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from haystack import component

from components.contracts import SOURCE_OUTPUTS


@dataclass(frozen=True)
class BranchQuery:
    """What the research pipeline asks each source branch.

    :param query: the analyst's question.
    :param query_embedding: its embedding, when the pipeline computed one.
    :param filters: the research filters (each source applies the ones it knows).
    :param as_of: only what was known by this date (ISO text or a date).
    :param sources: the sources selected for the question (None or "auto": every source).
    """

    query: str
    query_embedding: list[float] | None = None
    filters: dict[str, Any] | None = None
    as_of: str | dt.date | None = None
    sources: list[str] | None = None


_FIELDS = dataclasses.fields(BranchQuery)
_TYPES = typing.get_type_hints(BranchQuery)
_INPUTS = [
    inspect.Parameter(
        field.name,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default,
        annotation=_TYPES[field.name],
    )
    for field in _FIELDS
]


def branch_run(run: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A source's `run(self, branch: BranchQuery, **own)` as a component's `run` whose inputs are `BranchQuery`'s
    fields followed by its own, and whose outputs are `SOURCE_OUTPUTS`."""
    this, branch, *own = inspect.signature(run).parameters.values()
    if branch.name != "branch":
        raise TypeError(f"{run.__qualname__} must take the branch's inputs as its first parameter, `branch`")
    signature = inspect.signature(run).replace(parameters=[this, *_INPUTS, *own])

    @functools.wraps(run)
    def branch_inputs_run(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        arguments = signature.bind(self, *args, **kwargs)
        arguments.apply_defaults()
        values = dict(arguments.arguments)
        del values[this.name]
        query = BranchQuery(**{field.name: values.pop(field.name) for field in _FIELDS})
        return run(self, query, **values)

    branch_inputs_run.__signature__ = signature  # type: ignore[attr-defined]
    annotations = {name: value for name, value in run.__annotations__.items() if name != "branch"}
    branch_inputs_run.__annotations__ = {**{field.name: _TYPES[field.name] for field in _FIELDS}, **annotations}
    return component.output_types(**SOURCE_OUTPUTS)(branch_inputs_run)
