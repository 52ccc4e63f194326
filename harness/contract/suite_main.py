"""The contract suite's pytest process, ended as soon as its work is done.

  python -m harness.contract.suite_main PYTEST_ARGS...     (pytest's own command line: pytest.main over sys.argv)

An entry's session runs its suite (and the data-parallel family's process) this way, not `python -m pytest`:
once pytest returned, every file the run makes is written and closed (the report and the JUnit file at the
session's end, the phases at unconfigure, the checkpoints by the checks), and what Python would still do is
free memory: JAX's exit function clears its backends and caches (~0.3 s CPU), then Python's teardown clears
every module and collects the heap (~0.5 s). The operating system frees that memory at once. So the exit
functions registered after this module is imported still run (logging's, a team's contract's, JAX's wait
for pending effects), except JAX's clean-up, and the process then ends without the teardown: Python's
stdout and stderr flushed, the exit status pytest's. Those registered before it (a .pth file's, such as a
coverage tool's start-up hook) do not run: measuring the contract processes' coverage needs `python -m
pytest` instead. harness.contract.rollbacks ends the same way.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

_STATUS: list[int] = []  # set by end(): the status the process ends with


def _end_now() -> None:
    """Registered on import, before pytest and JAX are: the last exit function to run."""
    if not _STATUS:  # the process ends some other way (not through end()): Python's usual teardown
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a reader gone: nothing more can be shown
            pass
    os._exit(_STATUS[0])


atexit.register(_end_now)


def _skip_jax_clean_up() -> None:
    """JAX's exit function (jax._src.api.clean_up) only frees its backends and caches; when JAX was imported."""
    clean_up = getattr(sys.modules.get("jax._src.api"), "clean_up", None)
    if clean_up is not None:
        atexit.unregister(clean_up)


def end(status: int) -> NoReturn:
    """End the process with `status`: the exit functions run but JAX's clean-up, then no teardown."""
    _skip_jax_clean_up()
    _STATUS[:] = [int(status)]
    sys.exit(int(status))


if __name__ == "__main__":
    import pytest

    end(int(pytest.main()))  # console_main is pytest's console script's, deprecated for programs
