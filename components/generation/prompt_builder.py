"""`PrecompiledChatPromptBuilder`: Haystack's ChatPromptBuilder, compiling its template once instead of per run."""

from __future__ import annotations

import functools
from typing import Any

from haystack import component
from haystack.components.builders import ChatPromptBuilder

from components.resilience.scheduling import async_twin


@component
class PrecompiledChatPromptBuilder(ChatPromptBuilder):
    """A `ChatPromptBuilder` whose Jinja template is compiled once per distinct template text.

    The stock builder compiles the template on every run (about 3 ms here, three times that on a busy machine),
    which is a large share of a research question's own overhead. Rendering a compiled template is thread-safe.

    Usage:
    ```python
    builder = PrecompiledChatPromptBuilder(template="{% message role='user' %}{{ query }}{% endmessage %}")
    builder.run(query="When was pgvector released?")["prompt"]
    ```
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Explicit base call: @component rebuilds the class, which breaks zero-argument super().
        ChatPromptBuilder.__init__(self, *args, **kwargs)
        # Templates are strings, so the compiled template can be looked up by its text.
        self._env.from_string = functools.lru_cache(maxsize=32)(self._env.from_string)  # type: ignore[method-assign]

    # Rendering a compiled template costs less than a hop to a worker thread and back.
    run_async = async_twin(ChatPromptBuilder.run)
