"""Which lines of a module are mutated: every line, or only those of the in-scope callables defined there.

A module of scope.IN_SCOPE_LINES_ONLY holds public code outside the scope too; a mutant of it is judged only
when its line lies within the span of an in-scope callable (or of what it reaches there). The spans are derived
from the coverage ledger and the library's source (harness.coverage.spans, run as a command). A mutant outside them is not judged and not
dropped silently: the report counts them per module as outside the scope.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.sensitivity.mutants import MutantId


@dataclasses.dataclass(frozen=True)
class ScopeLines:
    """module -> the (first, last) line spans of its in-scope callables; a module not named is whole."""

    spans: dict[str, tuple[tuple[int, int], ...]]

    def contains(self, mutant: MutantId) -> bool:
        spans = self.spans.get(mutant.module)
        return spans is None or any(first <= mutant.line <= last for first, last in spans)

    def split(self, mutants: list[MutantId]) -> tuple[list[MutantId], dict[str, int]]:
        """The mutants within the scope's lines, and how many of each module lie outside them."""
        inside = [m for m in mutants if self.contains(m)]
        outside = collections.Counter(m.module for m in mutants if not self.contains(m))
        return inside, dict(sorted(outside.items()))


def derive(site_packages: Path, modules: list[str]) -> ScopeLines:
    """The spans of the in-scope callables of `modules`, read from the libraries installed in site_packages."""
    if not modules:
        return ScopeLines({})
    done = subprocess.run([sys.executable, "-m", "harness.coverage.spans", str(site_packages), *modules],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise HarnessError(f"cannot find the in-scope callables' lines: {done.stderr.strip()[-2000:]}")
    return ScopeLines({module: tuple(tuple(span) for span in spans)
                       for module, spans in json.loads(done.stdout).items()})
