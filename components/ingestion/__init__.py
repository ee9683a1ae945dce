"""The building blocks of ingestion: file formats read into a `ConvertedDocument` (text with its pages and
sections), the per-file limits, and the `TokenSplitter` that cuts it into chunks. The ingestion service (`ingest`)
and the web and arXiv sources (which cut fetched pages as ingestion cuts files) both use them."""
