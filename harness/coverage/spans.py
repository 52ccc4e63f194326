"""The lines of Optax's in-scope callables in a module: what `nox -s sensitivity` mutates in a module that
holds public code outside the scope too (harness.stack.sensitivity.scope.IN_SCOPE_LINES_ONLY).

    python -m harness.coverage.spans SITE_PACKAGES MODULE...   prints {module: [[first, last], ...]}

The callables come from the coverage ledger (its in-scope names), their lines from Optax's source (griffe):
a function from its first decorator to its last line, nested functions included; a class with its methods.
The sensitivity run calls this as a command: the host side's layers put the ledger above it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.coverage import ledger, surface
from harness.errors import HarnessError


def spans(found: surface.Surface, entries: ledger.Ledger, modules: list[str]) -> dict[str, list[tuple[int, int]]]:
    """module -> the (first, last) lines of each in-scope callable defined there, in order. A module that
    defines none is an error: restricting it would leave nothing to mutate."""
    by_name = found.by_any_name()
    lines: dict[str, set[tuple[int, int]]] = {module: set() for module in modules}
    for name in entries.in_scope:
        callable_ = by_name.get(name)
        if callable_ is not None and callable_.file in lines:
            lines[callable_.file].add(callable_.lines)
    empty = [module for module, found_lines in lines.items() if not found_lines]
    if empty:
        raise HarnessError(f"{', '.join(empty)} defines no in-scope callable of {entries.path}; remove it from "
                           "harness/stack/sensitivity/scope.py IN_SCOPE_LINES_ONLY (or from MODULES)")
    return {module: sorted(found_lines) for module, found_lines in lines.items()}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    site, *modules = argv
    try:
        found = spans(surface.load(Path(site)), ledger.read(), modules)
    except HarnessError as exc:
        print(f"spans: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
