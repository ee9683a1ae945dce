"""`export_hayhooks_yaml`: one catalog pipeline as a standalone Hayhooks YAML file.

The file is the pipeline's `Pipeline.to_dict()` plus the top-level `description`, `inputs` and `outputs` Hayhooks
needs to build the endpoint. Stock Hayhooks makes every declared input required, so inputs that cannot travel as
JSON (a streaming callback) are left out. The receiving server must allow the project's modules:
`HAYSTACK_DESERIALIZATION_ALLOWLIST=components,pipelines,ingest,haystack_integrations hayhooks run`.

Usage:
```python
text = export_hayhooks_yaml("documents")
Path("documents.yml").write_text(text)
```
"""

from __future__ import annotations

from typing import Any

import yaml

from pipelines.catalog import build_pipeline
from pipelines.runtime import process_runtime

# Inputs a JSON request cannot carry.
_NOT_JSON_INPUTS = frozenset({"streaming_callback"})


def hayhooks_document(name: str, catalog: Any = None) -> dict[str, Any]:
    """The Hayhooks YAML document of pipeline `name` as a dict."""
    catalog = catalog or process_runtime().catalog
    spec = catalog.spec(name)
    document: dict[str, Any] = {"description": " ".join(spec.description.split())}
    # Built as the catalog builds it: an agent keeps the catalog's budget, the stores come from the catalog's settings.
    document.update(build_pipeline(spec, catalog.agent_timeout_s(), catalog.settings).to_dict())
    document["inputs"] = {key: list(value) for key, value in spec.inputs.items() if key not in _NOT_JSON_INPUTS}
    document["outputs"] = dict(spec.outputs)
    return document


def export_hayhooks_yaml(name: str, catalog: Any = None) -> str:
    """Pipeline `name` of the catalog as the text of a Hayhooks YAML file."""
    header = (
        f"# The '{name}' pipeline of the research assistant, for `hayhooks run` (deploy as {name}.yml).\n"
        "# Needs HAYSTACK_DESERIALIZATION_ALLOWLIST=components,pipelines,ingest,haystack_integrations\n"
    )
    return header + yaml.safe_dump(hayhooks_document(name, catalog), sort_keys=False, allow_unicode=True)
