"""`QuestionReader`: the question read ahead (its analysis and its chain cut, a spaCy parse) in a background thread
as soon as the pipeline receives it, while the sources search.

What the answer reads of the question does not depend on what was retrieved: its type and parts
(`question_analysis.analyze_question`), whether it opens as a yes/no question (`question_form`) and where a chain
question is cut (`question_chain.decompose`, a dependency parse: most of a short question's analysis cost). Each is
cached per question text, so whichever stage asks first makes it and the others find it made. The reader asks
first: its `run` hands the reading to one process-wide worker thread and returns at once with a `QuestionReading`,
which the stages that read the question (the question analysis, the hop stage) wait for before they read it. The
wait never fails a question: a reading that has not started yet is called off (the stage reads inline, as without a
reader), and one that failed or overran its wait is read inline too. Its results are the caches' own, so the
answers are the same with or without it.

Usage:
```python
reading = QuestionReader().run(query="Where was the director of Pale Orchard born?")["reading"]
reading.wait()  # True once the caches hold the question's analysis and chain cut
```
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from haystack import component, logging

from components.generation.question_analysis import analyze_question, question_form
from components.generation.question_chain import decompose
from components.redaction import cut
from components.resilience.scheduling import async_twin
from components.serialization import InitParameterSerialization
from components.settings import setting_or
from components.text.language import use_language_pipeline
from components.validation import within

logger = logging.getLogger(__name__)

_WORKER: list[ThreadPoolExecutor] = []
_WORKER_LOCK = threading.Lock()


def read_question(question: str) -> bool:
    """Make what the stages after retrieval read of `question` into its caches: its analysis, its opening form and
    its chain cut (each cached per text, thread-safe). Whether the question is cut as a chain."""
    analyze_question(question)
    question_form(question)
    return decompose(question) is not None


def _worker() -> ThreadPoolExecutor:
    """The process's one reading thread (a question's parse holds the interpreter: more threads would only take turns
    with each other)."""
    with _WORKER_LOCK:
        if not _WORKER:
            _WORKER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="question-reader"))
        return _WORKER[0]


class QuestionReading:
    """A question being read ahead (`QuestionReader`): `wait()` until its reading is in the caches.

    Passed on as itself (Haystack deep-copies every component's inputs: a copy of a reading would be no reading).
    """

    def __init__(self, question: str, future: Future | None, wait_s: float) -> None:
        self.question = question
        self._future = future
        self.wait_s = wait_s

    def __deepcopy__(self, memo: dict[int, Any]) -> QuestionReading:
        return self

    def __repr__(self) -> str:
        return f"QuestionReading({self.question!r}, ready={self.ready})"

    @property
    def ready(self) -> bool:
        """Whether the reading is in the caches."""
        future = self._future
        return future is not None and future.done() and not future.cancelled() and future.exception() is None

    @property
    def no_chain(self) -> bool:
        """Whether the reading is in the caches and found no chain to cut the question into (no hop to retrieve)."""
        return self.ready and self._future.result() is False  # type: ignore[union-attr]

    def wait(self) -> bool:
        """Wait (at most `wait_s`) for the reading; True when it is in the caches. False, at once, when it had not
        started (it is called off: the caller reads the question itself) and when it failed or overran the wait."""
        future = self._future
        if future is None or future.cancel():
            return False
        try:
            future.result(timeout=self.wait_s)
        except (CancelledError, FutureTimeout):
            return False
        except Exception as exc:  # noqa: BLE001 - the stage reads the question itself
            logger.debug("Reading the question ahead failed: {reason}", reason=cut(str(exc), 200))
            return False
        return True

    async def wait_async(self) -> bool:
        """`wait` without holding up the event loop."""
        future = self._future
        if future is None or future.cancel():
            return False
        try:
            await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.wait_s)
        except TimeoutError:
            return False
        except Exception as exc:  # noqa: BLE001 - the stage reads the question itself
            logger.debug("Reading the question ahead failed: {reason}", reason=cut(str(exc), 200))
            return False
        return True


@component
class QuestionReader(InitParameterSerialization):
    """Starts reading the question in a background thread as the pipeline receives it (see the module's doc).

    Usage:
    ```python
    reader = QuestionReader()
    reader.warm_up()
    reading = reader.run(query="Who founded Neo4j and when?")["reading"]
    ```
    """

    def __init__(self, wait_s: float = 2.0, spacy_model: str | None = None) -> None:
        """:param wait_s: the longest a stage waits for a reading under way (0.01-60 s) before reading the question
            itself.
        :param spacy_model: the spaCy pipeline that reads the question; None: SPACY_MODEL as it is built."""
        self.wait_s = within("wait_s", wait_s, 0.01, 60.0)
        self.spacy_model = setting_or(spacy_model, "spacy_model")

    def warm_up(self) -> None:
        """Load the language pipeline (once per process) and start the reading thread."""
        use_language_pipeline(self.spacy_model)
        _worker()

    @component.output_types(reading=QuestionReading)
    def run(self, query: str) -> dict[str, Any]:
        """Start reading `query` in the background.

        :param query: the question.
        :returns: `reading`: the `QuestionReading` the stages that read the question wait for. A reading that
            could not be started is one they never wait for.
        """
        future: Future | None = None
        if query and query.strip():
            try:
                future = _worker().submit(read_question, query)
            except RuntimeError as exc:  # the interpreter is shutting down: the stages read the question themselves
                logger.debug("The question could not be read ahead: {reason}", reason=cut(str(exc), 200))
        return {"reading": QuestionReading(query or "", future, self.wait_s)}

    # Handing the question to the reading thread takes microseconds: no hop to a worker thread for it.
    run_async = async_twin(run)
