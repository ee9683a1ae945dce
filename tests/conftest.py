"""Shared fixtures: an isolated data folder, one embedded PostgreSQL per test session, the local model."""

from __future__ import annotations

import atexit
import errno
import ipaddress
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Settings read from the environment and a `.env`; tests must not see a developer's own settings.
for _name in list(os.environ):
    if _name.upper() in {
        "DATABASE_URL",
        "KB_BACKEND",
        "KB_COLLECTION",
        "MILVUS_URI",
        "QDRANT_URL",
        "QDRANT_PATH",
        "GENERATOR",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "API_TOKEN",
    }:
        del os.environ[_name]

# Hosted services are never reached from tests: sources that are not pointed at a contract server fail fast here.
os.environ["ARXIV_API_URL"] = "http://127.0.0.1:9/api/query"
os.environ["ARXIV_MIN_INTERVAL_S"] = "0"
os.environ["WIKIPEDIA_API_URL"] = "http://127.0.0.1:9/w/api.php"
os.environ.pop("FIRECRAWL_API_KEY", None)
os.environ.pop("FIRECRAWL_API_URL", None)
os.environ.pop("ZEP_API_URL", None)
os.environ.pop("NEO4J_URI", None)

# Tests send traffic only to this machine: a connection to any other address fails at once, before a packet leaves,
# whatever the code under test does (a test whose guard regressed must fail, not reach a real address). Tests marked
# `external` (a real hosted service, run only when its URL and key are set) are let through.
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_EXTERNAL = {"allowed": False}


def _refused(sock: socket.socket, address: object) -> OSError | None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or _EXTERNAL["allowed"]:
        return None
    host = str(address[0]) if isinstance(address, tuple) and address else str(address)
    if host == "localhost":
        return None
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return OSError(errno.EHOSTUNREACH, f"tests connect only to loopback addresses, not to the name {host}")
    if ip.is_loopback or ip.is_unspecified or getattr(ip, "ipv4_mapped", None) and ip.ipv4_mapped.is_loopback:
        return None
    return OSError(errno.ENETUNREACH, f"tests connect only to loopback addresses, not to {host}")


def _loopback_connect(sock: socket.socket, address: object) -> None:
    if (error := _refused(sock, address)) is not None:
        raise error
    return _connect(sock, address)


def _loopback_connect_ex(sock: socket.socket, address: object) -> int:
    if (error := _refused(sock, address)) is not None:
        return error.errno
    return _connect_ex(sock, address)


socket.socket.connect = _loopback_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _loopback_connect_ex  # type: ignore[method-assign]


def pytest_runtest_setup(item: pytest.Item) -> None:
    _EXTERNAL["allowed"] = item.get_closest_marker("external") is not None


# One short, private data folder for the whole session (unix socket paths have a length limit).
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="ra-test-"))
os.environ["RESEARCH_DATA_DIR"] = str(_SESSION_DIR / "data")
os.environ["XDG_RUNTIME_DIR"] = str(_SESSION_DIR / "run")
(_SESSION_DIR / "run").mkdir(mode=0o700)


def _remove_session_dir() -> None:
    # Registered before any embedded server starts, so it runs after pgserver's own exit handler has stopped it
    # (exit handlers run last-registered first). A server that is still running (another process using it) keeps
    # the folder; otherwise the session's few hundred megabytes of database files go with the session. An exit
    # handler never raises: a file that vanishes while the folder is walked (a server still writing) keeps it.
    try:
        in_use = any(_SESSION_DIR.rglob("postmaster.pid"))
    except OSError:
        return
    if not in_use:
        shutil.rmtree(_SESSION_DIR, ignore_errors=True)


atexit.register(_remove_session_dir)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from components.database import close_pools

    close_pools()


def pytest_unconfigure(config: pytest.Config) -> None:
    # pgserver stops its server at interpreter exit; the folder goes after that in atexit order is not
    # guaranteed, so only the parts that are ours and not in use are removed here.
    shutil.rmtree(_SESSION_DIR / "work", ignore_errors=True)


@pytest.fixture(scope="session")
def session_dir() -> Path:
    """The session's private folder."""
    return _SESSION_DIR


@pytest.fixture(scope="session")
def settings():
    """The settings as the tests' environment defines them."""
    from components.settings import reload_settings

    return reload_settings()


@pytest.fixture(scope="session")
def database_url(settings) -> str:
    """The session's embedded PostgreSQL (pgvector), started once."""
    from components.database import database_url

    return database_url(settings)


@pytest.fixture(scope="session")
def embedding_model(settings):
    """The bundled all-MiniLM-L6-v2, loaded once."""
    from components.embedding import get_embedding_model

    return get_embedding_model()


@pytest.fixture()
def collection_name() -> str:
    """A fresh collection (table) name per test, so tests never see each other's data."""
    return f"t_{uuid.uuid4().hex[:10]}"


@pytest.fixture()
def store(database_url, collection_name):
    """A knowledge base in a fresh collection of the session's PostgreSQL, for tests that ingest into one."""
    from components.knowledge_base.factory import open_knowledge_base

    kb = open_knowledge_base(collection=collection_name)
    yield kb
    kb.drop()
    kb.close()


@pytest.fixture()
def work_dir(session_dir: Path) -> Iterator[Path]:
    """A fresh folder for files a test writes."""
    path = session_dir / "work" / uuid.uuid4().hex[:8]
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _process_set_up() -> None:
    """The process-wide set-up every entry point of the product makes (`pipelines.runtime.setup`), so tests run
    pipelines as the product does; the tests of the set-up itself run in fresh processes."""
    from pipelines.runtime import setup

    setup()


@pytest.fixture(autouse=True)
def _fresh_resilience_state() -> Iterator[None]:
    """Breakers, caches and telemetry never leak from one test into another."""
    from components.resilience import reset_resilience_state, telemetry

    reset_resilience_state()
    telemetry.reset()
    yield


# Tests never ask DNS. For the address policy every host name resolves to one public address, except names under
# .invalid (which never resolve, RFC 2606). A test that needs a name resolving to an inside address patches
# `public_address.resolve` itself.
STUB_PUBLIC_ADDRESS = "93.184.215.14"


def stub_resolve(host: str, port: int) -> list[str]:
    return [] if host.lower().rstrip(".").endswith(".invalid") else [STUB_PUBLIC_ADDRESS]


@pytest.fixture(autouse=True)
def _stubbed_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    from components.tools import public_address

    monkeypatch.setattr(public_address, "resolve", stub_resolve)
