"""`map_until`: a call per item on a few threads, waited for until a deadline (the web's pages, arXiv's PDFs).

`run_async` twins for sync components, so `Pipeline.run_async` runs the trivially cheap calls on its event loop.

Haystack runs a component without `run_async` through `asyncio.to_thread`: a hop to a worker thread and back for
every call. For a call that only reads its inputs (a source that was not selected, a prompt template, the status
list) the hop costs more than the work, and the waiting thread competes for the interpreter with the branches still
running. Never for blocking I/O: the loop must stay free for the other branches.

Usage (in the class body, after `run`):
```python
run_async = async_twin(run)  # always on the loop
run_async = source_twin(run, "web")  # on the loop when the web was not selected, else in a worker thread
```
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import Callable, Iterable
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


def async_twin(
    run: Callable[..., dict[str, Any]], inline: Callable[[Any, dict[str, Any]], bool] | None = None
) -> Callable[..., Any]:
    """A `run_async` with `run`'s parameters and output types: it calls `run` on the event loop when `inline` says so
    for the component and the call's keyword arguments (always, without `inline`), and in a worker thread otherwise."""

    @functools.wraps(run)
    async def run_async(self: Any, **arguments: Any) -> dict[str, Any]:
        if inline is None or inline(self, arguments):
            return run(self, **arguments)
        return await asyncio.to_thread(run, self, **arguments)

    return run_async


def source_twin(run: Callable[..., dict[str, Any]], source: str) -> Callable[..., Any]:
    """The `run_async` of a source's branch: a call that did not select `source` answers at once, on the loop."""
    return async_twin(run, inline=lambda _, arguments: not source_selected(arguments.get("sources"), source))
