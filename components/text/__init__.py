"""Text analysis shared by ingestion and ranking: one tokeniser, stop-word list and stemmer for both."""
