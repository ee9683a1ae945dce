"""Pipelines for a selection of sources: a catalog pipeline without the branches of the sources a question leaves out.

A branch whose source was not selected answers "skipped" at once, yet as a component of the pipeline it still costs
every question: Haystack copies its inputs (the question's five and its optional ones left at None), opens its span
and weighs it in every scheduling pass, on the event loop the question waits on. The catalog therefore runs a
question on the pipeline of its selection: the same YAML definition with those branches, their connections and
what only they feed removed, built and warmed once per selection and kept (the last `MAX_SELECTIONS` used). The
models the warm-ups load are shared per process (`components/embedding/model.py`, `components/text/language.py`),
and so is the knowledge base's in-memory keyword index (`keyword_memory.py`).

The answer stays the whole pipeline's, value for value:
- the joiner (`LoopDocumentJoiner`) counts the removed branches as the empty lists they would have sent
  (`absent_lists`), since reciprocal rank fusion weighs each list by one over the number of lists;
- the status collector's statuses get the removed branches' own "skipped" statuses (each branch's `run`, which answers
  at once without asking its source), sorted the same way;
- every other receiver must treat a branch that sent nothing like one that found nothing (the ranker drops empty
  branches).
A pipeline where that cannot be kept (a joiner of another kind or with its own weights, a status collector whose list
another component reads) runs whole.

What feeds only inputs their receivers never read (`unread_senders`: the prompt builder, when the generator answers
extractively and reads no prompt) is left out of a selection's pipeline the same way: about 0.7 ms a research
question (its rendering, the copies of its chunks and a scheduling pass), the answers the same. So is what feeds only
inputs their receivers make themselves the same way (the question analyzer, whose analysis the generator makes from
the same question), and a stage the question leaves nothing to do (`idle_stages`: the memory writer of a question
without a session), each a stage's input copies, span and scheduling passes.

Usage (the catalog's):
```python
branches = selection_branches(spec.inputs, pipeline)  # {"kb_dense": "kb", "graph": "graph", ...}
pruned = without_branches(spec.inputs, spec.pipeline, unselected(branches, ["kb"]))
pruned.inputs, pruned.pipeline, pruned.statuses  # None when the pipeline must run whole
```
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from components.contracts.selection import SOURCE_NAMES, source_selected

SOURCES_INPUT = "sources"  # the named input whose targets are the branches a selection chooses among
JOINER_TYPE = "components.ranking.joiner.LoopDocumentJoiner"
COLLECTOR_TYPE = "pipelines.status_collector.SourceStatusCollector"
# Pipelines kept per catalog, besides the whole ones: 31 selections of 5 sources are possible, each with and without
# the idle stages a question may leave out (`idle`: the memory writer when no session is given).
MAX_SELECTIONS = 8


def selection_branches(inputs: dict[str, list[str]], pipeline: Any) -> dict[str, str]:
    """The branches of a built pipeline a selection chooses among, as component -> source name: the components its
    named input `sources` feeds whose class names the source it answers for (`SOURCE`, one of `SOURCE_NAMES`)."""
    branches: dict[str, str] = {}
    for target in inputs.get(SOURCES_INPUT, []):
        name = target.split(".")[0]
        source = getattr(type(pipeline.get_component(name)), "SOURCE", None)
        if source in SOURCE_NAMES:
            branches[name] = source
    return branches


def unread_senders(
    inputs: dict[str, list[str]], outputs: dict[str, str], pipeline_dict: dict[str, Any], pipeline: Any
) -> frozenset[str]:
    """The components of a built pipeline a selection's run leaves out because nothing needs what they send: each
    connection of theirs ends in an input its receiver never reads (`unread_inputs()`, such as an extractive
    generator's prompt), in one the receiver makes itself (`made_inputs()`: input -> (the input it is made from, the
    class whose output it then equals), such as the generator's question analysis) from an input the same named input
    feeds the sender, or in a component left out for either reason; and none of their outputs is one of the named
    `outputs`. A run leaves them out as a selection leaves out a source's branch (`without_branches`), and the receiver
    takes the input's default. Nothing without such a receiver."""
    unread: dict[str, frozenset[str]] = {}
    made: dict[str, dict[str, tuple[str, type]]] = {}
    kinds: dict[str, type] = {}
    for name, component in pipeline.walk():
        kinds[name] = type(component)
        reads = getattr(component, "unread_inputs", None)
        if callable(reads):
            unread[name] = frozenset(reads())
        makes = getattr(component, "made_inputs", None)
        if callable(makes):
            made[name] = dict(makes())
    if not any(unread.values()) and not any(made.values()):
        return frozenset()
    named = {source.split(".")[0] for source in outputs.values()}
    fed_by = {target: input_name for input_name, targets in inputs.items() for target in targets}

    def spared(sender: str, receiver: str, socket: str) -> bool:
        if socket in unread.get(receiver, frozenset()):
            return True
        source, maker = made.get(receiver, {}).get(socket, ("", type(None)))
        given = fed_by.get(f"{receiver}.{source}")
        return (
            given is not None
            and fed_by.get(f"{sender}.{source}") == given
            and issubclass(kinds.get(sender, object), maker)
        )

    ends: dict[str, list[tuple[str, str]]] = {}
    for connection in pipeline_dict.get("connections") or []:
        sender, _, receiver, socket = _ends(connection)
        ends.setdefault(sender, []).append((receiver, socket))
    left_out: set[str] = set()
    while True:  # what feeds only the components left out goes too
        more = {
            sender
            for sender, receivers in ends.items()
            if sender not in left_out
            and sender not in named
            and all(receiver in left_out or spared(sender, receiver, socket) for receiver, socket in receivers)
        }
        if not more:
            return frozenset(left_out)
        left_out |= more


def idle_stages(
    inputs: dict[str, list[str]], outputs: dict[str, str], pipeline_dict: dict[str, Any], pipeline: Any
) -> dict[str, dict[str, str]]:
    """The components of a built pipeline that may do nothing for a question, as component -> {socket: the named
    input feeding it}: those that say when (`idle_for(values)`), send nothing to another component and have no named
    output (such as the memory writer, which remembers only questions given a session). `idle(...)` asks them."""
    senders = {_ends(connection)[0] for connection in pipeline_dict.get("connections") or []}
    named = {source.split(".")[0] for source in outputs.values()}
    stages: dict[str, dict[str, str]] = {}
    for name, component in pipeline.walk():
        if callable(getattr(component, "idle_for", None)) and name not in senders and name not in named:
            stages[name] = {
                target.split(".")[1]: input_name
                for input_name, targets in inputs.items()
                for target in targets
                if target.split(".")[0] == name
            }
    return stages


def idle(stages: dict[str, dict[str, str]], pipeline: Any, values: dict[str, Any]) -> frozenset[str]:
    """The `stages` (`idle_stages`) of `pipeline` that a run with the named inputs' `values` leaves nothing to do:
    each is asked with the values of the sockets named inputs feed it (None where the run gives none; a socket another
    component feeds is not among them)."""
    return frozenset(
        name
        for name, sockets in stages.items()
        if pipeline.get_component(name).idle_for({socket: values.get(given) for socket, given in sockets.items()})
    )


def unselected(branches: dict[str, str], sources: list[str] | None) -> frozenset[str]:
    """The branches whose source `sources` leaves out (none for no selection, `auto` or `all`)."""
    return frozenset(name for name, source in branches.items() if not source_selected(sources, source))


def _ends(connection: dict[str, Any]) -> tuple[str, str, str, str]:
    sender, _, sender_socket = str(connection.get("sender", "")).partition(".")
    receiver, _, receiver_socket = str(connection.get("receiver", "")).partition(".")
    return sender, sender_socket, receiver, receiver_socket


@dataclass(frozen=True)
class PrunedPipeline:
    """A pipeline's definition without some branches: its named `inputs`, its `pipeline` dict (Haystack's shape),
    and `statuses`: per status collector, the removed (component, output socket)s it collected."""

    inputs: dict[str, list[str]]
    pipeline: dict[str, Any]
    statuses: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def without_branches(
    inputs: dict[str, list[str]], pipeline: dict[str, Any], branches: frozenset[str]
) -> PrunedPipeline | None:
    """The definition without `branches`, their connections and the components only they feed; None when the answer
    would change without them (see the module's docstring)."""
    components: dict[str, Any] = pipeline.get("components") or {}
    connections: list[dict[str, Any]] = list(pipeline.get("connections") or [])
    named = {target.split(".")[0] for targets in inputs.values() for target in targets}
    removed = set(branches)
    while True:  # what only the removed components feed goes too
        senders: dict[str, set[str]] = {}
        for connection in connections:
            sender, _, receiver, _ = _ends(connection)
            senders.setdefault(receiver, set()).add(sender)
        fed_only = {
            name for name, fed_by in senders.items() if name not in removed and name not in named and fed_by <= removed
        }
        if not fed_only:
            break
        removed |= fed_only
    absent: dict[str, int] = {}
    statuses: dict[str, list[tuple[str, str]]] = {}
    kept: list[dict[str, Any]] = []
    read = {_ends(connection)[0] for connection in connections}
    for connection in connections:
        sender, sender_socket, receiver, _ = _ends(connection)
        if sender not in removed and receiver not in removed:
            kept.append(connection)
            continue
        if receiver in removed:
            continue
        entry = components.get(receiver) or {}
        params = entry.get("init_parameters") or {}
        if entry.get("type") == JOINER_TYPE:
            if params.get("weights"):
                return None  # a weighted list's weight follows its position
            absent[receiver] = absent.get(receiver, 0) + 1
        elif entry.get("type") == COLLECTOR_TYPE:
            if receiver in read or sender not in branches:
                # another component reads the statuses before the removed ones are added back, or the status is of a
                # component removed because only removed branches feed it (its `run` needs what they would send)
                return None
            statuses.setdefault(receiver, []).append((sender, sender_socket))
        elif "joiner" in str(entry.get("type", "")).lower():
            return None  # another joiner's fusion may count the lists it receives
    new_components = {}
    for name, entry in components.items():
        if name in removed:
            continue
        if name in absent:
            params = dict(entry.get("init_parameters") or {})
            params["absent_lists"] = int(params.get("absent_lists") or 0) + absent[name]
            entry = {**entry, "init_parameters": params}
        new_components[name] = entry
    new_inputs = {
        input_name: [target for target in targets if target.split(".")[0] not in removed]
        for input_name, targets in inputs.items()
    }
    return PrunedPipeline(
        new_inputs,
        {**pipeline, "components": new_components, "connections": kept},
        {name: tuple(found) for name, found in statuses.items()},
    )


@dataclass
class _Kept:
    value: Any
    users: int = 0
    dropped: bool = False


class SelectionCache:
    """The pipelines built per selection, the `limit` most recently used kept; one dropped is closed (`close`) as
    soon as no question runs on it. `build(key)` makes a value (None is kept too: that selection runs whole)."""

    def __init__(self, build: Callable[[Any], Any], close: Callable[[Any], None], limit: int = MAX_SELECTIONS) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._build = build
        self._close = close
        self.limit = limit
        self._kept: OrderedDict[Any, _Kept] = OrderedDict()
        self._lock = threading.Lock()
        self._building = threading.Lock()  # one build at a time: warming a pipeline loads what the next one reuses

    def __len__(self) -> int:
        with self._lock:
            return len(self._kept)

    def lease(self, key: Any) -> AbstractContextManager[Any]:
        """`key`'s value, built on first use, not closed while the `with` block runs; None for the key None."""
        return nullcontext(None) if key is None else self._leased(self._get(key))

    def hold(self, key: Any, build: bool = True) -> AbstractContextManager[Any] | None:
        """A lease on `key`'s value taken now (enter it at once: it is given back as its `with` block ends). Without
        `build`, None when the value is not kept: an event loop then takes it from a worker thread, which builds it,
        so that a value dropped between a check and the lease is never built on the loop."""
        if key is None:
            return nullcontext(None)
        kept = self._get(key) if build else self._take(key)
        return None if kept is None else self._leased(kept)

    async def hold_async(self, key: Any) -> AbstractContextManager[Any]:
        """`hold` for an event loop: the kept value at once, else built in a worker thread. A question cancelled
        while the value is built gives the lease the thread took back as soon as the thread is done."""
        held = self.hold(key, build=False)
        if held is not None:
            return held
        taking = asyncio.ensure_future(asyncio.to_thread(self.hold, key))
        try:
            return await asyncio.shield(taking)
        except asyncio.CancelledError:
            taking.add_done_callback(_give_back)
            raise

    @contextmanager
    def _leased(self, kept: _Kept) -> Iterator[Any]:
        try:
            yield kept.value
        finally:
            self._release(kept)

    def _get(self, key: Any) -> _Kept:
        kept = self._take(key)
        if kept is None:
            with self._building:
                kept = self._take(key)
                if kept is None:
                    kept = self._add(key, self._build(key))
        return kept

    def _take(self, key: Any) -> _Kept | None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                kept.users += 1
            return kept

    def _add(self, key: Any, value: Any) -> _Kept:
        kept = _Kept(value, users=1)
        to_close = []
        with self._lock:
            self._kept[key] = kept
            while len(self._kept) > self.limit:
                _, old = self._kept.popitem(last=False)
                old.dropped = True
                if old.users == 0:
                    to_close.append(old.value)
        for value in to_close:
            self._close(value)
        return kept

    def _release(self, kept: _Kept) -> None:
        with self._lock:
            kept.users -= 1
            close = kept.dropped and kept.users == 0
        if close:
            self._close(kept.value)

    def clear(self) -> list[Any]:
        """Forget every value and return them (the catalog closes them as it closes)."""
        with self._lock:
            values = [kept.value for kept in self._kept.values()]
            self._kept.clear()
        return values


def _give_back(taking: asyncio.Future) -> None:
    """Release the lease a worker thread took for a question that was cancelled meanwhile."""
    if not taking.cancelled() and taking.exception() is None:
        with taking.result():
            pass
