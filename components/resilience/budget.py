"""The whole-question time budget, carried with the question to every source and the generator.

`question_budget(seconds)` opens a budget for the question being answered (the caller passes `QUESTION_BUDGET_S`);
inside it `question_deadline()` is the `time.monotonic()` instant by which everything must be done. The deadline
lives in a context variable, so it follows the question into `Pipeline.run_async`'s tasks and threads (both copy
the context) and into the guard's worker threads, and concurrent questions each keep their own.

Usage:
```python
with question_budget(30.0):  # the catalog passes its QUESTION_BUDGET_S
    catalog.run("research", inputs)  # every guarded source and the generator stop at the deadline
```
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("question_deadline", default=None)


def question_deadline() -> float | None:
    """The current question's deadline (`time.monotonic()` seconds), or None outside a question."""
    return _DEADLINE.get()


@contextmanager
def deadline_scope(deadline: float) -> Iterator[float]:
    """Run the enclosed work under `deadline` (a `time.monotonic()` instant), or the current one if earlier.

    The guard runs each source call in this scope, so the call's own deadline (its timeout) is what any client
    inside it sees through `question_deadline()`, e.g. to stop a download when the guard gives up on it.
    """
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(deadline, outer))
    try:
        yield _DEADLINE.get()  # type: ignore[misc]
    finally:
        _DEADLINE.reset(token)


@contextmanager
def question_budget(seconds: float) -> Iterator[float]:
    """Run the enclosed work under a budget of `seconds` (the caller's `QUESTION_BUDGET_S`, read when it was
    built); yields the deadline.

    A budget opened inside another keeps the earlier deadline: a nested question cannot outlive its caller's.
    """
    if seconds <= 0:
        raise ValueError("the question budget must be positive")
    with deadline_scope(time.monotonic() + seconds) as deadline:
        yield deadline
