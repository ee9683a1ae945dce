"""`map_until`: a call per item on a few threads, waited for until a deadline (the web's pages, arXiv's PDFs).

`run_async` twins for sync components, so `Pipeline.run_async` runs the trivially cheap calls on its event loop.

Haystack runs a component without `run_async` through `asyncio.to_thread`: a hop to a worker thread and back for
every call. For a call that only reads its inputs (a source that was not selected, a prompt template, the status
list) the hop costs more than the work, and the waiting thread competes for the interpreter with the branches still
running. Never for blocking I/O: the loop must stay free for the other branches.

A question run on a loop of its own (`PipelineCatalog.run` from a thread without one: the CLI, evaluations, the
benchmark) is the only work on that loop, and nothing else waits for it while a stage that only the question waits
for runs: the stages after the sources (ranking, the hop stage, the answer) run on it too (`alone_on_loop`), saving
two thread hand-offs each. A server's loop, shared by questions, keeps them in worker threads.

Usage (in the class body, after `run`):
```python
run_async = async_twin(run)  # always on the loop
run_async = source_twin(run, "web")  # on the loop when the web was not selected, else in a worker thread
run_async = async_twin(run, inline=alone_on_loop)  # on the loop when the question has the loop to itself
```
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from components.contracts import source_selected


def map_until(
    work: Callable[[Any], Any], items: Iterable[Any], until: float, *, workers: int, name: str
) -> tuple[dict[concurrent.futures.Future, Any], set[concurrent.futures.Future], set[concurrent.futures.Future]]:
    """`work(item)` for each item on up to `workers` threads, waited for until the monotonic time `until`:
    ({future: item}, done, not done). What has not started by then is cancelled; what is running is abandoned
    (its own timeout ends its thread)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    futures = {pool.submit(work, item): item for item in items}
    done, not_done = concurrent.futures.wait(futures, timeout=max(0.0, until - time.monotonic()))
    pool.shutdown(wait=False, cancel_futures=True)
    return futures, done, not_done


_ALONE_ON_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar("question_alone_on_loop", default=False)


@contextlib.contextmanager
def question_alone_on_loop() -> Iterator[None]:
    """Within the block (and the tasks it creates), the pipeline's question is the only work on its event loop."""
    token = _ALONE_ON_LOOP.set(True)
    try:
        yield
    finally:
        _ALONE_ON_LOOP.reset(token)


def alone_on_loop(_component: Any = None, _arguments: Any = None) -> bool:
    """An `inline` for `async_twin`: whether the running question has its event loop to itself."""
    return _ALONE_ON_LOOP.get()


def async_twin(
    run: Callable[..., dict[str, Any]], inline: Callable[[Any, dict[str, Any]], bool] | None = None
) -> Callable[..., Any]:
    """A `run_async` with `run`'s parameters and output types: it calls the component's `run` on the event loop when
    `inline` says so for the component and the call's keyword arguments (always, without `inline`), and in a worker
    thread otherwise. The `run` called is the one the component has when called (a subclass's, a test's wrapper)."""

    @functools.wraps(run)
    async def run_async(self: Any, **arguments: Any) -> dict[str, Any]:
        if inline is None or inline(self, arguments):
            return self.run(**arguments)
        return await asyncio.to_thread(self.run, **arguments)

    return run_async


def source_twin(run: Callable[..., dict[str, Any]], source: str) -> Callable[..., Any]:
    """The `run_async` of a source's branch: a call that did not select `source` answers at once, on the loop."""
    return async_twin(run, inline=lambda _, arguments: not source_selected(arguments.get("sources"), source))
