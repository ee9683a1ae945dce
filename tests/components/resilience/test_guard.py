import asyncio
import copy
import threading
import time

import pytest

from components.contracts import ContextChunk, SourceStatus, StatusKind
from components.resilience import (
    ResiliencePolicy,
    RetryableError,
    SourceError,
    SourceGuard,
    SourceResult,
    telemetry,
)
from components.resilience.errors import classify_exception, parse_retry_after
from components.resilience.guard import BreakerPolicy, nested_breaker


def web_chunk(text: str = "a page") -> ContextChunk:
    return ContextChunk(
        id=text,
        source_type="web",
        text=text,
        semantic_relevance=0.5,
        source_id="https://example.org",
        metadata={"domain": "example.org", "page_url": "https://example.org", "fetch_timestamp": "2026-01-01T00:00:00"},
    )


class HTTPError(Exception):
    """Shaped like the errors of requests/httpx: a response with a status code and headers."""

    class _Response:
        def __init__(self, status_code: int, headers: dict):
            self.status_code = status_code
            self.headers = headers

    def __init__(self, status_code: int, headers: dict | None = None):
        super().__init__(f"HTTP {status_code}")
        self.response = self._Response(status_code, headers or {})


def fast_policy(**overrides) -> ResiliencePolicy:
    values = {"timeout_s": 2.0, "retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.05}
    values.update(overrides)
    return ResiliencePolicy(**values)


class TestResiliencePolicy:
    def test_defaults_follow_the_contract(self):
        policy = ResiliencePolicy()
        assert policy.timeout_s == 7.0
        assert 0 <= policy.retries <= 3

    @pytest.mark.parametrize(
        "field,value", [("timeout_s", 0), ("retries", 4), ("breaker_failures", 0), ("cache_ttl_s", -1)]
    )
    def test_invalid_values_are_refused(self, field, value):
        with pytest.raises(ValueError):
            ResiliencePolicy(**{field: value})

    def test_round_trip(self):
        policy = ResiliencePolicy(timeout_s=3, retries=1, cache_ttl_s=60)
        assert ResiliencePolicy(**policy.to_dict()) == policy


class TestBreakerPolicy:
    def test_none_and_missing_keys_take_the_settings_in_force(self, monkeypatch, settings):
        from components.settings import reload_settings

        monkeypatch.setenv("BREAKER_FAILURES", "7")
        monkeypatch.setenv("BREAKER_COOLDOWN_S", "2.5")
        reload_settings()
        assert BreakerPolicy.from_settings(None) == BreakerPolicy(failures=7, cooldown_s=2.5)
        assert BreakerPolicy.from_settings({"failures": 2}) == BreakerPolicy(failures=2, cooldown_s=2.5)
        assert BreakerPolicy.from_settings({"failures": None, "cooldown_s": 0}) == BreakerPolicy(7, 0)
        given = BreakerPolicy(3, 1.0)
        assert BreakerPolicy.from_settings(given) is given
        assert BreakerPolicy.from_settings(given.to_dict()) == given

    @pytest.mark.parametrize(
        "value,message",
        [
            ({"failures": 0}, "at least 1"),
            ({"cooldown_s": -1}, "negative"),
            ({"failure": 3}, "not failure"),
            (5, "mapping"),
            ({"failures": True}, "whole number"),
            ({"cooldown_s": "30s"}, "number of seconds.*'30s'"),
            ({"cooldown_s": False}, "number of seconds"),
        ],
    )
    def test_bad_values_are_refused_in_one_sentence(self, value, message):
        with pytest.raises(ValueError, match=message):
            BreakerPolicy.from_settings(value)

    def test_the_flat_keys_of_older_yamls_fold_into_breaker_with_a_deprecation(self):
        old = {"type": "x", "init_parameters": {"breaker_failures": 2, "breaker_cooldown_s": 9.0, "limit": 3}}
        with pytest.warns(DeprecationWarning, match="breaker: {failures"):
            new = nested_breaker(old)
        assert new["init_parameters"] == {"limit": 3, "breaker": {"failures": 2, "cooldown_s": 9.0}}
        assert old["init_parameters"]["breaker_failures"] == 2  # the caller's dict is left as it was
        current = {"type": "x", "init_parameters": {"breaker": {"failures": 2}}}
        assert nested_breaker(current) is current


class TestSourceGuard:
    def test_success_returns_chunks_and_status(self):
        result, status = SourceGuard("t-ok", fast_policy()).call(lambda: [web_chunk()])
        assert status.status is StatusKind.SUCCESS
        assert status.total_found == 1
        assert result.chunks[0].text == "a page"

    def test_partial_result_is_reported(self):
        guard = SourceGuard("t-partial", fast_policy())
        _, status = guard.call(lambda: SourceResult(chunks=[web_chunk()], total_found=5, partial="2 pages skipped"))
        assert status.status is StatusKind.PARTIAL
        assert status.total_found == 5
        assert status.message == "2 pages skipped"

    def test_timeout_returns_within_budget(self):
        guard = SourceGuard("t-slow", fast_policy(timeout_s=0.3))
        release = threading.Event()
        started = time.monotonic()
        try:
            result, status = guard.call(lambda: release.wait(60) and [])
        finally:
            release.set()
        # The work would take 60 s: ending within a few seconds proves the 0.3 s timeout ended it (the slack is for
        # scheduling on a loaded machine); the lower bound proves the guard really waited for the timeout.
        assert 0.25 <= time.monotonic() - started < 0.3 + 4.0
        assert status.status is StatusKind.TIMEOUT
        assert "0.3" in status.message
        assert result.chunks == []

    def test_deadline_shorter_than_timeout_wins(self):
        guard = SourceGuard("t-deadline", fast_policy(timeout_s=10))
        release = threading.Event()
        started = time.monotonic()
        try:
            _, status = guard.call(lambda: release.wait(60) and [], deadline=time.monotonic() + 0.2)
        finally:
            release.set()
        # Work of 60 s, a timeout of 10 s: ending within a few seconds proves the 0.2 s deadline won.
        assert 0.15 <= time.monotonic() - started < 0.2 + 4.0
        assert status.status is StatusKind.TIMEOUT

    def test_spent_budget_skips_the_call(self):
        calls = []
        _, status = SourceGuard("t-spent", fast_policy()).call(lambda: calls.append(1), deadline=time.monotonic() - 1)
        assert status.status is StatusKind.SKIPPED
        assert calls == []

    def test_retryable_faults_are_retried_then_succeed(self):
        attempts = []

        def flaky():
            attempts.append(1)
            if len(attempts) < 3:
                raise ConnectionError("connection reset")
            return [web_chunk()]

        _, status = SourceGuard("t-flaky", fast_policy(retries=2)).call(flaky)
        assert status.status is StatusKind.SUCCESS
        assert status.attempts == 3

    def test_retries_stop_at_the_limit(self):
        attempts = []

        def down():
            attempts.append(1)
            raise HTTPError(503)

        _, status = SourceGuard("t-down", fast_policy(retries=2)).call(down)
        assert status.status is StatusKind.ERROR
        assert len(attempts) == 3
        assert "503" in status.message

    def test_non_retryable_fault_is_not_retried(self):
        attempts = []

        def bad():
            attempts.append(1)
            raise SourceError("the API key is missing: set FIRECRAWL_API_KEY")

        _, status = SourceGuard("t-bad", fast_policy()).call(bad)
        assert len(attempts) == 1
        assert status.status is StatusKind.ERROR
        assert status.message == "the API key is missing: set FIRECRAWL_API_KEY"

    def test_backoff_grows_exponentially(self):
        stamps = []

        def down():
            stamps.append(time.monotonic())
            raise ConnectionError("down")

        SourceGuard("t-backoff", fast_policy(retries=3, backoff_base_s=0.05, backoff_max_s=1)).call(down)
        gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
        assert len(gaps) == 3
        assert gaps[0] >= 0.04 and gaps[1] >= 0.09 and gaps[2] >= 0.19

    def test_retry_after_is_honoured(self):
        stamps = []

        def limited():
            stamps.append(time.monotonic())
            if len(stamps) == 1:
                raise HTTPError(429, {"Retry-After": "0.3"})
            return [web_chunk()]

        _, status = SourceGuard("t-429", fast_policy()).call(limited)
        assert status.status is StatusKind.SUCCESS
        assert stamps[1] - stamps[0] >= 0.29

    def test_retry_after_beyond_the_budget_gives_up_at_once(self):
        def limited():
            raise HTTPError(429, {"Retry-After": "60"})

        started = time.monotonic()
        _, status = SourceGuard("t-429-long", fast_policy(timeout_s=10)).call(limited)
        # Waiting would take 60 s (Retry-After) or 10 s (the timeout); under 2 s means it gave up without waiting.
        assert time.monotonic() - started < 2.0
        assert status.status is StatusKind.ERROR
        assert "429" in status.message

    def test_a_clients_own_timeout_is_retried(self):
        attempts = []

        def client_timeout():
            attempts.append(1)
            if len(attempts) == 1:
                raise TimeoutError("read timed out")
            return [web_chunk()]

        _, status = SourceGuard("t-client-timeout", fast_policy()).call(client_timeout)
        assert status.status is StatusKind.SUCCESS
        assert len(attempts) == 2

    def test_unexpected_exception_never_escapes(self):
        def broken():
            raise KeyError("boom")

        result, status = SourceGuard("t-broken", fast_policy()).call(broken)
        assert status.status is StatusKind.ERROR
        assert "KeyError" in status.message
        assert result.chunks == []


class TestBranchOutputs:
    def test_input_the_preparation_rejects_is_refused_before_any_call(self):
        def prepare():
            raise SourceError("the question is empty")

        outputs = SourceGuard("t-branch-refused", fast_policy()).branch_outputs(["t-branch-refused"], "-", prepare)
        assert outputs["status"].status is StatusKind.ERROR
        assert outputs["status"].attempts == 0
        assert outputs["status"].message == "the question is empty"

    def test_a_failing_set_up_is_raised_not_refused_as_input(self):
        def set_up():
            raise ValueError("the embedding model cannot be loaded")

        guard = SourceGuard("t-branch-set-up", fast_policy())
        with pytest.raises(ValueError, match="cannot be loaded"):
            guard.branch_outputs(["t-branch-set-up"], "-", lambda: lambda: [web_chunk()], set_up=set_up)
        # No work, no set-up: a skipped or refused source loads nothing.
        skipped = guard.branch_outputs(["other"], "not selected", lambda: lambda: [web_chunk()], set_up=set_up)
        assert skipped["status"].status is StatusKind.SKIPPED

    def test_a_source_can_refuse_nothing_before_its_work(self):
        def prepare():
            raise ValueError("the key's variable is not set")

        guard = SourceGuard("t-branch-none", fast_policy())
        with pytest.raises(ValueError, match="not set"):
            guard.branch_outputs(["t-branch-none"], "-", prepare, refuse=())


class TestCircuitBreaker:
    def test_opens_after_failures_and_skips_then_half_opens(self):
        # The cooldown is long enough that a thread paused on a loaded machine between the calls does not outlast it.
        policy = fast_policy(retries=0, breaker_failures=2, breaker_cooldown_s=1.0)
        guard = SourceGuard("t-breaker", policy)
        calls = []

        def down():
            calls.append(1)
            raise ConnectionError("down")

        guard.call(down)
        guard.call(down)
        _, status = guard.call(down)
        assert status.status is StatusKind.SKIPPED
        assert "paused" in status.message
        assert len(calls) == 2  # the third call never reached the source
        time.sleep(1.05)
        _, status = guard.call(lambda: [web_chunk()])
        assert status.status is StatusKind.SUCCESS
        assert not guard.breaker.is_open

    def test_breaker_is_shared_by_instances_of_the_same_source(self):
        assert SourceGuard("t-shared").breaker is SourceGuard("t-shared").breaker

    def test_guards_of_one_source_each_open_and_close_by_their_own_parameters(self):
        """Two components of one source built with other breaker parameters (their YAML's) share the source's
        faults, but one's threshold does not pause the other, and one's short cool-down does not close the other's
        breaker."""
        strict = SourceGuard("t-mixed-breakers", fast_policy(retries=0, breaker_failures=1, breaker_cooldown_s=60.0))
        lenient = SourceGuard("t-mixed-breakers", fast_policy(retries=0, breaker_failures=4, breaker_cooldown_s=0.0))
        calls = []

        def down():
            calls.append(1)
            raise ConnectionError("down")

        assert strict.call(down)[1].status is StatusKind.ERROR
        assert strict.call(down)[1].status is StatusKind.SKIPPED  # one fault is enough for it
        assert lenient.call(down)[1].status is StatusKind.ERROR  # two faults: not yet its four
        assert strict.call(down)[1].status is StatusKind.SKIPPED  # still within its own 60 s
        assert len(calls) == 2
        assert lenient.call(lambda: [web_chunk()])[1].status is StatusKind.SUCCESS
        assert strict.call(lambda: [web_chunk()])[1].status is StatusKind.SUCCESS  # the source answered again

    def test_bad_input_does_not_trip_the_breaker(self):
        guard = SourceGuard("t-input", fast_policy(breaker_failures=1))

        def invalid():
            raise SourceError("the question is empty")

        guard.call(invalid)
        assert not guard.breaker.is_open


class TestCacheAndRateLimit:
    def test_ttl_cache_serves_repeats_until_expiry(self):
        calls = []

        def work():
            calls.append(1)
            return [web_chunk()]

        # The TTL is long enough that the repeat is still fresh if a loaded machine pauses the test between calls.
        guard = SourceGuard("t-cache", fast_policy(cache_ttl_s=1.0))
        guard.call(work, key="q1")
        _, status = guard.call(work, key="q1")
        assert status.from_cache and len(calls) == 1
        guard.call(work, key="q2")
        assert len(calls) == 2
        time.sleep(1.05)
        _, status = guard.call(work, key="q1")
        assert not status.from_cache and len(calls) == 3

    def test_failures_are_not_cached(self):
        guard = SourceGuard("t-cache-fail", fast_policy(cache_ttl_s=60, retries=0))
        guard.call(lambda: (_ for _ in ()).throw(ConnectionError("down")), key="q")
        _, status = guard.call(lambda: [web_chunk()], key="q")
        assert status.status is StatusKind.SUCCESS and not status.from_cache

    def test_min_interval_spaces_calls_across_threads(self):
        stamps = []
        lock = threading.Lock()

        def work():
            with lock:
                stamps.append(time.monotonic())
            return []

        guard = SourceGuard("t-rate", fast_policy(min_interval_s=0.15))
        threads = [threading.Thread(target=guard.call, args=(work,)) for _ in range(3)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stamps.sort()
        # The n-th call waits for its slot, n intervals after the first could start. (Gaps between the calls as they
        # ran are not the gate's to promise: a thread woken late on a loaded machine shortens the gap after it.)
        assert all(stamp >= started + index * 0.15 - 0.01 for index, stamp in enumerate(stamps))

    def test_a_call_that_never_reached_the_service_gives_its_slot_back(self):
        # The interval spaces requests the service receives: a name that does not resolve sent none, so the next
        # question does not wait for it (offline, a source with an interval would otherwise cost every question it).
        from components.resilience.errors import ServiceUnreachable

        def unreachable():
            raise ServiceUnreachable("cannot reach the zorbit API: its name does not resolve")

        guard = SourceGuard("t-rate-unreachable", fast_policy(min_interval_s=2.0, retries=0))
        _, first = guard.call(unreachable)
        started = time.monotonic()
        _, second = guard.call(unreachable)
        assert first.status == second.status == StatusKind.ERROR
        assert time.monotonic() - started < 1.0
        answered = SourceGuard("t-rate-answered", fast_policy(min_interval_s=0.3, retries=0))
        answered.call(lambda: [])
        started = time.monotonic()
        answered.call(lambda: [])
        assert time.monotonic() - started >= 0.25  # a request that reached the service keeps its slot


class TestClassification:
    def test_retry_after_forms(self):
        assert parse_retry_after("2") == 2.0
        assert parse_retry_after(None) is None
        assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
        assert parse_retry_after("soon") is None

    @pytest.mark.parametrize(
        "exc,kind,retryable",
        [
            (HTTPError(429), "rate_limited", True),
            (HTTPError(500), "unavailable", True),
            (HTTPError(401), "auth", False),
            (HTTPError(404), "invalid", False),
            (ConnectionRefusedError("refused"), "connection", True),
            (ValueError("bad date"), "invalid", False),
        ],
    )
    def test_kinds(self, exc, kind, retryable):
        fault = classify_exception(exc)
        assert (fault.kind, fault.retryable) == (kind, retryable)


class TestTelemetry:
    def test_calls_are_counted_with_latency(self):
        guard = SourceGuard("t-telemetry", fast_policy(retries=0))
        guard.call(lambda: [web_chunk()])
        guard.call(lambda: (_ for _ in ()).throw(ConnectionError("x")))
        stats = telemetry.snapshot()["t-telemetry"]
        assert stats["calls"] == 2 and stats["successes"] == 1
        assert stats["failures"] == {"connection": 1}
        assert stats["p50_ms"] is not None and stats["p95_ms"] >= stats["p50_ms"]


class Hang:
    """A source call that does not return until `release` is set; `calls` counts how often it was started."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = threading.Event()

    def __call__(self) -> list:
        self.calls += 1
        self.release.wait(60)
        return []


class TestHungCalls:
    @pytest.mark.parametrize("awaited", [False, True], ids=["called", "awaited-on-the-loop"])
    def test_a_call_that_never_returns_costs_one_thread_however_often_it_is_asked(self, awaited):
        from components.resilience.guard import hung_threads

        name = f"t-hung-{'async' if awaited else 'sync'}"
        guard = SourceGuard(name, fast_policy(timeout_s=0.2, retries=3, breaker_failures=100))

        def call(work):
            return asyncio.run(guard.call_async(work)) if awaited else guard.call(work)

        hang = Hang()
        try:
            statuses = [call(hang)[1] for _ in range(5)]
            assert [s.status for s in statuses] == [StatusKind.TIMEOUT] * 5
            assert "did not answer within 0.2 s" in statuses[0].message
            assert all("still hung" in s.message for s in statuses[1:])
            # One call started (one thread), however many questions and retries came after it.
            assert hang.calls == 1 and hung_threads(name) == 1
        finally:
            hang.release.set()
        deadline = time.monotonic() + 5
        while hung_threads(name) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Once the hung call ends, the source is asked again.
        result, status = call(lambda: [web_chunk()])
        assert status.status is StatusKind.SUCCESS and len(result.chunks) == 1

    def test_idle_workers_are_reused_and_a_hung_call_holds_one_of_its_own(self):
        from components.resilience.guard import _DaemonWorkers

        # idle_s is long enough that the idle worker is still there when a loaded machine resumes the test late.
        workers = _DaemonWorkers(idle_s=1.0)
        first = workers.submit(threading.get_ident).result(timeout=5)
        deadline = time.monotonic() + 5
        while workers._idle == 0 and time.monotonic() < deadline:  # the worker goes back to waiting
            time.sleep(0.005)
        assert workers.submit(threading.get_ident).result(timeout=5) == first
        hang = Hang()
        hung = workers.submit(hang)
        try:
            # The next piece of work gets a thread of its own while the hung one keeps its thread.
            other = workers.submit(threading.get_ident).result(timeout=5)
            assert not hung.done() and hang.calls == 1
            alive = {thread.ident for thread in threading.enumerate()}
            assert other in alive and first in alive
        finally:
            hang.release.set()
        hung.result(timeout=5)
        # Idle workers end after `idle_s`: no thread is left behind.
        deadline = time.monotonic() + 5
        while {first, other} & {thread.ident for thread in threading.enumerate()} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not {first, other} & {thread.ident for thread in threading.enumerate()}

    def test_work_queued_as_an_idle_worker_gives_up_is_still_run(self):
        from components.resilience.guard import _DaemonWorkers

        workers = _DaemonWorkers(idle_s=0.01)
        results = []
        for index in range(50):
            results.append(workers.submit(lambda index=index: index).result(timeout=5))
            time.sleep(0.01 * (index % 3))  # around the idle limit
        assert results == list(range(50))

    def test_outputs_awaited_on_the_loop_carry_the_branch_view(self):
        guard = SourceGuard("t-branch-async", fast_policy())
        outputs = asyncio.run(guard.outputs_async(lambda: [web_chunk()], branch=True))
        assert outputs["branch"].documents == tuple(outputs["documents"]) and len(outputs["documents"]) == 1

    def test_a_status_settled_before_the_call_is_the_output(self):
        skipped = SourceStatus.skipped("t-plan", "not selected")
        assert SourceGuard("t-plan", fast_policy()).outputs(skipped) == {"documents": [], "status": skipped}
        branch = SourceGuard("t-plan", fast_policy()).outputs(skipped, branch=True)["branch"]
        assert branch.documents == () and copy.deepcopy(branch) is branch  # shared, never copied chunk by chunk

    def test_retries_run_in_one_thread(self):
        import threading

        threads = set()
        attempts = []

        def flaky():
            threads.add(threading.get_ident())
            attempts.append(1)
            if len(attempts) < 3:
                raise RetryableError("busy")
            return [web_chunk()]

        _, status = SourceGuard("t-one-thread", fast_policy()).call(flaky)
        assert status.status is StatusKind.SUCCESS and status.attempts == 3
        assert len(threads) == 1

    def test_the_question_budget_bounds_every_guard_inside_it(self):
        import threading

        from components.resilience.budget import question_budget

        release = threading.Event()
        guard = SourceGuard("t-budget", fast_policy(timeout_s=60, retries=0))
        started = time.monotonic()
        try:
            with question_budget(0.3):
                _, status = guard.call(lambda: release.wait(60) and [])
        finally:
            release.set()
        # The work would take 60 s and the timeout is 60 s: ending within a few seconds proves the 0.3 s budget ended
        # it (slack for scheduling on a loaded machine); the lower bound proves it waited for the budget.
        assert 0.25 <= time.monotonic() - started < 0.3 + 4.0
        assert status.status is StatusKind.TIMEOUT and "time budget" in status.message


class TestCallDeadline:
    def test_work_inside_a_guard_sees_its_calls_deadline(self):
        from components.resilience.budget import question_deadline

        seen = []
        started = time.monotonic()
        SourceGuard("t-sees-deadline", fast_policy(timeout_s=1.5)).call(lambda: seen.append(question_deadline()) or [])
        # The deadline is the call's 1.5 s timeout from when the call began (not the 7 s default, not unbounded);
        # the upper margin allows for the call beginning late on a loaded machine.
        assert seen and seen[0] is not None and 1.0 < seen[0] - started <= 1.5 + 1.0
