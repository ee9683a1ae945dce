"""The demo corpus shipped with the package: short original histories of the tools this product is built on.

`ensure_demo_corpus()` fills an empty knowledge base with it (the app and `make run` call it on first start);
`research ingest --demo` ingests it on request. Its sources are `demo:<file name>`, so its document ids are the
same on every machine wherever the package is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from haystack import logging

from components.ingestion.formats import SUPPORTED_SUFFIXES, doc_type_for
from components.knowledge_base.factory import open_knowledge_base
from components.knowledge_base.knowledge_base import KnowledgeBase
from ingest.ingestor import IngestItem, Ingestor
from ingest.report import IngestProgress, IngestReport

logger = logging.getLogger(__name__)

DEMO_CORPUS_DIR = Path(__file__).resolve().parent / "demo_corpus"


def demo_files() -> list[Path]:
    """The corpus files, in name order."""
    return sorted(p for p in DEMO_CORPUS_DIR.iterdir() if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)


def demo_items() -> list[IngestItem]:
    """One ingestion item per corpus file, with a machine-independent source."""
    return [
        IngestItem(source=f"demo:{path.name}", filename=path.name, path=path, doc_type=doc_type_for(path.name))
        for path in demo_files()
    ]


def ingest_demo_corpus(
    ingestor: Ingestor | None = None,
    progress: Callable[[IngestProgress], None] | None = None,
    force: bool = False,
) -> IngestReport:
    """Ingest the demo corpus (unchanged files are skipped as with any other ingestion)."""
    ingestor = ingestor or Ingestor()
    return ingestor.ingest_items(demo_items(), progress=progress, force=force)


def ensure_demo_corpus(store: KnowledgeBase | None = None) -> IngestReport | None:
    """Ingest the demo corpus when the knowledge base holds no documents; None when it already has some."""
    if store is None:
        store = open_knowledge_base()
    if store.count_documents() > 0:
        return None
    logger.info("The knowledge base is empty; ingesting the demo corpus")
    return ingest_demo_corpus(Ingestor(store=store))
