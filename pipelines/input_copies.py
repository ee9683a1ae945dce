"""Haystack's per-component deep copies, without asking every plain value whether it is a component.

`Pipeline.run` / `run_async` deep-copy every component's inputs (and `run_async` every partial output it yields,
which `run_async` then drops) through `haystack.core.pipeline.utils._deepcopy_with_exceptions`. That function walks
lists, tuples, sets and dicts, and asks each value inside `isinstance(value, (Component, Tool, Toolset))` before
deep-copying it. `Component` is a runtime-checkable Protocol: on Python 3.11 each such check walks the protocol's
attributes twice, about 10 us at rest and 20 us on a busy machine, for every string, None, number and chunk. A
research question passes about 600 of them (275 chunks, 110 strings, 100 Nones, ...), so the checks cost more than
the copies they guard.

`copy_inputs` makes exactly the copies Haystack makes: plain lists and dicts are rebuilt value by value as there;
strings, numbers, booleans and None are returned as they are (what `copy.deepcopy` returns for them, and none of
them is a component); our chunk carriers, branch views and statuses, which are never components, are deep-copied
as `copy.deepcopy` copies them (their own `__deepcopy__`); anything else goes to Haystack's function unchanged.
`install()` puts it where Haystack's pipeline modules look the function up; it leaves them alone if Haystack no longer
has the function, or if something else replaced it.
"""

from __future__ import annotations

from typing import Any

from components.contracts import BranchDocuments, SourceStatus
from components.contracts.chunk import ChunkDocument

# `copy.deepcopy` returns these as they are, and none of them has a `run`.
_AS_IS: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
# Ours, never components: deep-copied directly.
_NOT_COMPONENTS: frozenset[type] = frozenset({ChunkDocument, BranchDocuments, SourceStatus})
_HAYSTACK_MODULES = ("haystack.core.pipeline.pipeline", "haystack.core.pipeline.base")
_original: Any = None


def copy_inputs(value: Any) -> Any:
    """What `_deepcopy_with_exceptions(value)` returns, without its component check for values that cannot be one."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is list:
        return [copy_inputs(item) for item in value]
    if kind is dict:
        return {key: copy_inputs(item) for key, item in value.items()}
    if kind in _NOT_COMPONENTS:
        return value.__deepcopy__({})  # what `copy.deepcopy` calls, without its memo bookkeeping for one value
    return _original(value)


def install() -> bool:
    """Use `copy_inputs` in Haystack's pipeline modules (idempotent); False when Haystack's function is not there."""
    global _original
    import importlib

    try:
        utils = importlib.import_module("haystack.core.pipeline.utils")
        modules = [importlib.import_module(name) for name in _HAYSTACK_MODULES]
    except ImportError:
        return False
    original = getattr(utils, "_deepcopy_with_exceptions", None)
    if original is None:
        return False
    _original = original
    installed = False
    for module in modules:
        current = getattr(module, "_deepcopy_with_exceptions", None)
        if current is original:
            module._deepcopy_with_exceptions = copy_inputs  # type: ignore[attr-defined]
        installed = installed or getattr(module, "_deepcopy_with_exceptions", None) is copy_inputs
    return installed
