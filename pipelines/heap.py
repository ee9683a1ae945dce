"""Freezing the heap once a pipeline is warmed, in a process `pipelines.runtime.setup()` set up.

The models, parsers and pipelines a warm-up loads live as long as the process; a full garbage collection would
otherwise walk all of them again, seconds in the middle of one question. `setup()` turns this on
(`freeze_after_warm_ups`); the catalog calls `after_warm_up()` once each pipeline is warmed. The switch lives here,
below both, so that the catalog does not import the runtime that owns catalogs.
"""

from __future__ import annotations

import gc

_on = False


def freeze_after_warm_ups() -> None:
    """From now on, `after_warm_up()` freezes the heap (idempotent; `setup()` calls it once per process)."""
    global _on
    _on = True


def after_warm_up() -> None:
    """Called by the catalog once a pipeline is warmed: in a set-up process, collect the warm-up's garbage and move
    everything left (the loaded models, parsers and components) to the collector's permanent generation
    (`gc.freeze()`), so that no later collection walks them again; nothing in a process that was not set up."""
    if not _on:
        return
    gc.collect()
    gc.freeze()


def after_close() -> None:
    """Called by the catalog once it dropped its pipelines: in a set-up process, give the frozen heap back to the
    collector, so that what the closed pipelines held in reference cycles can be collected (frozen, it never would
    be); the next warm-up freezes what is still alive again."""
    if _on:
        gc.unfreeze()
