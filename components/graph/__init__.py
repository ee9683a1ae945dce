"""The knowledge graph: entities and dated facts extracted at ingestion, one store interface (embedded PostgreSQL
or Neo4j), and the components that search it, walk its relationships and build entity timelines."""
