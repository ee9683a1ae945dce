"""Whether a source was selected for a question: one rule for every source component."""

from __future__ import annotations

# Selections that ask every source (`auto` is resolved to concrete sources by the catalog before a run; a branch
# that still sees it is being run on its own, and answers).
SELECT_ALL = frozenset({"auto", "all"})


def source_selected(sources: list[str] | None, name: str) -> bool:
    """True when the caller's `sources` include `name`; no selection (None), `auto` and `all` include every source.

    Names compare case-insensitively and ignoring surrounding spaces.
    """
    if sources is None:
        return True
    chosen = {str(source).strip().lower() for source in sources}
    return bool(chosen & (SELECT_ALL | {name.lower()}))
