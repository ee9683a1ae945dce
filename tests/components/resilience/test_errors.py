"""`first_line`: the one way an exception becomes part of a one-sentence message."""

from __future__ import annotations

from components.resilience.errors import first_line


class TestFirstLine:
    def test_keeps_only_the_first_line(self) -> None:
        error = RuntimeError("connection refused\nHINT: is the server running?\n  traceback ...")
        assert first_line(error) == "connection refused"

    def test_cuts_at_the_limit(self) -> None:
        assert first_line(ValueError("x" * 500), 40) == "x" * 40
        assert len(first_line(ValueError("y" * 500))) == 200

    def test_an_empty_error_is_named_by_its_type(self) -> None:
        assert first_line(TimeoutError()) == "TimeoutError"
        assert first_line(OSError("   \n  ")) == "OSError"
