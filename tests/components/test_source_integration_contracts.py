"""The public surface the sources, the database and the prompt builder use of their integrations, at the versions
`constraints.txt` pins (as `knowledge_base/test_integration_contracts.py` does for the document stores): an
integration release that renames or changes one of them fails a test named after it here."""

from __future__ import annotations

import inspect

import pytest

from tests.components.knowledge_base.test_integration_contracts import _accepts, _assert_pinned

USED = ("firecrawl-py", "pgserver", "fasteners", "lxml", "haystack-ai")


@pytest.mark.parametrize("distribution", USED)
def test_the_installed_integration_is_the_version_the_contracts_were_checked_at(distribution: str) -> None:
    _assert_pinned(distribution)


def test_firecrawl_v2_client_and_its_public_http_client() -> None:
    from firecrawl.v2 import FirecrawlClient
    from firecrawl.v2.utils.http_client import HttpClient

    _accepts(FirecrawlClient.__init__, "api_key", "api_url", "timeout", "max_retries", "backoff_factor")
    _accepts(FirecrawlClient.search, "query", "limit", "include_domains", "exclude_domains", "timeout")
    _accepts(FirecrawlClient.scrape, "url", "formats", "only_main_content", "timeout", "location")
    _accepts(HttpClient.__init__, "api_key", "api_url", "timeout", "max_retries", "backoff_factor", "origin")
    _accepts(HttpClient.post, "endpoint", "data", "headers", "timeout")
    _accepts(HttpClient.get, "endpoint", "headers", "timeout")
    client = FirecrawlClient(api_key="fc-contract", api_url="http://127.0.0.1:9", timeout=1.0)
    assert isinstance(client.http_client, HttpClient)
    for name in ("api_key", "api_url", "timeout", "origin"):
        assert hasattr(client.http_client, name), f"HttpClient has no public attribute {name}"


def test_pgserver_server_handle_and_its_lock_file() -> None:
    import fasteners
    import pgserver
    from pgserver.postgres_server import PostgresServer
    from pgserver.utils import DiskList

    _accepts(pgserver.get_server, "pgdata", "cleanup_mode")
    for name in ("ensure_postgres_running", "get_uri"):
        assert callable(getattr(PostgresServer, name, None)), f"PostgresServer has no method {name}"
    assert "global_process_id_list" in inspect.getsource(PostgresServer.__init__)
    assert PostgresServer.lock_path.name
    for name in ("get", "put", "get_and_add"):
        assert callable(getattr(DiskList, name, None)), f"DiskList has no method {name}"
    _accepts(fasteners.InterProcessLock.__init__, "path")


def test_haystack_prompt_rendering_parts() -> None:
    from haystack.components.builders import ChatPromptBuilder
    from haystack.utils.jinja2_chat_extension import ChatMessageExtension
    from haystack.utils.jinja2_sandbox import HaystackSandboxedEnvironment

    environment = HaystackSandboxedEnvironment(extensions=[ChatMessageExtension])
    assert environment.from_string("{{ x }}").render(x="y") == "y"
    builder = ChatPromptBuilder(template="{% message role='user' %}{{ q }}{% endmessage %}", required_variables=["q"])
    assert (builder.template, builder.variables, builder.required_variables) == (
        "{% message role='user' %}{{ q }}{% endmessage %}",
        ["q"],
        ["q"],
    )
