"""`SourceGuard`: runs one source's work under the tool contract.

Every source component hands its work to a guard and gets back chunks and a `SourceStatus`, never an exception:
a per-call timeout (which also bounds retries), the whole-question deadline (`components.resilience.budget`),
retries with exponential backoff for retryable faults (honouring Retry-After), a circuit breaker shared by every
instance of the same source in the process, a minimum interval between calls (rate limit), and an optional TTL
cache.

Threads: sync work runs in one worker thread per call (idle daemon workers are reused), and every attempt of that
call (retries, back-off sleeps) runs in that same thread, which gives up once the deadline has passed. A thread
stuck in a call that never returns cannot be killed; the guard abandons it at the timeout and starts no other thread
for that source until it ends (later calls wait for it within their own budget, then report the source as still
hung). So a source that hangs for an hour costs one thread, not one per retry per question. Components are sync:
`Pipeline.run_async` runs each in a worker thread of its own (a source that was not selected answers on the loop:
`scheduling.async_twin`), so the research pipeline's branches still run side by side.

The cache is cachetools' TTL cache. The retries, breaker and rate gate are the project's own policy, kept rather than
rebuilt on tenacity/pybreaker: those libraries retry inside the calling thread and cannot abandon a hung call, which
is the part that matters here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import hashlib
import json
import queue
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import cachetools
from haystack import logging

from components.contracts import BranchDocuments, ContextChunk, SourceStatus, StatusKind, chunk_to_document
from components.contracts.selection import source_selected
from components.resilience.budget import deadline_scope, question_deadline
from components.resilience.errors import Fault, RetryableError, ServiceUnreachable, SourceError, classify_exception
from components.resilience.telemetry import telemetry
from components.serialization import InitParameterSerialization
from components.settings import Settings, default_setting, get_settings
from components.validation import positive, within

logger = logging.getLogger(__name__)


class _DaemonWorkers:
    """Daemon threads that run submitted work, each kept for the next piece while it is idle (up to `idle_s`).

    They are daemons, so a timeout can abandon a call and a hung call never delays the process's exit
    (ThreadPoolExecutor workers are joined at interpreter exit, so an abandoned request would hold the CLI open).
    The submitter's context (the question's deadline among it) goes with the work. Starting a thread waits until
    the new thread runs, which on a busy machine took 2-3 ms of every source call; an idle worker takes the next
    piece at once. A worker whose work never returns stays with it (the guard abandons the call and starts no other
    for that source), so a hung call still holds exactly one thread.
    """

    def __init__(self, idle_s: float = 30.0) -> None:
        self.idle_s = idle_s
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, work: Callable[[], Any]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that idle worker is this work's
        self._queue.put((future, contextvars.copy_context(), work))
        if start:
            threading.Thread(target=self._serve, name="source-call", daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            try:
                future, context, work = self._queue.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # else a submitter counted on this worker: its work is on the way
                        self._idle -= 1
                        return
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(work))
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                    future.set_exception(exc)
            del future, context, work  # an idle worker holds no result
            with self._lock:
                self._idle += 1


# Runs `work` (a no-argument callable) in a daemon worker thread: see `_DaemonWorkers`.
submit_in_thread = _DaemonWorkers().submit


@dataclass(frozen=True)
class ResiliencePolicy:
    """The knobs of the tool contract for one source (the defaults of those with a setting are that setting's own:
    TOOL_TIMEOUT_S, TOOL_RETRIES, BREAKER_FAILURES, BREAKER_COOLDOWN_S, CACHE_TTL_S)."""

    timeout_s: float = default_setting("tool_timeout_s")
    retries: int = default_setting("tool_retries")
    backoff_base_s: float = 0.2
    backoff_max_s: float = 4.0
    breaker_failures: int = default_setting("breaker_failures")
    breaker_cooldown_s: float = default_setting("breaker_cooldown_s")
    cache_ttl_s: float = default_setting("cache_ttl_s")
    cache_size: int = 256
    min_interval_s: float = 0.0

    def __post_init__(self) -> None:
        positive("timeout_s", self.timeout_s)
        within("retries", self.retries, 0, 3)
        if self.breaker_failures < 1:
            raise ValueError("breaker_failures must be at least 1")
        if min(self.backoff_base_s, self.backoff_max_s, self.breaker_cooldown_s, self.cache_ttl_s) < 0:
            raise ValueError("backoff, cool-down and cache times cannot be negative")
        if self.min_interval_s < 0 or self.cache_size < 1:
            raise ValueError("min_interval_s cannot be negative and cache_size must be at least 1")

    def to_dict(self) -> dict[str, Any]:
        """Plain values for serialisation."""
        return asdict(self)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> ResiliencePolicy:
        """The policy `settings` (None: those in force) describe, with per-source overrides."""
        settings = settings or get_settings()
        values: dict[str, Any] = {
            "timeout_s": settings.tool_timeout_s,
            "retries": settings.tool_retries,
            "breaker_failures": settings.breaker_failures,
            "breaker_cooldown_s": settings.breaker_cooldown_s,
            "cache_ttl_s": settings.cache_ttl_s,
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)


@dataclass(frozen=True)
class BreakerPolicy:
    """A guarded component's circuit breaker: how many failures in a row open it, and for how long it then stays
    open. Serialised as one init parameter, `breaker: {failures: 5, cooldown_s: 30.0}`; `from_settings` gives the
    BREAKER_FAILURES / BREAKER_COOLDOWN_S defaults (the settings own them, so they are not repeated here)."""

    failures: int
    cooldown_s: float

    def __post_init__(self) -> None:
        if isinstance(self.failures, bool) or not isinstance(self.failures, int) or self.failures < 1:
            raise ValueError("breaker failures must be a whole number of at least 1")
        if isinstance(self.cooldown_s, bool) or not isinstance(self.cooldown_s, int | float) or self.cooldown_s < 0:
            raise ValueError(f"breaker cooldown_s must be a number of seconds, not negative, not {self.cooldown_s!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain values for serialisation (the init parameter's value)."""
        return asdict(self)

    @classmethod
    def from_settings(cls, value: BreakerPolicy | dict[str, Any] | None) -> BreakerPolicy:
        """`value` as a policy: a dict's missing (or None) keys, and a None, take the BREAKER_FAILURES and
        BREAKER_COOLDOWN_S settings in force (call it when a component is built)."""
        if isinstance(value, BreakerPolicy):
            return value
        if value is not None and not isinstance(value, dict):
            raise ValueError(f"breaker must be a mapping of failures and cooldown_s, not {value!r}")
        given = value or {}
        unknown = set(given) - {"failures", "cooldown_s"}
        if unknown:
            raise ValueError(f"breaker takes failures and cooldown_s, not {', '.join(sorted(unknown))}")
        settings = get_settings()
        return cls(
            failures=given["failures"] if given.get("failures") is not None else settings.breaker_failures,
            cooldown_s=given["cooldown_s"] if given.get("cooldown_s") is not None else settings.breaker_cooldown_s,
        )


# The breaker's init parameters before they were one `breaker` mapping: a YAML written then still loads.
_FLAT_BREAKER_KEYS = {"breaker_failures": "failures", "breaker_cooldown_s": "cooldown_s"}


def nested_breaker(data: dict[str, Any]) -> dict[str, Any]:
    """A guarded component's `to_dict()` output with the flat breaker keys of older YAMLs folded into `breaker`."""
    params = data.get("init_parameters") or {}
    if not set(_FLAT_BREAKER_KEYS) & set(params):
        return data
    warnings.warn(
        "breaker_failures and breaker_cooldown_s are deprecated: write breaker: {failures: N, cooldown_s: S}",
        DeprecationWarning,
        stacklevel=3,
    )
    params = dict(params)
    breaker = {new: params.pop(old) for old, new in _FLAT_BREAKER_KEYS.items() if old in params}
    params["breaker"] = {**breaker, **(params.get("breaker") or {})}
    return {**data, "init_parameters": params}


class GuardedComponent(InitParameterSerialization):
    """Serialisation of a component whose guard takes a `breaker` init parameter (a `BreakerPolicy`, written as a
    mapping); `from_dict` also reads the flat `breaker_failures` / `breaker_cooldown_s` of older YAMLs."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        return super().from_dict(nested_breaker(data))


def guard_policy_from_settings(
    component: Any, breaker: BreakerPolicy | dict[str, Any] | None, **overrides: Any
) -> ResiliencePolicy:
    """The policy of a component being built (call it from `__init__`): its `breaker` init parameter (None, or a
    mapping's missing keys, taking BREAKER_FAILURES and BREAKER_COOLDOWN_S), kept as its `breaker` attribute so its
    `to_dict` writes it, and `overrides` (timeout, retries...; `cache_ttl_s` 0 unless given, a None taking
    CACHE_TTL_S)."""
    component.breaker = BreakerPolicy.from_settings(breaker)
    overrides.setdefault("cache_ttl_s", 0.0)
    return ResiliencePolicy.from_settings(
        breaker_failures=component.breaker.failures, breaker_cooldown_s=component.breaker.cooldown_s, **overrides
    )


@dataclass
class SourceResult:
    """What a source's work returns: its chunks, how many it found in all, and a note if the result is partial."""

    chunks: list[ContextChunk] = field(default_factory=list)
    total_found: int | None = None
    partial: str | None = None

    def outputs(self, status: SourceStatus) -> dict[str, Any]:
        """A source component's outputs: the chunks as Haystack Documents and the run's status."""
        return {"documents": [chunk_to_document(chunk) for chunk in self.chunks], "status": status}


class CircuitBreaker:
    """The consecutive faults of one source, shared by its guards, each of which reads them with its own policy: the
    breaker is open for a guard once its `breaker_failures` faults in a row are counted, for its `breaker_cooldown_s`
    after the last of them; then calls may try again, and one more fault re-opens it at once. (Components of one
    source may be given other breaker parameters in their YAML: one's parameters neither open nor close another's.)"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._consecutive = 0
        self._last_failure_at: float | None = None

    def seconds_open(self, failures: int, cooldown_s: float) -> float:
        """Seconds the breaker stays open for a guard that opens after `failures` faults in a row, for `cooldown_s`;
        0 when a call may go through."""
        with self._lock:
            if self._last_failure_at is None or self._consecutive < failures:
                return 0.0
            # Past the cool-down the breaker is half-open: calls try, and one more fault re-opens it at once.
            return max(self._last_failure_at + cooldown_s - time.monotonic(), 0.0)

    def record_failure(self) -> None:
        with self._lock:
            self._consecutive += 1
            self._last_failure_at = time.monotonic()

    @property
    def is_open(self) -> bool:
        """Whether faults are counted since the last success (the breaker is open for a guard they are enough for)."""
        with self._lock:
            return self._consecutive > 0

    def reset(self) -> None:
        """Closed, with no failure counted (a success, or a reset)."""
        with self._lock:
            self._consecutive = 0
            self._last_failure_at = None


class TTLCache:
    """A source's results cache: cachetools' TTL cache (least recently used out beyond `size`), behind a lock so the
    worker threads can share it."""

    def __init__(self, ttl_s: float, size: int) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._items: cachetools.TTLCache = cachetools.TTLCache(maxsize=size, ttl=ttl_s, timer=time.monotonic)

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class _RateGate:
    """Spaces calls to one source at least `min_interval_s` apart, across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next_free = 0.0

    def reserve(self, min_interval_s: float) -> float:
        """Seconds to wait before this call may start (the slot is taken)."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_free)
            self._next_free = start + min_interval_s
            return start - now

    def give_back(self, min_interval_s: float) -> None:
        """Return a slot whose call never reached the service (its name did not resolve, nothing listened): the
        interval spaces requests the service receives, so the next call need not wait for one it never got."""
        with self._lock:
            self._next_free = max(time.monotonic(), self._next_free - min_interval_s)


class _HungCalls:
    """The calls of one source that the guard abandoned at their timeout and whose threads still run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: list[concurrent.futures.Future] = []

    def add(self, future: concurrent.futures.Future) -> None:
        with self._lock:
            self._futures.append(future)

    def pending(self) -> list[concurrent.futures.Future]:
        with self._lock:
            self._futures = [future for future in self._futures if not future.done()]
            return list(self._futures)

    def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for every abandoned call to end; True when none is left."""
        concurrent.futures.wait(self.pending(), timeout=max(timeout_s, 0.0))
        return not self.pending()


@dataclass
class _Shared:
    """What every guard of one source shares in the process: its breaker, its rate gate, the calls abandoned at
    their timeout, and its results cache (made by the first guard with a cache TTL)."""

    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    gate: _RateGate = field(default_factory=_RateGate)
    hung: _HungCalls = field(default_factory=_HungCalls)
    cache: TTLCache | None = None


_SHARED: dict[str, _Shared] = {}
_SHARED_LOCK = threading.Lock()


def _shared(source: str) -> _Shared:
    with _SHARED_LOCK:
        return _SHARED.setdefault(source, _Shared())


def hung_threads(source: str) -> int:
    """How many abandoned calls of `source` still hold a thread (tests)."""
    return len(_shared(source).hung.pending())


def reset_resilience_state() -> None:
    """Close every breaker and clear every cache; rate gates and abandoned calls start afresh for the guards made
    from now on (tests, and the app's 'reset' button)."""
    with _SHARED_LOCK:
        for source, shared in _SHARED.items():
            shared.breaker.reset()
            if shared.cache is not None:
                shared.cache.clear()
            _SHARED[source] = _Shared(shared.breaker, cache=shared.cache)


# How close to its deadline a timeout reported by the work counts as the call's own timeout.
_DEADLINE_SLACK_S = 0.05


def cache_key(*parts: Any) -> str:
    """A stable cache key for JSON-able call arguments."""
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class SourceGuard:
    """Runs a source's work under a `ResiliencePolicy` and turns every outcome into chunks and a status.

    The deadline of a call is the earliest of its timeout, the `deadline` given and the current question's
    deadline (`components.resilience.budget`).

    Usage:
    ```python
    guard = SourceGuard("web", ResiliencePolicy(timeout_s=7))
    result, status = guard.call(lambda: SourceResult(chunks=fetch(query)), key=("web", query))
    ```
    """

    def __init__(self, source: str, policy: ResiliencePolicy | None = None) -> None:
        self.source = source
        self.policy = policy or ResiliencePolicy()
        shared = _shared(source)
        self.breaker, self._gate, self._hung = shared.breaker, shared.gate, shared.hung
        self._cache: TTLCache | None = None
        if self.policy.cache_ttl_s > 0:
            with _SHARED_LOCK:
                if shared.cache is None or shared.cache.ttl_s != self.policy.cache_ttl_s:
                    shared.cache = TTLCache(self.policy.cache_ttl_s, self.policy.cache_size)
                self._cache = shared.cache

    # -- shared steps -------------------------------------------------------------------------------------------

    def _limit(self, started: float, deadline: float | None) -> tuple[float, bool]:
        """(the instant this call must end by, whether the question's budget rather than the timeout sets it)."""
        own = started + self.policy.timeout_s
        outer = min((value for value in (deadline, question_deadline()) if value is not None), default=own)
        return min(own, outer), outer < own

    def _precheck(
        self, started: float, key: str | None, deadline_at: float
    ) -> tuple[SourceResult, SourceStatus] | None:
        open_for = self.breaker.seconds_open(self.policy.breaker_failures, self.policy.breaker_cooldown_s)
        if open_for > 0:
            message = f"{self.source} is paused after repeated failures; retrying in {open_for:.0f} s"
            return self._finish(started, SourceResult(), StatusKind.SKIPPED, message, attempts=0)
        if deadline_at - time.monotonic() <= 0:
            message = f"{self.source} was not asked: the question's time budget was spent"
            return self._finish(started, SourceResult(), StatusKind.SKIPPED, message, attempts=0)
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                kind = StatusKind.PARTIAL if cached.partial else StatusKind.SUCCESS
                return self._finish(started, cached, kind, cached.partial or "", attempts=0, from_cache=True)
        return None

    def _finish(
        self,
        started: float,
        result: SourceResult,
        kind: StatusKind,
        message: str,
        attempts: int,
        *,
        from_cache: bool = False,
        fault: str | None = None,
    ) -> tuple[SourceResult, SourceStatus]:
        elapsed_ms = (time.monotonic() - started) * 1000.0
        total = result.total_found if result.total_found is not None else len(result.chunks)
        status = SourceStatus(
            source=self.source,
            status=kind,
            execution_time_ms=round(elapsed_ms, 3),
            total_found=max(total, 0),
            message=message,
            from_cache=from_cache,
            attempts=attempts,
        )
        telemetry.record(self.source, kind.value, elapsed_ms, fault=fault, cached=from_cache)
        return result, status

    def _on_success(
        self, started: float, result: Any, key: str | None, attempts: int
    ) -> tuple[SourceResult, SourceStatus]:
        if not isinstance(result, SourceResult):
            result = SourceResult(chunks=list(result or []))
        self.breaker.reset()
        if key is not None and self._cache is not None:
            self._cache.put(key, result)
        kind = StatusKind.PARTIAL if result.partial else StatusKind.SUCCESS
        return self._finish(started, result, kind, result.partial or "", attempts)

    def _on_fault(self, started: float, fault: Fault, attempts: int) -> tuple[SourceResult, SourceStatus]:
        if fault.kind != "invalid":
            # Bad input says nothing about the source's health; everything else counts toward the breaker.
            self.breaker.record_failure()
        kind = StatusKind.TIMEOUT if fault.kind == "timeout" else StatusKind.ERROR
        logger.warning(
            "Source {source} failed ({kind}): {reason}", source=self.source, kind=fault.kind, reason=fault.message
        )
        return self._finish(started, SourceResult(), kind, fault.message, attempts, fault=fault.kind)

    def _timed_out(self, started: float, by_budget: bool, attempts: int) -> tuple[SourceResult, SourceStatus]:
        within = "what was left of the question's time budget" if by_budget else f"{self.policy.timeout_s:g} s"
        message = f"{self.source} did not answer within {within}"
        return self._on_fault(started, Fault("timeout", False, message), attempts)

    def _backoff(self, attempt: int, fault: Fault, deadline_at: float) -> float | None:
        """Seconds to wait before the next attempt, or None when no attempt fits in the budget."""
        if not fault.retryable or attempt > self.policy.retries:
            return None
        wait = min(self.policy.backoff_max_s, self.policy.backoff_base_s * (2 ** (attempt - 1)))
        if fault.retry_after is not None:
            wait = max(wait, fault.retry_after)
        return None if time.monotonic() + wait >= deadline_at else wait

    def _attempts(self, work: Callable[[], Any], deadline_at: float) -> tuple[Any, Fault | None, int]:
        """Every attempt of one call, in the calling (worker) thread: (result, None, n) or (None, fault, n)."""
        attempt = 0
        while True:
            attempt += 1
            wait = self._gate.reserve(self.policy.min_interval_s) if self.policy.min_interval_s else 0.0
            if wait:
                if time.monotonic() + wait >= deadline_at:
                    return None, Fault("timeout", False, f"{self.source} is rate limited past the budget"), attempt
                time.sleep(wait)
            try:
                with deadline_scope(deadline_at):
                    return work(), None, attempt
            except Exception as exc:  # noqa: BLE001 - the contract: a source never raises into the pipeline
                # A timeout the work raises (a client's own) is a retryable fault, not our budget running out.
                if isinstance(exc, TimeoutError):
                    reason = f"the service timed out: {exc}" if str(exc) else "the service timed out"
                    exc = RetryableError(reason, kind="timeout")
                if self.policy.min_interval_s and isinstance(exc, ServiceUnreachable):
                    self._gate.give_back(self.policy.min_interval_s)
                fault = classify_exception(exc)
                logger.debug(
                    "Source {source} attempt {attempt} failed", source=self.source, attempt=attempt, exc_info=True
                )
                pause = self._backoff(attempt, fault, deadline_at)
                if pause is None:
                    return None, fault, attempt
                time.sleep(pause)

    def call(
        self,
        work: Callable[[], SourceResult | list[ContextChunk]],
        *,
        key: str | None = None,
        deadline: float | None = None,
    ) -> tuple[SourceResult, SourceStatus]:
        """Run `work` (a no-argument callable) under the policy; never raises."""
        started = time.monotonic()
        deadline_at, by_budget = self._limit(started, deadline)
        early = self._precheck(started, key, deadline_at)
        if early is not None:
            return early
        if not self._hung.wait(deadline_at - time.monotonic()):
            message = f"{self.source} is still hung on an earlier call that did not end; no new call was started"
            return self._on_fault(started, Fault("timeout", False, message), 0)
        future = submit_in_thread(lambda: self._attempts(work, deadline_at))
        try:
            outcome = future.result(timeout=max(deadline_at - time.monotonic(), 0.001))
        except concurrent.futures.TimeoutError:
            self._hung.add(future)
            return self._timed_out(started, by_budget, 1)
        except Exception as exc:  # noqa: BLE001 - a failure of the policy itself still may not escape
            return self._on_fault(started, classify_exception(exc), 1)
        return self._settle(started, deadline_at, by_budget, key, outcome)

    async def call_async(
        self,
        work: Callable[[], SourceResult | list[ContextChunk]],
        *,
        key: str | None = None,
        deadline: float | None = None,
    ) -> tuple[SourceResult, SourceStatus]:
        """`call` awaited on the event loop: the work runs in a worker thread all the same, but no second thread
        waits for it (two thread hops fewer per call). Never raises."""
        if self._hung.pending():
            # Waiting out an earlier hung call blocks: that wait happens in a thread, as `call` does it.
            return await asyncio.to_thread(self.call, work, key=key, deadline=deadline)
        started = time.monotonic()
        deadline_at, by_budget = self._limit(started, deadline)
        early = self._precheck(started, key, deadline_at)
        if early is not None:
            return early
        future = submit_in_thread(lambda: self._attempts(work, deadline_at))
        try:
            outcome = await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(future)), max(deadline_at - time.monotonic(), 0.001)
            )
        except TimeoutError:
            self._hung.add(future)
            return self._timed_out(started, by_budget, 1)
        except Exception as exc:  # noqa: BLE001 - a failure of the policy itself still may not escape
            return self._on_fault(started, classify_exception(exc), 1)
        return self._settle(started, deadline_at, by_budget, key, outcome)

    def _settle(
        self, started: float, deadline_at: float, by_budget: bool, key: str | None, outcome: tuple[Any, Any, int]
    ) -> tuple[SourceResult, SourceStatus]:
        """The call's result and status from what `_attempts` returned."""
        result, fault, attempts = outcome
        if fault is None:
            return self._on_success(started, result, key, attempts)
        if fault.kind == "timeout" and time.monotonic() >= deadline_at - _DEADLINE_SLACK_S:
            # Work that ran out of time at this call's own limit (a nested guard sharing the deadline): the fault
            # is this call's timeout, said as this call says it.
            return self._timed_out(started, by_budget, attempts)
        return self._on_fault(started, fault, attempts)

    def refused(self, message: str, started: float) -> SourceStatus:
        """The status of input the source refused before any call (`started`: `time.monotonic()`): checked before
        the guard, bad input takes no attempt, rate slot or breaker count; it is logged and counted all the same."""
        logger.warning("Source {source} refused the input: {reason}", source=self.source, reason=message)
        telemetry.record(self.source, StatusKind.ERROR.value, 0.0, fault="invalid")
        return SourceStatus.refused(self.source, message, started)

    def outputs(
        self, plan: SourceStatus | Callable[[], Any], *, key: str | None = None, branch: bool = False
    ) -> dict[str, Any]:
        """A source component's `run` outputs for `plan`: a status settled before any call (the source is skipped,
        or refused its input) as it is, or the work (a no-argument callable) run under the policy. With `branch`,
        also the documents as the ranker's `BranchDocuments` (a research branch's third output)."""
        if isinstance(plan, SourceStatus):
            return _outputs(SourceResult(), plan, branch)
        return _outputs(*self.call(plan, key=key), branch)

    def branch_outputs(
        self,
        sources: list[str] | None,
        not_selected: str,
        prepare: Callable[[], SourceStatus | Callable[[], Any]],
        *,
        refuse: tuple[type[Exception], ...] = (SourceError, ValueError),
        set_up: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """A research branch's `run` outputs: skipped (`not_selected` says why) when `sources` leave the source out,
        else `outputs` for what `prepare()` makes of the question: a status, or the work. Input that `prepare`
        rejects with one of `refuse` (`SourceError`, or a `ValueError` of `components.validation`) is refused before
        the guard, so bad input takes none of the source's rate-limited request slots. `set_up` (loading a model)
        runs once there is work, outside that refusal: a fault of the set-up is not the question's."""
        if not source_selected(sources, self.source):
            return self.outputs(SourceStatus.skipped(self.source, not_selected), branch=True)
        started = time.monotonic()
        try:
            plan = prepare()
        except refuse as exc:
            plan = self.refused(str(exc), started)
        if set_up is not None and not isinstance(plan, SourceStatus):
            set_up()  # set-up, not the source's latency
        return self.outputs(plan, branch=True)

    async def outputs_async(
        self, plan: SourceStatus | Callable[[], Any], *, key: str | None = None, branch: bool = False
    ) -> dict[str, Any]:
        """`outputs` for a component's `run_async`, through `call_async`."""
        if isinstance(plan, SourceStatus):
            return _outputs(SourceResult(), plan, branch)
        return _outputs(*await self.call_async(plan, key=key), branch)


def _outputs(result: SourceResult, status: SourceStatus, branch: bool) -> dict[str, Any]:
    outputs = result.outputs(status)
    if branch:
        outputs["branch"] = BranchDocuments(tuple(outputs["documents"]))
    return outputs
