"""`QueryEmbedder`: embeds the analyst's question once for every branch that needs it."""

from __future__ import annotations

from typing import Any

from haystack import component

from components.embedding.model import EmbeddingModel, get_embedding_model
from components.serialization import InitParameterSerialization
from components.settings import DEFAULT_EMBEDDING_MODEL


@component
class QueryEmbedder(InitParameterSerialization):
    """Embeds a query with the local model (offline); an empty query gives an empty embedding.

    Usage:
    ```python
    embedder = QueryEmbedder()
    embedder.warm_up()
    embedder.run(query="Who founded deepset?")["embedding"]  # 384 floats
    ```
    """

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL) -> None:
        if not model:
            raise ValueError("model must name the embedding model")
        self.model = model
        self._model: EmbeddingModel | None = None

    def warm_up(self) -> None:
        """Load the model (once per process)."""
        if self._model is None:
            self._model = get_embedding_model(self.model)

    @component.output_types(embedding=list[float])
    def run(self, query: str) -> dict[str, Any]:
        """Embed `query`.

        :returns: `embedding`: the normalised query vector (empty for a blank query).
        """
        if not query or not query.strip():
            return {"embedding": []}
        self.warm_up()
        assert self._model is not None
        return {"embedding": self._model.embed_one(query.strip()).tolist()}
