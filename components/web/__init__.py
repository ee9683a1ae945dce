"""The web source: Firecrawl search and scrape as pipeline components, with timestamped page snapshots."""

from components.web.ingest import UrlNotIngested, ingest_url
from components.web.scrape import WebScrape
from components.web.search import WebSearch
from components.web.snapshots import PageSnapshot, SnapshotStore

__all__ = ["PageSnapshot", "SnapshotStore", "UrlNotIngested", "WebScrape", "WebSearch", "ingest_url"]
