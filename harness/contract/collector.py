"""Python's garbage collector during a contract run: the young generation is collected less often.

A contract run allocates millions of short-lived containers (JAX traces, Hypothesis's choice
sequences, NumPy temporaries) that reference counting frees; with CPython's default threshold (a
collection every 700 net allocations) one entry's suite ran the collector ~2,500 times, ~8% of its
CPU, most of it re-scanning the same long-lived objects (JAX's and Hypothesis's caches). Every
20,000 allocations it runs ~400 times for ~2%. Reference cycles are still collected, a little later,
so memory stays bounded. Set for a harness run only and restored when it ends: a team's own pytest
run, and the in-process runs of the harness's own tests, keep Python's thresholds.
"""

from __future__ import annotations

import gc

THRESHOLDS = (20_000, 50, 100)  # young allocations; young collections per middle; middle per old


def relax() -> tuple[int, int, int]:
    """Set the run's thresholds; returns the ones to restore."""
    saved = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    return saved


def restore(saved: tuple[int, int, int]) -> None:
    gc.set_threshold(*saved)
