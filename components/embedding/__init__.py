"""The local embedding model, loaded once per process, and the query embedder component."""

from components.embedding.model import EmbeddingModel, get_embedding_model, query_vector, resolve_model_path
from components.embedding.query_embedder import QueryEmbedder

__all__ = ["EmbeddingModel", "QueryEmbedder", "get_embedding_model", "query_vector", "resolve_model_path"]
