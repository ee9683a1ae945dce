"""The pipeline catalog: loads `pipelines.yaml`, validates it, and runs its named pipelines (sync and async).

`pipelines.yaml` holds a top-level mapping `pipelines:` of named pipelines, each with a `description`, `inputs`
(input name -> the "component.socket"s it feeds), `outputs` (output name -> "component.socket") and `pipeline`
(Haystack's `Pipeline.to_dict()` shape). The CLI, the Streamlit app and the HTTP server all call
`runtime.catalog.research(...)` or `run(name, inputs)` of their runtime (`pipelines/runtime.py`), so they answer the
same way. Constructing a catalog changes no process-wide state: the set-up its runs rely on (the deserialisation
allowlist, Haystack's input copies, the timing tracer, log redaction) is `pipelines.runtime.setup()`.

A run given `sources` that leave some branches out runs the pipeline of that selection: the same definition without
those branches, built once and kept, with the same answer, fusion scores and statuses as the whole pipeline
(`pipelines/selection_pipelines.py`).
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import inspect
import threading
import time
import weakref
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from haystack import Pipeline, logging

from components.contracts.selection import AUTO, check_sources
from components.generation.follow_up import MAX_TURNS, FollowUpRewriter
from components.graph.factory import graph_store_from_settings
from components.graph.graph_search import GraphSearch
from components.graph.store import GraphUnavailable
from components.knowledge_base.factory import document_store_for
from components.knowledge_base.store import KnowledgeBaseUnavailable
from components.memory.recall import MemoryRecall
from components.redaction import remember_settings_secrets
from components.resilience.budget import question_budget
from components.resilience.errors import first_line
from components.resilience.scheduling import question_alone_on_loop
from components.settings import Settings, get_settings, settings_in_force
from components.text.dates import date_bounds
from components.tools.source_selection import select_sources
from components.validation import bounded_text
from pipelines.catalog_file import BUDGET_KEY, RESEARCH_PIPELINE, default_pipelines_file
from pipelines.heap import after_close, after_warm_up
from pipelines.research_result import ResearchResult
from pipelines.selection_pipelines import (
    SelectionCache,
    idle,
    idle_stages,
    selection_branches,
    unread_senders,
    unselected,
    without_branches,
)
from pipelines.timing import record_timings

logger = logging.getLogger(__name__)

_MAIN_LOOP: list[asyncio.Runner] = []


def _main_thread_runner() -> asyncio.Runner:
    """The main thread's event loop for `PipelineCatalog.run`, kept from one run to the next (the CLI, evaluations and
    benchmarks ask question after question there). A fresh loop per run (`asyncio.run`) starts the worker threads of
    its default executor, where Haystack runs the sync components, and joins them at the end, every question:
    measured on a busy machine, alternating question by question, 158 ms p50 with a fresh loop against 131 ms with a
    kept one (10,000 chunks, kb sources). Other threads (the app's script runs come and go) keep a loop per run, so
    no thread leaves a loop and its idle workers behind."""
    if not _MAIN_LOOP:
        _MAIN_LOOP.append(asyncio.Runner())
    return _MAIN_LOOP[0]


async def _alone(work: Awaitable[Any]) -> Any:
    """Await `work` (a pipeline run on a loop made for it) as the only question on its loop (`alone_on_loop`)."""
    with question_alone_on_loop():
        return await work


async def _kept(results: list[Any], work: Awaitable[Any]) -> None:
    """Await `work` and append its result to `results`, so the task running it ends with None. `asyncio.Runner.run`
    restores its Ctrl-C handler through `signal.getsignal`, which formats the handler it installed, and with it the
    finished task and that task's result: a whole research result cost about 0.5 ms a question to format."""
    results.append(await work)


# Our own packages may be deserialised from the catalog (Haystack's own are allowed by default), and the
# integrations' document stores (milvus-haystack lives outside `haystack_integrations`).
ALLOWED_MODULES = ["components", "pipelines", "ingest", "haystack", "haystack_integrations", "milvus_haystack"]
# Components whose `document_store: null` means "the knowledge base KB_BACKEND chooses": the catalog builds that
# integration store (for the component's `collection`, else KB_COLLECTION) and gives it to them.
# The research agent: its chat model's timeout follows the research pipeline's whole-question budget.
AGENT_COMPONENT = "components.tools.research_agent.ResearchAgent"
KNOWLEDGE_BASE_COMPONENTS = {
    "components.knowledge_base.search.KnowledgeBaseSearch",
    "components.knowledge_base.list_documents.ListDocuments",
    "components.knowledge_base.get_document.GetDocument",
    "components.ranking.research_ranker.ResearchRanker",
    "components.graph.graph_search.GraphSearch",
    "components.generation.hop_retriever.HopRetriever",
    "ingest.file_ingester.FileIngester",
}
# Components whose `graph_store: null` means "the graph GRAPH_BACKEND chooses": the catalog makes that store (for the
# component's `collection`, else KB_COLLECTION) from its own settings and gives it to them.
GRAPH_COMPONENTS = {
    "components.graph.graph_search.GraphSearch",
    "components.generation.hop_retriever.HopRetriever",
    "components.graph.entity_search.EntitySearch",
    "components.graph.entity_timeline.EntityTimeline",
    "components.graph.entity_relationships.EntityRelationships",
    "components.graph.comprehensive_search.ComprehensiveSearch",
}
MAX_QUESTION_CHARS = 2000


def outputs_to_include(spec: PipelineSpec) -> set[str]:
    """The components a run must name in `include_outputs_from` for `spec`'s named outputs: those with a named output
    that another component also reads.

    Haystack returns every output no component reads anyway; one that a component reads only for a component named in
    `include_outputs_from`, and then all of that component's outputs, each deep-copied again as the async run hands
    it on. Naming only what needs it spares those copies of what the next components already received.
    """
    read: set[str] = set()
    for connection in spec.pipeline.get("connections") or []:
        sender = str(connection.get("sender", ""))
        read.add(sender if "." in sender else f"{sender}.*")  # a sender without a socket: its only one
    return {
        source.split(".")[0]
        for source in spec.outputs.values()
        if source in read or f"{source.split('.')[0]}.*" in read
    }


def check_research_request(
    question: str,
    sources: list[str] | None,
    as_of: str | dt.date | None,
    top_k: int | None,
    filters: dict | None = None,
) -> dict[str, Any]:
    """A research question's request, checked the one way every caller (CLI, app, HTTP, evaluation) gets: the
    question stripped, the sources resolved (`all`, `auto`), as_of parsed into a `date` once, here, for every branch
    (`date_bounds`, with the filters' date_from/date_to checked against each other); bad input raises `ValueError`
    with one sentence."""
    text = bounded_text("The question", question, MAX_QUESTION_CHARS)
    if as_of is not None and not str(as_of).strip():
        raise ValueError(f"as_of must be a date as YYYY-MM-DD, not {as_of!r}")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 50):
        raise ValueError("top_k must be a whole number between 1 and 50.")
    if filters is not None and not isinstance(filters, dict):
        raise ValueError("filters must be a mapping of field to condition.")
    bounds = date_bounds(as_of, *((filters or {}).get(key) for key in ("date_from", "date_to")))
    return {
        "question": text,
        "sources": check_sources(sources),
        "as_of": bounds.as_of,
        "top_k": top_k,
        "filters": filters,
    }


class CatalogError(ValueError):
    """The catalog file or one of its pipelines is unusable; the message names the pipeline and the problem."""


class ResearchBudgetInvalid(CatalogError):
    """The research pipeline's YAML budget (`metadata.question_budget_s`) is not a usable number of seconds: the
    server's configuration when it shows on a request (a 503), never the caller's."""


@dataclass(frozen=True)
class PipelineSpec:
    """One named pipeline of the catalog as written in the YAML."""

    name: str
    description: str
    inputs: dict[str, list[str]]
    outputs: dict[str, str]
    pipeline: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "inputs": {key: list(value) for key, value in self.inputs.items()},
            "outputs": dict(self.outputs),
            "pipeline": self.pipeline,
        }


@dataclass
class _Entry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    pipeline: Pipeline | None = None
    branches: dict[str, str] | None = None  # component -> source: what a selection of sources chooses among
    unread: frozenset[str] | None = None  # what feeds only inputs nothing reads: left out of every selection's run
    idle: dict[str, dict[str, str]] | None = None  # stages a question may leave nothing to do (`idle_stages`)


@dataclass(frozen=True)
class _Selection:
    """A pipeline built for a selection of sources (`pipelines/selection_pipelines.py`): its spec and warmed
    pipeline, and per status collector the removed branches whose skipped statuses it gets back."""

    spec: PipelineSpec
    pipeline: Pipeline
    statuses: dict[str, tuple[tuple[str, str], ...]]


def allow_our_modules() -> None:
    """Put our packages on Haystack's process-wide deserialisation allowlist (idempotent).

    The catalog passes `allowed_modules` on every load anyway; this also lets anything else in the process (a
    Hayhooks YAML deployment, `Pipeline.loads` in a notebook) load what `dumps` wrote.
    """
    from haystack.core.serialization import allow_deserialization_module

    for module in ALLOWED_MODULES:
        allow_deserialization_module(module)


# `Pipeline.run_async` runs sync components (every source: each waits out its guarded call) through
# `asyncio.to_thread`, i.e. the loop's default executor, which has cpu + 4 threads (6 here): the sources of two
# concurrent questions would already queue behind each other's waits. Each loop that runs pipelines gets one larger
# pool, once; idle threads cost nothing, and a source that hangs holds its thread only until its deadline.
SOURCE_THREADS = 64
_loops_with_source_threads: weakref.WeakSet = weakref.WeakSet()


def give_loop_source_threads() -> None:
    """Give the running event loop a default executor of `SOURCE_THREADS` threads (idempotent per loop)."""
    loop = asyncio.get_running_loop()
    if loop in _loops_with_source_threads:
        return
    loop.set_default_executor(ThreadPoolExecutor(max_workers=SOURCE_THREADS, thread_name_prefix="research-source"))
    _loops_with_source_threads.add(loop)


def _socket(value: Any, where: str) -> tuple[str, str]:
    if not isinstance(value, str) or value.count(".") != 1 or not all(value.split(".")):
        raise CatalogError(f"{where} must be written 'component.socket', not {value!r}.")
    component, socket = value.split(".")
    return component, socket


def parse_catalog(data: Any, origin: str = "the catalog") -> dict[str, PipelineSpec]:
    """Check the catalog's shape (not yet its components) and return its specs by name."""
    if not isinstance(data, dict) or not isinstance(data.get("pipelines"), dict) or not data["pipelines"]:
        raise CatalogError(f"{origin} must hold a top-level mapping 'pipelines:' of named pipelines.")
    specs: dict[str, PipelineSpec] = {}
    for name, entry in data["pipelines"].items():
        if not isinstance(entry, dict):
            raise CatalogError(f"Pipeline '{name}' must be a mapping with description, inputs, outputs and pipeline.")
        pipeline = entry.get("pipeline")
        if not isinstance(pipeline, dict) or not isinstance(pipeline.get("components"), dict):
            raise CatalogError(f"Pipeline '{name}' has no 'pipeline:' mapping with its components.")
        inputs_raw = entry.get("inputs") or {}
        outputs_raw = entry.get("outputs") or {}
        if not isinstance(inputs_raw, dict) or not isinstance(outputs_raw, dict):
            raise CatalogError(f"Pipeline '{name}' must write 'inputs' and 'outputs' as mappings.")
        inputs: dict[str, list[str]] = {}
        for input_name, targets in inputs_raw.items():
            targets = [targets] if isinstance(targets, str) else list(targets or [])
            for target in targets:
                _socket(target, f"Pipeline '{name}' input '{input_name}'")
            inputs[str(input_name)] = targets
        outputs: dict[str, str] = {}
        for output_name, source in outputs_raw.items():
            _socket(source, f"Pipeline '{name}' output '{output_name}'")
            outputs[str(output_name)] = source
        specs[str(name)] = PipelineSpec(str(name), str(entry.get("description") or ""), inputs, outputs, pipeline)
    return specs


def with_document_stores(pipeline: dict[str, Any], settings: Settings | None = None) -> dict[str, Any]:
    """The pipeline dict with the settings' knowledge-base store in every knowledge-base component that names none,
    and the settings' graph store in every graph component that names none (`settings`: the catalog's, None: the
    process's).

    This is all `KB_BACKEND` and `GRAPH_BACKEND` do: choose which integration's store is built here. A component whose
    YAML names its `document_store` or `graph_store` keeps it, so one process can read two backends.
    """
    settings = settings or get_settings()
    components = dict(pipeline.get("components") or {})
    for name, entry in components.items():
        if not isinstance(entry, dict) or entry.get("type") not in KNOWLEDGE_BASE_COMPONENTS | GRAPH_COMPONENTS:
            continue
        params = dict(entry.get("init_parameters") or {})
        if entry.get("type") in KNOWLEDGE_BASE_COMPONENTS and params.get("document_store") is None:
            try:
                store = document_store_for(settings, params.get("collection"))
            except (KnowledgeBaseUnavailable, ValueError) as exc:
                raise CatalogError(f"Component '{name}' has no knowledge base: {first_line(exc, 400)}") from exc
            params["document_store"] = store.to_dict()
        if entry.get("type") in GRAPH_COMPONENTS and params.get("graph_store") is None:
            try:
                params["graph_store"] = graph_store_from_settings(params.get("collection"), settings).to_dict()
            except (GraphUnavailable, ValueError):
                pass  # none usable (GRAPH_BACKEND neo4j without NEO4J_URI, a bad collection): the component says why
        components[name] = {**entry, "init_parameters": params}
    return {**pipeline, "components": components}


def with_question_budget(name: str, pipeline: dict[str, Any], settings: Settings | None = None) -> dict[str, Any]:
    """The pipeline dict with `QUESTION_BUDGET_S` (of `settings`, None: the process's) in the research pipeline's
    metadata when its YAML gives none, so that the dumped YAML says how long a question may take (the catalog reads
    it back when it runs a question)."""
    metadata = pipeline.get("metadata") or {}
    if name != RESEARCH_PIPELINE or metadata.get(BUDGET_KEY) is not None:
        return pipeline
    return {**pipeline, "metadata": {**metadata, BUDGET_KEY: (settings or get_settings()).question_budget_s}}


def question_budget_of(pipeline: Pipeline) -> float:
    """The whole-question budget a built research pipeline carries in its metadata, checked like the setting."""
    value = (pipeline.metadata or {}).get(BUDGET_KEY)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
        raise ResearchBudgetInvalid(
            f"The research pipeline's metadata.{BUDGET_KEY} must be seconds in (0, 600], not {value!r}: fix it in "
            f"the pipelines file (PIPELINES_FILE)."
        )
    return float(value)


def with_agent_timeout(pipeline: dict[str, Any], budget_s: float | None) -> dict[str, Any]:
    """The pipeline dict with `budget_s` (the research pipeline's whole-question budget) as the chat-model timeout
    of every research agent whose YAML gives none; unchanged when `budget_s` is None."""
    if budget_s is None:
        return pipeline
    components = dict(pipeline.get("components") or {})
    for name, entry in components.items():
        if not isinstance(entry, dict) or entry.get("type") != AGENT_COMPONENT:
            continue
        params = dict(entry.get("init_parameters") or {})
        if params.get("timeout_s") is None:
            components[name] = {**entry, "init_parameters": {**params, "timeout_s": budget_s}}
    return {**pipeline, "components": components}


def build_pipeline(
    spec: PipelineSpec, agent_timeout_s: float | None = None, settings: Settings | None = None
) -> Pipeline:
    """A fresh (not warmed) pipeline from its spec, with its inputs and outputs checked against real sockets;
    `agent_timeout_s`: the chat-model timeout of a research agent whose YAML gives none (`with_agent_timeout`);
    `settings`: those that fill what the YAML leaves null (stores, budget; None: the process's)."""
    settings = settings or get_settings()
    try:
        filled = with_question_budget(spec.name, with_document_stores(spec.pipeline, settings), settings)
        with settings_in_force(settings):  # each component's `__init__` (and a loaded store) takes these settings
            pipeline = Pipeline.from_dict(with_agent_timeout(filled, agent_timeout_s), allowed_modules=ALLOWED_MODULES)
    except Exception as exc:  # noqa: BLE001 - Haystack raises many kinds; the analyst needs one sentence
        # Haystack's "Couldn't deserialize component ..." hides what was wrong: the cause (a missing model file, an
        # unknown rule family) says it.
        cause = f" ({first_line(exc.__cause__, 300)})" if exc.__cause__ is not None else ""
        raise CatalogError(f"Pipeline '{spec.name}' cannot be built: {first_line(exc, 400)}{cause}") from exc
    if spec.name == RESEARCH_PIPELINE:
        question_budget_of(pipeline)  # a budget out of range is the YAML's error, said when it is built
    check_sockets(spec, pipeline)
    return pipeline


def check_sockets(spec: PipelineSpec, pipeline: Pipeline) -> None:
    """Every named input feeds an open input socket, every named output is a real output socket, and every
    mandatory open input is fed by some named input."""
    open_inputs = pipeline.inputs()
    all_inputs = pipeline.inputs(include_components_with_connected_inputs=True)
    all_outputs = pipeline.outputs(include_components_with_connected_outputs=True)
    names = {name for name, _ in pipeline.walk()}
    fed: set[tuple[str, str]] = set()
    for input_name, targets in spec.inputs.items():
        for target in targets:
            component, socket = _socket(target, f"Pipeline '{spec.name}' input '{input_name}'")
            if component not in names:
                raise CatalogError(
                    f"Pipeline '{spec.name}' input '{input_name}' feeds unknown component '{component}'."
                )
            sockets = all_inputs.get(component, {})
            if socket not in sockets:
                raise CatalogError(
                    f"Pipeline '{spec.name}' input '{input_name}' feeds '{target}', but '{component}' has no input "
                    f"'{socket}' (it has: {', '.join(sorted(sockets))})."
                )
            if socket not in open_inputs.get(component, {}):
                raise CatalogError(
                    f"Pipeline '{spec.name}' input '{input_name}' feeds '{target}', "
                    "which another component already feeds."
                )
            fed.add((component, socket))
    for output_name, source in spec.outputs.items():
        component, socket = _socket(source, f"Pipeline '{spec.name}' output '{output_name}'")
        if component not in names:
            raise CatalogError(f"Pipeline '{spec.name}' output '{output_name}' names unknown component '{component}'.")
        sockets = all_outputs.get(component, {})
        if socket not in sockets:
            raise CatalogError(
                f"Pipeline '{spec.name}' output '{output_name}' names '{source}', but '{component}' has no output "
                f"'{socket}' (it has: {', '.join(sorted(sockets))})."
            )
    for component, sockets in open_inputs.items():
        # An optional input the component needs all the same (a chat model's prompt: `needed_inputs()`) counts too.
        needs = getattr(pipeline.get_component(component), "needed_inputs", None)
        needed = frozenset(needs()) if callable(needs) else frozenset()
        for socket, info in sockets.items():
            if (info.get("is_mandatory") or socket in needed) and (component, socket) not in fed:
                raise CatalogError(f"Pipeline '{spec.name}' needs '{component}.{socket}', but no named input feeds it.")


class PipelineCatalog:
    """The named pipelines of one catalog file: built on first use, warmed once, shared by every thread.

    Usage:
    ```python
    catalog = PipelineCatalog()  # PIPELINES_FILE, ./pipelines.yaml or the package's
    catalog.names()  # ['research', 'documents', ...]
    result = catalog.research("Who won Super Bowl 50?", sources=["kb"], top_k=5)
    result.answer, result.citations, result.chunks, result.statuses
    ```
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        specs: dict[str, PipelineSpec] | None = None,
        question_budget_s: float | None = None,
        settings: Settings | None = None,
    ) -> None:
        # The settings that fill what the catalog file leaves null (the knowledge-base and graph stores, the question
        # budget, the chat model), read once here: None takes the process's (`get_settings()`).
        self.settings = settings = settings or get_settings()
        # The whole-question budget: this one when given, else the research pipeline's (its YAML's metadata, which
        # the build fills from QUESTION_BUDGET_S when the YAML gives none).
        self.question_budget_s = question_budget_s
        self._chat_settings = {
            "generator": settings.generator,
            "model": settings.openai_model,
            "api_base_url": settings.openai_base_url,
        }
        # The settings' secrets (a `.env` file's too) for redaction, read now rather than per message. The global
        # patches (log redaction, input copies, the tracer) are `pipelines.runtime.setup()`'s, not the catalog's.
        remember_settings_secrets()
        if specs is None:
            self.path = Path(path) if path is not None else default_pipelines_file(settings)
            specs = self._read(self.path)
        else:
            self.path = Path(path) if path is not None else None  # type: ignore[assignment]
        self._specs = specs
        self._entries = {name: _Entry() for name in specs}
        # Per (pipeline, removed branches): the pipeline without the branches of the sources a question leaves out.
        self._selections = SelectionCache(self._build_selection, _close_selection)
        self._rewriter: Any = None  # the follow-up rewriter, made for the first follow-up
        self._follow_up_lock = threading.Lock()

    @staticmethod
    def _read(path: Path) -> dict[str, PipelineSpec]:
        if not path.is_file():
            raise CatalogError(f"The pipeline catalog {path} does not exist; set PIPELINES_FILE to a pipelines.yaml.")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise CatalogError(f"The pipeline catalog {path} is not valid YAML: {first_line(exc, 400)}") from exc
        return parse_catalog(data, origin=f"The pipeline catalog {path}")

    @classmethod
    def loads(cls, text: str) -> PipelineCatalog:
        """A catalog from YAML text (what `dumps` wrote, or a test's)."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CatalogError(f"The pipeline catalog is not valid YAML: {first_line(exc, 400)}") from exc
        return cls(specs=parse_catalog(data))

    # -- what is in it ------------------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The pipelines' names, in file order."""
        return list(self._specs)

    def spec(self, name: str) -> PipelineSpec:
        """The YAML spec of one pipeline."""
        try:
            return self._specs[name]
        except KeyError:
            raise CatalogError(
                f"There is no pipeline '{name}' in the catalog; it has: {', '.join(self._specs) or 'none'}."
            ) from None

    def validate(self) -> None:
        """Build every pipeline (without warming it) and check its inputs and outputs; raises `CatalogError`."""
        for name in self._specs:
            build_pipeline(self._specs[name], settings=self.settings)

    def get(self, name: str) -> Pipeline:
        """The warmed pipeline `name`, built once per catalog (thread-safe)."""
        spec = self.spec(name)
        entry = self._entries[name]
        if entry.pipeline is not None:
            return entry.pipeline
        with entry.lock:
            if entry.pipeline is None:
                pipeline = build_pipeline(spec, self.agent_timeout_s(), self.settings)
                with settings_in_force(self.settings):  # what a warm-up opens follows the catalog's settings
                    pipeline.warm_up()
                entry.pipeline = pipeline
                after_warm_up()  # a set-up process keeps what the warm-up loaded out of later collections
        return entry.pipeline

    def agent_timeout_s(self) -> float | None:
        """The whole-question budget a research agent's chat model waits: the catalog's when it was given one, else
        the research pipeline's YAML metadata (QUESTION_BUDGET_S when it gives none); None without a research
        pipeline (the agent then waits QUESTION_BUDGET_S)."""
        if self.question_budget_s is not None:
            return float(self.question_budget_s)
        research = self._specs.get(RESEARCH_PIPELINE)
        if research is None:
            return None
        value = with_question_budget(RESEARCH_PIPELINE, research.pipeline, self.settings)["metadata"][BUDGET_KEY]
        return None if isinstance(value, bool) or not isinstance(value, int | float) else float(value)

    def close(self) -> None:
        """Forget the built pipelines, closing each component that has a `close()` (its stores, clients)."""
        dropped = False
        for entry in self._entries.values():
            with entry.lock:
                pipeline, entry.pipeline = entry.pipeline, None
            if pipeline is None:
                continue
            dropped = True
            _close_components(pipeline)
        for selection in self._selections.clear():
            if selection is not None:
                dropped = True
                _close_components(selection.pipeline)
        if dropped:
            after_close()  # what the warm-ups froze includes these pipelines: let the collector have them back

    def dumps(self) -> str:
        """The catalog as YAML, each pipeline as it is now (`Pipeline.to_dict()` of the built pipeline)."""
        data = {"pipelines": {}}
        for name, spec in self._specs.items():
            entry = self._entries[name]
            pipeline = entry.pipeline
            if pipeline is None:
                pipeline = build_pipeline(spec, self.agent_timeout_s(), self.settings)
            data["pipelines"][name] = {**spec.to_dict(), "pipeline": pipeline.to_dict()}
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

    # -- running ------------------------------------------------------------------------------------------------

    def _pipeline_inputs(self, spec: PipelineSpec, inputs: dict[str, Any]) -> dict[str, dict[str, Any]]:
        unknown = sorted(set(inputs) - set(spec.inputs))
        if unknown:
            raise CatalogError(
                f"Pipeline '{spec.name}' has no input {', '.join(repr(u) for u in unknown)}; "
                f"it takes: {', '.join(spec.inputs)}."
            )
        data: dict[str, dict[str, Any]] = {}
        for input_name, value in inputs.items():
            if value is None:
                continue  # the socket's own default applies
            for target in spec.inputs[input_name]:
                component, socket = target.split(".")
                data.setdefault(component, {})[socket] = value
        return data

    @staticmethod
    def _named_outputs(
        spec: PipelineSpec, raw: dict[str, Any], timings: dict[str, float], started: float
    ) -> dict[str, Any]:
        outputs: dict[str, Any] = {}
        for output_name, source in spec.outputs.items():
            component, socket = source.split(".")
            outputs[output_name] = (raw.get(component) or {}).get(socket)
        outputs["timings"] = {**timings, "total_ms": round((time.perf_counter() - started) * 1000.0, 3)}
        return outputs

    def run(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run pipeline `name` with named `inputs`; returns its named outputs plus `timings` (ms per component
        and `total_ms`).

        Independent branches run concurrently: from a thread without a running event loop (the CLI, the app, a
        script) the pipeline runs on a loop of its own, where the stages after the sources run on the loop rather
        than in worker threads (`alone_on_loop`: nothing else runs there); inside a running loop, where that is
        impossible, it runs its components one after another (`run_async` is the concurrent way there).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if threading.current_thread() is not threading.main_thread():
                return asyncio.run(_alone(self.run_async(name, inputs)))
            outputs: list[dict[str, Any]] = []
            _main_thread_runner().run(
                _kept(outputs, _alone(self.run_async(name, inputs))), context=contextvars.copy_context()
            )
            return outputs[0]
        return self.run_sequential(name, inputs)

    def run_sequential(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """`run` with one component at a time, in the calling thread."""
        spec = self.spec(name)
        pipeline = self.get(name)
        with self._selections.lease(self._selection_key(name, inputs)) as selection:
            run_spec, run_pipeline = (spec, pipeline) if selection is None else (selection.spec, selection.pipeline)
            data = self._pipeline_inputs(run_spec, inputs)
            include = outputs_to_include(run_spec)
            started = time.perf_counter()
            with record_timings() as timings:
                raw = run_pipeline.run(data, include_outputs_from=include)
            if selection is not None:
                raw = self._with_skipped(spec, pipeline, selection, raw, inputs)
        return self._named_outputs(spec, raw, timings, started)

    async def run_async(self, name: str, inputs: dict[str, Any], concurrency_limit: int = 8) -> dict[str, Any]:
        """`run` on the event loop: independent branches run concurrently."""
        give_loop_source_threads()
        spec = self.spec(name)
        pipeline = (
            self.get(name) if self._entries[name].pipeline is not None else await asyncio.to_thread(self.get, name)
        )
        key = self._selection_key(name, inputs)
        held = await self._selections.hold_async(key)  # built and warmed off the loop, once
        with held as selection:
            run_spec, run_pipeline = (spec, pipeline) if selection is None else (selection.spec, selection.pipeline)
            data = self._pipeline_inputs(run_spec, inputs)
            include = outputs_to_include(run_spec)
            started = time.perf_counter()
            with record_timings() as timings:
                raw = await run_pipeline.run_async(
                    data, include_outputs_from=include, concurrency_limit=concurrency_limit
                )
            if selection is not None:
                raw = self._with_skipped(spec, pipeline, selection, raw, inputs)
        return self._named_outputs(spec, raw, timings, started)

    # -- the pipeline of a selection of sources -----------------------------------------------------------------

    def _selection_key(self, name: str, inputs: dict[str, Any]) -> tuple[str, frozenset[str]] | None:
        """(pipeline, the branches `inputs`' sources leave out, what feeds only inputs nothing reads and the stages
        `inputs` leave nothing to do), or None when the whole pipeline runs. What feeds only unread inputs
        (`unread_senders`) and the idle stages (`idle_stages`: the memory writer without a session) go where a
        selection leaves a source out anyway; with every source asked the whole pipeline runs as it is, so a catalog
        builds no second pipeline for it (nor reads its settings again at question time)."""
        entry = self._entries[name]
        if entry.branches is None or entry.unread is None or entry.idle is None:
            spec, whole = self._specs[name], self.get(name)
            entry.unread = unread_senders(spec.inputs, spec.outputs, spec.pipeline, whole)
            entry.idle = idle_stages(spec.inputs, spec.outputs, spec.pipeline, whole)
            entry.branches = selection_branches(spec.inputs, whole)
        removed = unselected(entry.branches, inputs.get("sources"))
        if removed:
            removed |= entry.unread | idle(entry.idle, self.get(name), inputs)
        return (name, removed) if removed else None

    def _build_selection(self, key: tuple[str, frozenset[str]] | None) -> _Selection | None:
        """The warmed pipeline for `key` (`_selection_key`), or None when it runs whole."""
        if key is None:
            return None
        name, removed = key
        spec = self._specs[name]
        pruned = without_branches(spec.inputs, spec.pipeline, removed)
        if pruned is None:
            return None
        selected = PipelineSpec(spec.name, spec.description, pruned.inputs, spec.outputs, pruned.pipeline)
        pipeline = build_pipeline(selected, self.agent_timeout_s(), self.settings)
        whole = self.get(name)
        for component_name, component in pipeline.walk():
            # A component that can share what its twin in the whole pipeline loaded (the graph branch's graph)
            # warms up from it: one copy in memory per catalog, not one per selection.
            warm_up_from = getattr(component, "warm_up_from", None)
            if callable(warm_up_from):
                warm_up_from(whole.get_component(component_name))
        with settings_in_force(self.settings):
            pipeline.warm_up()
        # Not frozen: what a selection loads beyond the whole pipeline's (frozen) models is a few components, which
        # the collector may walk; a full collection per build, and thawing the whole heap per dropped selection,
        # held up every question on the loop for about a second each time selections churned.
        return _Selection(selected, pipeline, pruned.statuses)

    def _with_skipped(
        self, spec: PipelineSpec, whole: Pipeline, selection: _Selection, raw: dict[str, Any], inputs: dict[str, Any]
    ) -> dict[str, Any]:
        """`raw` with the removed branches' statuses back in their collectors' lists, as the whole pipeline gives
        them: each branch's own `run` (the whole pipeline's component) answers "skipped" at once."""
        if not selection.statuses:
            return raw
        data = self._pipeline_inputs(spec, inputs)
        raw = dict(raw)
        for collector, senders in selection.statuses.items():
            skipped = [whole.get_component(branch).run(**data.get(branch, {}))[socket] for branch, socket in senders]
            collected = (raw.get(collector) or {}).get("statuses") or []
            merged = selection.pipeline.get_component(collector).run(statuses=[*skipped, *collected])
            raw[collector] = {**(raw.get(collector) or {}), **merged}
        return raw

    # -- the research question ----------------------------------------------------------------------------------

    def _research_inputs(
        self,
        question: str,
        sources: list[str] | None,
        as_of: str | dt.date | None,
        filters: dict | None,
        top_k: int | None,
        session_id: str | None,
        streaming_callback: Any,
    ) -> dict[str, Any]:
        checked = check_research_request(question, sources, as_of, top_k, filters)
        spec = self.spec(RESEARCH_PIPELINE)
        inputs = {**checked, "session_id": session_id, "streaming_callback": streaming_callback}
        # Inputs a catalog's research pipeline does not take (e.g. session_id before memory exists) are dropped.
        return {key: value for key, value in inputs.items() if key in spec.inputs and value is not None}

    def research(
        self,
        question: str,
        sources: list[str] | None = None,
        as_of: str | dt.date | None = None,
        filters: dict | None = None,
        top_k: int | None = None,
        session_id: str | None = None,
        streaming_callback: Any = None,
        history: list[dict] | None = None,
        as_typed: bool = False,
    ) -> ResearchResult:
        """Answer `question` with the `research` pipeline; bad input raises `ValueError` with one sentence.

        The whole question (every source and the generator) runs within `QUESTION_BUDGET_S`. A follow-up question
        is rewritten against the earlier turns first (`history`, oldest first, else the session's memory), unless
        `as_typed`; the result's `asked` is the question as typed and `answered_as` the rewrite.
        """
        inputs = self._research_inputs(question, sources, as_of, filters, top_k, session_id, streaming_callback)
        pipeline = self.get(RESEARCH_PIPELINE)  # building and warming it (first question only) is not the question's
        asked = inputs["question"]
        with question_budget(self._budget(pipeline)):
            answered_as = "" if as_typed else self.follow_up(asked, history, session_id)
            inputs["question"] = answered_as or asked
            selection = self._resolve_auto(inputs)
            result = ResearchResult.from_outputs(inputs["question"], self.run(RESEARCH_PIPELINE, inputs))
        update: dict[str, Any] = {"asked": asked, "answered_as": answered_as}
        return result.model_copy(update={**update, "source_selection": selection} if selection else update)

    async def research_async(self, question: str, **options: Any) -> ResearchResult:
        """`research` on the event loop, its branches concurrent, within `QUESTION_BUDGET_S`; `options` are
        `research`'s (sources, as_of, filters, top_k, session_id, streaming_callback)."""
        arguments = inspect.signature(self.research).bind(question, **options)  # TypeError for an unknown option
        arguments.apply_defaults()
        history, as_typed = arguments.arguments.pop("history"), arguments.arguments.pop("as_typed")
        inputs = self._research_inputs(*arguments.args)
        pipeline = self._entries[RESEARCH_PIPELINE].pipeline or await asyncio.to_thread(self.get, RESEARCH_PIPELINE)
        asked = inputs["question"]
        with question_budget(self._budget(pipeline)):
            session_id = arguments.arguments.get("session_id")
            answered_as = "" if as_typed else await asyncio.to_thread(self.follow_up, asked, history, session_id)
            inputs["question"] = answered_as or asked
            selection = self._resolve_auto(inputs)
            result = ResearchResult.from_outputs(inputs["question"], await self.run_async(RESEARCH_PIPELINE, inputs))
        update: dict[str, Any] = {"asked": asked, "answered_as": answered_as}
        return result.model_copy(update={**update, "source_selection": selection} if selection else update)

    def _budget(self, pipeline: Pipeline) -> float:
        """The whole-question budget: the catalog's when it was given one, else the research pipeline's."""
        return self.question_budget_s if self.question_budget_s is not None else question_budget_of(pipeline)

    def follow_up(self, question: str, history: list[dict] | None, session_id: str | None) -> str:
        """The question rewritten against the earlier turns (`history`, else the session's memory), or "" when it
        stands alone or there is nothing earlier. Read once per question, before any source is asked."""
        if history is None and session_id:
            memory = next(
                (part for _, part in self.get(RESEARCH_PIPELINE).walk() if isinstance(part, MemoryRecall)), None
            )
            turns = memory.session_turns(session_id, MAX_TURNS) if memory is not None else []
            history = [{"question": turn.query, "answer": turn.response, "entities": turn.entities} for turn in turns]
        if not history:
            return ""
        with self._follow_up_lock:
            if self._rewriter is None:
                self._rewriter = FollowUpRewriter(**self._chat_settings)
        return self._rewriter.run(question=question, history=history)["answered_as"]

    def _resolve_auto(self, inputs: dict[str, Any]) -> dict[str, Any] | None:
        """Replace `auto` in the sources by the sources the question is worth asking; the reasons are returned.
        The entities the question names are looked up in the graph the research pipeline's graph branch reads."""
        sources = inputs.get("sources")
        if not sources or AUTO not in sources:
            return None
        selection = select_sources(inputs["question"], known_entities=self._known_entities())
        chosen = [source for source in sources if source != AUTO]
        chosen += [source for source in selection.sources if source not in chosen]
        inputs["sources"] = chosen or ["kb"]
        return selection.to_dict()

    def _known_entities(self) -> Any:
        """The research pipeline's graph branch's entity lookup, or None when it has no graph branch."""
        for _, component in self.get(RESEARCH_PIPELINE).walk():
            if isinstance(component, GraphSearch):
                return component.known_entities
        return None


def _close_components(pipeline: Pipeline) -> None:
    """Close each component of `pipeline` that has a `close()` (its stores, clients)."""
    for name, component in pipeline.walk():
        close = getattr(component, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - one component failing to close must not keep others open
                logger.warning("Closing {component} failed: {reason}", component=name, reason=first_line(exc))


def _close_selection(selection: _Selection | None) -> None:
    """Close a selection's pipeline the cache dropped."""
    if selection is not None:
        _close_components(selection.pipeline)  # never frozen: the collector takes it back without a thaw
