"""Python's garbage collector during a contract run: the young generation is collected less often.

A contract run allocates millions of short-lived containers (JAX traces, Hypothesis's choice
sequences, NumPy temporaries) that reference counting frees; with CPython's default threshold (a
collection every 700 net allocations) one entry's suite ran the collector ~2,500 times, ~8% of its
CPU, most of it re-scanning the same long-lived objects (JAX's and Hypothesis's caches). Every
20,000 allocations it runs ~400 times for ~2%. Reference cycles are still collected, a little later,
so memory stays bounded. Set for a harness run only and restored when it ends: a team's own pytest
run, and the in-process runs of the harness's own tests, keep Python's thresholds.

When the run ends, pytest's unraisable-exception plugin collects the whole heap once more, to report the
exceptions that collection raises in `__del__` methods (~0.4 s CPU over a contract run's heap of JAX's
and Hypothesis's caches). By then the run's report is written (at the session's end): what it finds
can reach neither a check nor the report. A harness run asks for no such collection; a team's run keeps it.
"""

from __future__ import annotations

import gc

try:  # pytest's own setting (its tests lower it); an older pytest without it collects as before
    from _pytest.unraisableexception import gc_collect_iterations_key
except ImportError:  # pragma: no cover
    gc_collect_iterations_key = None

THRESHOLDS = (20_000, 50, 100)  # young allocations; young collections per middle; middle per old


def relax(config) -> tuple[int, int, int]:
    """Set the run's thresholds, and no full collection when `config`'s run ends; returns the thresholds to
    restore."""
    saved = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    _skip_final_collection(config)
    return saved


def restore(saved: tuple[int, int, int]) -> None:
    gc.set_threshold(*saved)


def _skip_final_collection(config) -> None:
    """No full collection when `config`'s run ends (the report is written by then)."""
    if gc_collect_iterations_key is not None:
        config.stash[gc_collect_iterations_key] = 0
