"""A Neo4j contract server: the Bolt protocol (5.0-5.4) that the official `neo4j` driver speaks, on 127.0.0.1.

What it implements, from the public Bolt and PackStream v1 specifications: the handshake (magic 0x6060B017, four
offered versions or version ranges, the highest 5.x both sides support is agreed, 0x00000000 when none is);
chunked message framing (two-byte chunk sizes, a zero chunk ends a message, zero chunks between messages are
keep-alive NOOPs); PackStream v1 (null, booleans, tiny/8/16/32/64-bit integers, 64-bit floats, bytes, strings,
lists, maps and structures; a `Node` structure in answers); the requests HELLO (credentials in HELLO on 5.0),
LOGON/LOGOFF (5.1+), TELEMETRY (5.4+, sent when the server's HELLO hints `telemetry.enabled`), RUN, PULL (with
`n` and `has_more`), DISCARD, BEGIN, COMMIT, ROLLBACK, RESET and GOODBYE; the answers SUCCESS, RECORD, FAILURE and
IGNORED (after a FAILURE everything is IGNORED until RESET, as the specification's FAILED state says). ROUTE is
refused: tests use a direct `bolt://` driver.

A test scripts the answers: `server.answer(pattern, records)` gives the records (dicts; their keys are the fields)
of every RUN whose query matches the regular expression `pattern` (the first matching rule wins; a RUN no rule
matches gets SUCCESS without records), after `delay_s` seconds when given, `server.hang_run(pattern)` never answers
matching RUNs (until `reset`), `server.fail_run(pattern, code, message, times=N)` answers FAILURE for the
next N matching RUNs (None: always). `server.runs` records every RUN (query, parameters, extra) and
`server.messages` every request's name and `server.begins` every BEGIN's extra (database, transaction timeout),
for assertions. Failure modes: a password other than the server's
(`Neo.ClientError.Security.Unauthorized` at LOGON, or HELLO on 5.0), `hang` (accept the connection and never
answer, at the handshake or at a RUN), `close` (close the connection at the handshake or at a RUN). Fixture
`bolt_server`; manual run: `python -m tests.contract_servers.bolt`.
"""

from __future__ import annotations

import argparse
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.contract_servers import take_counted

MAGIC = b"\x60\x60\xb0\x17"
VERSIONS = ((5, 4), (5, 3), (5, 2), (5, 1), (5, 0))  # the server's own, best first
UNAUTHORIZED = "Neo.ClientError.Security.Unauthorized"
UNAVAILABLE = "Neo.TransientError.General.DatabaseUnavailable"
REQUESTS = {
    0x01: "HELLO",
    0x02: "GOODBYE",
    0x0F: "RESET",
    0x10: "RUN",
    0x11: "BEGIN",
    0x12: "COMMIT",
    0x13: "ROLLBACK",
    0x2F: "DISCARD",
    0x3F: "PULL",
    0x54: "TELEMETRY",
    0x66: "ROUTE",
    0x6A: "LOGON",
    0x6B: "LOGOFF",
}
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F


# -- PackStream v1 ----------------------------------------------------------------------------------------------


@dataclass
class Structure:
    """A PackStream structure: a one-byte tag and up to 15 fields."""

    tag: int
    fields: list[Any]


@dataclass
class Node:
    """A graph node as a RETURN of `n` sends it (the Bolt 5 Node structure: id, labels, properties, element id)."""

    properties: dict[str, Any]
    labels: list[str] = field(default_factory=list)
    id: int = 0

    def structure(self) -> Structure:
        return Structure(0x4E, [self.id, list(self.labels), dict(self.properties), str(self.id)])


def _sized(out: bytearray, size: int, tiny: int, markers: tuple[int, int, int]) -> None:
    """The marker of a string, list or map of `size` items: a tiny marker under 16, else 8/16/32-bit sizes."""
    if tiny and size < 16:
        out.append(tiny + size)
    elif size < 0x100:
        out += bytes((markers[0], size))
    elif size < 0x10000:
        out += bytes((markers[1],)) + struct.pack(">H", size)
    else:
        out += bytes((markers[2],)) + struct.pack(">I", size)


def pack(value: Any, out: bytearray | None = None) -> bytearray:
    """PackStream v1 bytes of a Python value (None, bool, int, float, bytes, str, list, dict, Structure, Node)."""
    out = bytearray() if out is None else out
    if value is None:
        out.append(0xC0)
    elif value is True or value is False:
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        if -16 <= value < 128:
            out += struct.pack(">b", value)
        elif -0x80 <= value < 0x80:
            out += b"\xc8" + struct.pack(">b", value)
        elif -0x8000 <= value < 0x8000:
            out += b"\xc9" + struct.pack(">h", value)
        elif -0x80000000 <= value < 0x80000000:
            out += b"\xca" + struct.pack(">i", value)
        else:
            out += b"\xcb" + struct.pack(">q", value)
    elif isinstance(value, float):
        out += b"\xc1" + struct.pack(">d", value)
    elif isinstance(value, (bytes, bytearray)):
        _sized(out, len(value), 0, (0xCC, 0xCD, 0xCE))
        out += value
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _sized(out, len(data), 0x80, (0xD0, 0xD1, 0xD2))
        out += data
    elif isinstance(value, (list, tuple)):
        _sized(out, len(value), 0x90, (0xD4, 0xD5, 0xD6))
        for item in value:
            pack(item, out)
    elif isinstance(value, dict):
        _sized(out, len(value), 0xA0, (0xD8, 0xD9, 0xDA))
        for key, item in value.items():
            pack(str(key), out)
            pack(item, out)
    elif isinstance(value, Node):
        pack(value.structure(), out)
    elif isinstance(value, Structure):
        out += bytes((0xB0 + len(value.fields), value.tag))
        for item in value.fields:
            pack(item, out)
    else:
        raise TypeError(f"PackStream cannot carry {type(value).__name__}")
    return out


class Unpacker:
    """Reads PackStream v1 values from bytes, in order."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def _take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError("PackStream value is cut short")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def _size(self, marker: int, tiny: int, markers: tuple[int, int, int]) -> int | None:
        if tiny <= marker < tiny + 16:
            return marker - tiny
        for width, fmt in zip(markers, (">B", ">H", ">I"), strict=True):
            if marker == width:
                return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
        return None

    def unpack(self) -> Any:
        marker = self._take(1)[0]
        if marker < 0x80 or marker >= 0xF0:
            return struct.unpack(">b", bytes((marker,)))[0]
        fixed = {0xC0: None, 0xC2: False, 0xC3: True}
        if marker in fixed:
            return fixed[marker]
        numbers = {0xC1: ">d", 0xC8: ">b", 0xC9: ">h", 0xCA: ">i", 0xCB: ">q"}
        if marker in numbers:
            fmt = numbers[marker]
            return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
        if (size := self._size(marker, 0x80, (0xD0, 0xD1, 0xD2))) is not None:
            return self._take(size).decode("utf-8")
        if (size := self._size(marker, 0x90, (0xD4, 0xD5, 0xD6))) is not None:
            return [self.unpack() for _ in range(size)]
        if (size := self._size(marker, 0xA0, (0xD8, 0xD9, 0xDA))) is not None:
            return {self.unpack(): self.unpack() for _ in range(size)}
        if marker in (0xCC, 0xCD, 0xCE):
            fmt = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I"}[marker]
            return self._take(struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0])
        if 0xB0 <= marker < 0xC0:
            tag = self._take(1)[0]
            return Structure(tag, [self.unpack() for _ in range(marker - 0xB0)])
        raise ValueError(f"unknown PackStream marker 0x{marker:02X}")


def chunked(message: bytes, limit: int = 0xFFFF) -> bytes:
    """A message in Bolt's framing: chunks of at most `limit` bytes behind their two-byte sizes, then 00 00."""
    out = bytearray()
    for start in range(0, len(message), limit):
        piece = message[start : start + limit]
        out += struct.pack(">H", len(piece)) + piece
    return bytes(out + b"\x00\x00")


# -- the server ---------------------------------------------------------------------------------------------------


@dataclass
class Rule:
    """How RUNs whose query matches `pattern` are answered: `records`, or FAILURE (`code`, `message`) `times`
    times (None: always)."""

    pattern: str
    records: list[dict[str, Any]] = field(default_factory=list)
    fields: list[str] | None = None
    code: str = ""
    message: str = ""
    times: int | None = None
    delay_s: float = 0.0
    hang: bool = False


class _Closed(Exception):
    """The client went away (or the server is told to drop the connection)."""


class BoltContractServer:
    """A threaded Bolt server on 127.0.0.1 answering RUNs by the test's script; see the module's docstring."""

    name = "bolt"

    def __init__(
        self,
        port: int = 0,
        user: str = "neo4j",
        password: str = "contract-pw",
        versions: tuple[tuple[int, int], ...] = VERSIONS,
        telemetry: bool = True,
    ) -> None:
        self.user, self.password, self.versions, self.telemetry = user, password, versions, telemetry
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", port))
        self._listener.settimeout(0.2)
        self._thread: threading.Thread | None = None
        self._connections: list[socket.socket] = []
        self.rules: list[Rule] = []
        self.runs: list[dict[str, Any]] = []
        self.messages: list[str] = []
        self.begins: list[dict[str, Any]] = []  # each BEGIN's extra (db, tx_timeout, mode, bookmarks, ...)
        self.agreed: list[tuple[int, int]] = []
        self.faults: dict[str, str] = {}  # stage ("handshake" or "run") -> "hang" or "close"

    # -- lifecycle --------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def start(self) -> BoltContractServer:
        self._thread = threading.Thread(target=self._accept, name="bolt-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._released.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._drop_connections()
        self._listener.close()

    def __enter__(self) -> BoltContractServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the script -------------------------------------------------------------------------------------------

    def answer(
        self, pattern: str, records: list[dict[str, Any]], fields: list[str] | None = None, delay_s: float = 0.0
    ) -> None:
        """RUNs matching `pattern` get `records` (their keys are the fields unless `fields` is given), `delay_s`
        seconds after they arrive (a slow query)."""
        with self._lock:
            self.rules.append(Rule(pattern, list(records), fields, delay_s=delay_s))

    def hang_run(self, pattern: str) -> None:
        """RUNs matching `pattern` are never answered (their connection is held until `reset` or `stop`); other
        RUNs are answered as usual."""
        with self._lock:
            self.rules.insert(0, Rule(pattern, hang=True))

    def fail_run(self, pattern: str, code: str, message: str, times: int | None = None) -> None:
        """The next `times` RUNs matching `pattern` (None: every one) get FAILURE `code` with `message`."""
        with self._lock:
            self.rules.insert(0, Rule(pattern, code=code, message=message, times=times))

    def fail(self, mode: str, stage: str = "handshake") -> None:
        """`hang` (never answer) or `close` (close the connection) at the `handshake` or at every `run`."""
        if mode not in ("hang", "close") or stage not in ("handshake", "run"):
            raise ValueError("mode must be hang or close, stage handshake or run")
        with self._lock:
            self.faults[stage] = mode

    def reset(self) -> None:
        """Behave again: no rules, faults or logs; hanging connections are released and every connection closed."""
        with self._lock:
            self.rules.clear()
            self.runs.clear()
            self.messages.clear()
            self.begins.clear()
            self.agreed.clear()
            self.faults.clear()
        self._released.set()
        self._drop_connections()
        self._released = threading.Event()

    def queries(self) -> list[str]:
        with self._lock:
            return [run["query"] for run in self.runs]

    # -- connections ------------------------------------------------------------------------------------------

    def _drop_connections(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), name="bolt-connection", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with connection:
                version = self._handshake(connection)
                if version is not None:
                    _Session(self, connection, version).loop()
        except (_Closed, OSError, ValueError):
            pass
        finally:
            with self._lock:
                if connection in self._connections:
                    self._connections.remove(connection)

    def _fault(self, stage: str) -> None:
        with self._lock:
            mode = self.faults.get(stage)
        if mode == "hang":
            self._hang()
        if mode == "close":
            raise _Closed

    def _hang(self) -> None:
        """Answer nothing until the test resets the server (or two minutes pass), then drop the connection."""
        self._released.wait(timeout=120)
        raise _Closed

    def _handshake(self, connection: socket.socket) -> tuple[int, int] | None:
        request = _receive(connection, 20)
        self._fault("handshake")
        if request[:4] != MAGIC:
            return None
        offers = [request[i : i + 4] for i in range(4, 20, 4)]
        for major, minor in self.versions:
            for offer in offers:
                span, top_minor, top_major = offer[1], offer[2], offer[3]
                if top_major == major and top_minor - span <= minor <= top_minor:
                    connection.sendall(bytes((0, 0, minor, major)))
                    with self._lock:
                        self.agreed.append((major, minor))
                    return major, minor
        connection.sendall(b"\x00\x00\x00\x00")
        return None

    def _rule_for(self, query: str) -> Rule | None:
        with self._lock:
            return take_counted(self.rules, lambda rule: re.search(rule.pattern, query) is not None)


def _receive(connection: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        piece = connection.recv(n - len(data))
        if not piece:
            raise _Closed
        data += piece
    return bytes(data)


class _Session:
    """One client connection after the handshake: its state (authenticated, failed, the open result)."""

    def __init__(self, server: BoltContractServer, connection: socket.socket, version: tuple[int, int]) -> None:
        self.server, self.connection, self.version = server, connection, version
        self.failed = False
        self.pending: list[list[Any]] = []
        self.fields: list[str] = []
        self.in_transaction = False
        self.bookmarks = 0

    def read_message(self) -> Structure:
        body = bytearray()
        while True:
            size = struct.unpack(">H", _receive(self.connection, 2))[0]
            if size == 0:
                if body:  # a zero chunk ends a message; before one it is a keep-alive NOOP
                    break
                continue
            body += _receive(self.connection, size)
        message = Unpacker(bytes(body)).unpack()
        if not isinstance(message, Structure):
            raise ValueError("a Bolt message must be a structure")
        return message

    def send(self, tag: int, *fields: Any) -> None:
        self.connection.sendall(chunked(bytes(pack(Structure(tag, list(fields))))))

    def failure(self, code: str, message: str) -> None:
        self.failed = True
        self.send(FAILURE, {"code": code, "message": message})

    def loop(self) -> None:
        while True:
            message = self.read_message()
            name = REQUESTS.get(message.tag, f"0x{message.tag:02X}")
            with self.server._lock:
                self.server.messages.append(name)
            if name == "GOODBYE":
                return
            if name == "RESET":
                self.failed, self.pending, self.in_transaction = False, [], False
                self.send(SUCCESS, {})
            elif self.failed:
                self.send(IGNORED)
            else:
                self.handle(name, message.fields)

    def handle(self, name: str, fields: list[Any]) -> None:
        if name == "HELLO":
            hints = {"telemetry.enabled": True} if self.server.telemetry and self.version >= (5, 4) else {}
            if self.version < (5, 1) and not self.authenticated(fields[0]):
                return
            self.send(SUCCESS, {"server": "Neo4j/5.20.0", "connection_id": "bolt-contract", "hints": hints})
        elif name == "LOGON":
            if self.authenticated(fields[0]):
                self.send(SUCCESS, {})
        elif name in ("LOGOFF", "TELEMETRY", "BEGIN", "ROLLBACK"):
            self.in_transaction = name == "BEGIN"
            if name == "BEGIN":
                with self.server._lock:
                    self.server.begins.append(fields[0] if fields else {})
            self.send(SUCCESS, {})
        elif name == "COMMIT":
            self.in_transaction = False
            self.bookmarks += 1
            self.send(SUCCESS, {"bookmark": f"contract:bookmark:{self.bookmarks}"})
        elif name == "RUN":
            self.run(fields[0], fields[1] if len(fields) > 1 else {}, fields[2] if len(fields) > 2 else {})
        elif name == "PULL":
            self.pull(int((fields[0] if fields else {}).get("n", -1)))
        elif name == "DISCARD":
            self.pending = []
            self.send(SUCCESS, {"has_more": False})
        else:
            self.failure("Neo.ClientError.Request.Invalid", f"{name} is not supported by this server")

    def authenticated(self, token: dict[str, Any]) -> bool:
        if token.get("scheme") == "basic" and (token.get("principal"), token.get("credentials")) == (
            self.server.user,
            self.server.password,
        ):
            return True
        self.failure(UNAUTHORIZED, "The client is unauthorized due to authentication failure.")
        return False

    def run(self, query: str, parameters: dict[str, Any], extra: dict[str, Any]) -> None:
        with self.server._lock:
            self.server.runs.append({"query": query, "parameters": parameters, "extra": extra})
        self.server._fault("run")
        rule = self.server._rule_for(query)
        if rule is not None and rule.hang:
            self.server._hang()
        if rule is not None and rule.delay_s:
            self.server._stopping.wait(rule.delay_s)
        if rule is not None and rule.code:
            self.failure(rule.code, rule.message)
            return
        records = rule.records if rule is not None else []
        self.fields = list(rule.fields or (records[0].keys() if records else [])) if rule is not None else []
        self.pending = [[record.get(key) for key in self.fields] for record in records]
        metadata: dict[str, Any] = {"fields": self.fields, "t_first": 0}
        if self.in_transaction:
            metadata["qid"] = 0
        self.send(SUCCESS, metadata)

    def pull(self, n: int) -> None:
        batch = self.pending if n < 0 else self.pending[:n]
        self.pending = self.pending[len(batch) :]
        for values in batch:
            self.send(RECORD, values)
        if self.pending:
            self.send(SUCCESS, {"has_more": True})
            return
        metadata: dict[str, Any] = {"has_more": False, "t_last": 0, "type": "rw", "db": "neo4j"}
        if not self.in_transaction:
            self.bookmarks += 1
            metadata["bookmark"] = f"contract:bookmark:{self.bookmarks}"
        self.send(SUCCESS, metadata)


@pytest.fixture(scope="session")
def bolt_server_session() -> Any:
    with BoltContractServer() as server:
        yield server


@pytest.fixture()
def bolt_server(bolt_server_session: BoltContractServer) -> Any:
    """The session's Bolt server, reset (no rules, faults or logs, connections closed) before and after a test."""
    bolt_server_session.reset()
    yield bolt_server_session
    bolt_server_session.reset()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Serve the Neo4j (Bolt) contract server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=7687)
    parser.add_argument("--password", default="contract-pw")
    arguments = parser.parse_args()
    with BoltContractServer(arguments.port, password=arguments.password) as served:
        print(f"Bolt contract server: NEO4J_URI={served.uri} NEO4J_PASSWORD={arguments.password} (Ctrl-C stops)")  # noqa: T201
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
