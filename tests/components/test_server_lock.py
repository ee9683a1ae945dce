"""The embedded server's cross-process lock is pgserver's own: the file its public `lock_path` names, locked the way
pgserver locks it, so a process holding pgserver's lock (starting a server, or stopping it at exit) excludes ours."""

import os
import subprocess
import sys
import textwrap

from pgserver.postgres_server import PostgresServer

from components.database import server_lock

HOLD = textwrap.dedent(
    """
    import sys
    from pgserver.postgres_server import PostgresServer
    with PostgresServer._lock:  # pgserver's own lock, as its start and exit take it
        print("held", flush=True)
        sys.stdin.readline()
    """
)


def test_pgserver_locks_the_file_it_names_in_lock_path() -> None:
    # Pinned to the installed pgserver: the lock it takes is on the file it publishes.
    assert os.fsdecode(PostgresServer._lock.path) == str(PostgresServer.lock_path)


def test_pgserver_holding_its_lock_in_another_process_excludes_ours() -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = server_lock(PostgresServer)
        assert not lock.acquire(blocking=False)
    finally:
        holder.communicate("\n", timeout=30)
    lock = server_lock(PostgresServer)
    assert lock.acquire(blocking=False)
    lock.release()


def test_a_start_while_another_process_holds_the_lock_is_a_sentence_not_a_hang(tmp_path, monkeypatch) -> None:
    import pytest

    import components.database as database

    monkeypatch.setattr(database, "LOCK_WAIT_S", 0.5)
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(database.DatabaseUnavailable, match="another process has held its lock file"):
            database._start_embedded(tmp_path / "pg")
    finally:
        holder.communicate("\n", timeout=30)
    assert tmp_path / "pg" not in database._SERVERS


def test_a_list_of_users_cut_short_is_started_afresh_not_a_traceback(tmp_path) -> None:
    import components.database as database

    (tmp_path / ".handle_pids.json").write_text("[12")  # a process killed while pgserver rewrote it
    database._forget_dead_handles(tmp_path)
    assert (tmp_path / ".handle_pids.json").read_text() == "[]"


def test_the_exit_prune_never_raises(tmp_path, monkeypatch) -> None:
    import components.database as database

    def gone(folder):
        raise FileNotFoundError(2, "the data folder was removed", str(folder))

    monkeypatch.setattr(database, "_forget_dead_handles", gone)
    database._forget_dead_handles_at_exit(tmp_path)
    (tmp_path / ".handle_pids.json").write_text("")
    monkeypatch.undo()
    database._forget_dead_handles_at_exit(tmp_path)
