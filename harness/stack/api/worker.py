"""The API diff's step inside the reader environment (harness.stack.api.reader): reads a request (the
two site-packages, the versions, the contracts' and the project's files), scans the files, compares,
writes api-diff.json. It imports only the standard library, griffe and the harness's own API modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.model import api_diff
from harness.stack.selection import usage
from harness.stack.api.compare_stack import compare_entries


def _scan(groups: list[list]) -> list[usage.FileUse]:
    """[[root, [file, ...]], ...]: each group's files named as modules under its root."""
    return [f for root, files in groups for f in usage.scan(Path(root), [Path(p) for p in files])]


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    sites = tuple(Path(s) for s in request["sites"])
    found = compare_entries(request["entry"], sites, tuple(request["versions"]), _scan(request["contracts"]),
                            _scan(request["code"]), Path(request["root"]))
    api_diff.write(Path(request["output"]), found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
