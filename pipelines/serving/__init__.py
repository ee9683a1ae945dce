"""Serving every pipeline of the catalog with Hayhooks: REST, OpenAI-compatible chat, MCP, an optional token.

`wrappers/NAME/pipeline_wrapper.py` holds one Hayhooks wrapper per served pipeline; `server.py` starts Hayhooks
over them (`research serve`); `export.py` writes a catalog pipeline as a standalone Hayhooks YAML.
"""
