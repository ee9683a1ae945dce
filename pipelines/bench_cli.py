"""`research bench --only cli`: how long the command line takes, as a user waits for it.

Every figure but the last is the wall time of a fresh `research` process, interpreter start included, on the
configured knowledge base (ingest something first, e.g. `research ingest --demo`):

- `research --help` (target <= 0.5 s), and its import time by `python -X importtime`;
- `research docs list` (target <= 1.5 s), with no server running: the embedded PostgreSQL starts and stops in it;
- cold `research ask QUESTION` (target <= 4 s): no server at the configured address, so the question is answered
  in the process, which loads the models and warms the pipeline first;
- `research ask QUESTION` with `research serve` running (target <= 0.5 s), the server started by the benchmark on a
  free port of 127.0.0.1 and stopped after;
- beside them, the same question answered in this process once it is warm (`PipelineCatalog.research`), the floor
  the command line is measured against.

Medians of a few runs: on a shared machine one slow run says little; the report gives every run.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.settings import get_settings
from pipelines.runtime import Runtime

Out = Callable[[str], None]

TARGETS_S = {"help": 0.5, "docs_list": 1.5, "ask_cold": 4.0, "ask_server": 0.5}
DEFAULT_QUESTION = "Who wrote pgvector?"
ROOT = Path(__file__).resolve().parents[1]


class BenchSetupError(RuntimeError):
    """The benchmark cannot run here (empty knowledge base, a server that does not start); the message says why."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(port: int) -> dict[str, str]:
    """This process's environment with this checkout importable and the server address at `port`."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, "HAYHOOKS_HOST": "127.0.0.1", "HAYHOOKS_PORT": str(port)}


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _research(argv: list[str], env: dict[str, str], python_flags: tuple[str, ...] = ()) -> tuple[float, Any]:
    """Wall seconds of one fresh `research ARGV` process, and the finished process (with `cpu_s`, the CPU seconds
    it and the processes it waited for used: what the wall time would be on an idle machine, waits aside)."""
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *python_flags, "-m", "pipelines.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    wall = time.perf_counter() - started
    done.cpu_s = _children_cpu_s() - cpu_before
    return wall, done


def _timed(
    name: str,
    argv: list[str],
    env: dict[str, str],
    runs: int,
    out: Out,
    check: Callable[[Any], str | None] | None = None,
) -> dict[str, Any]:
    seconds, cpu = [], []
    for _ in range(runs):
        wall, done = _research(argv, env)
        problem = f"exit {done.returncode}: {done.stderr.strip()[-300:]}" if done.returncode else None
        problem = problem or (check(done) if check else None)
        if problem:
            raise BenchSetupError(f"`research {' '.join(argv)}` failed: {problem}")
        seconds.append(round(wall, 3))
        cpu.append(round(done.cpu_s, 3))
    median = statistics.median(seconds)
    target = TARGETS_S.get(name)
    verdict = "" if target is None else (" ok" if median <= target else " MISSED")
    out(
        f"  {name:<11} median {median:6.2f} s of {runs} runs {seconds}; CPU median {statistics.median(cpu):.2f} s"
        + (f"  target <= {target} s{verdict}" if target else "")
    )
    return {
        "seconds": seconds,
        "median_s": median,
        "cpu_seconds": cpu,
        "cpu_median_s": statistics.median(cpu),
        "target_s": target,
        "pass": target is None or median <= target,
    }


def help_import_seconds(env: dict[str, str]) -> float:
    """`research --help`'s import time (the top-level modules' cumulative times by `-X importtime`)."""
    _, done = _research(["--help"], env, ("-X", "importtime"))
    total_us = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if cumulative.strip().isdigit() and not name.startswith("  "):  # depth 0: "| name" has one space
            total_us += int(cumulative)
    return total_us / 1e6


def _start_server(port: int, env: dict[str, str], log_path: Path, timeout_s: float = 300.0) -> subprocess.Popen:
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    token = env.get("API_TOKEN")
    request = urllib.request.Request(f"http://127.0.0.1:{port}/status")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchSetupError(f"the server exited with {process.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                if "research" in json.loads(response.read()).get("pipelines", []):
                    return process
        except (OSError, urllib.error.URLError, ValueError):
            pass
        time.sleep(0.5)
    stop_server(process)
    raise BenchSetupError(f"the server did not deploy the research pipeline within {timeout_s:.0f} s; see {log_path}")


def stop_server(process: subprocess.Popen) -> None:
    """End a server this process started: terminate, and kill it if it has not exited within 30 s."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def warm_in_process(question: str, runs: int) -> dict[str, Any]:
    """The question answered by this process's catalog once warm: wall seconds per question."""
    with Runtime() as runtime:
        catalog = runtime.catalog
        catalog.research(question)  # loads and warms the pipeline, as the first question of a process does
        seconds = []
        for _ in range(runs):
            started = time.perf_counter()
            catalog.research(question)
            seconds.append(round(time.perf_counter() - started, 3))
    return {"seconds": seconds, "median_s": statistics.median(seconds)}


def bench_cli(out: Out, question: str = DEFAULT_QUESTION, runs: int = 3, work_dir: Path | None = None) -> dict:
    """Every measure above; `pass` when every median meets its target."""
    no_server = _env(_free_port())  # nothing listens there: `ask` tries it (a refused connection) and answers here
    results: dict[str, Any] = {"question": question, "load_average": _load_average()}
    out(f"  machine load (1/5/15 min): {results['load_average']}")
    results["help"] = _timed("help", ["--help"], no_server, max(runs, 5), out)
    results["help_import_s"] = round(help_import_seconds(no_server), 3)
    out(f"  --help imports (-X importtime, top level): {results['help_import_s']:.3f} s")

    def answered_here(done: Any) -> str | None:
        return "it was answered by a server" if "answered by the server" in done.stderr else None

    results["docs_list"] = _timed("docs_list", ["docs", "list"], no_server, runs, out)
    results["ask_cold"] = _timed("ask_cold", ["ask", question], no_server, max(1, min(runs, 2)), out, answered_here)

    port = _free_port()
    served = _env(port)
    log_path = (work_dir or get_settings().data_dir) / "bench-cli-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    out(f"  starting `research serve` on 127.0.0.1:{port} (log: {log_path.name})")
    server = _start_server(port, served, log_path)
    try:

        def answered_there(done: Any) -> str | None:
            return None if "answered by the server" in done.stderr else "it was not answered by the server"

        _research(["ask", question], served)  # the server's first question warms its pipeline
        results["ask_server"] = _timed("ask_server", ["ask", question], served, max(runs, 5), out, answered_there)
    finally:
        stop_server(server)
    results["warm_in_process"] = warm_in_process(question, max(runs, 5))
    out(
        f"  warm question in this process: median {results['warm_in_process']['median_s']:.3f} s "
        f"{results['warm_in_process']['seconds']}"
    )
    warm = results["warm_in_process"]["median_s"]
    results["ask_server_vs_warm"] = round(results["ask_server"]["median_s"] / warm, 2) if warm else None
    out(
        f"  ask with the server / warm in-process question: {results['ask_server_vs_warm']}x "
        "(the server's process start and HTTP round trip over the question itself)"
    )
    results["pass"] = all(results[key]["pass"] for key in TARGETS_S)
    return results


def _load_average() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return []
