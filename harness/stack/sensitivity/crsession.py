"""cosmic-ray's session databases, read and marked through cosmic-ray's own API (its WorkDB).

This module runs inside the disposable environment, where cosmic-ray is installed; the host calls it as
`python -m harness.stack.sensitivity.crsession COMMAND ...` and reads JSON on stdout:

  list DB...                     every mutant of each session: module, operator, occurrence, line
  skip DB KEYS.json              mark mutants skipped (not drawn, or equivalent) with the reason given
  results DB...                  every mutant with its outcome, the diff and the end of the test output
"""

from __future__ import annotations

import json
import sys

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

OUTPUT_TAIL = 1500  # characters of a mutant's test output kept in the report (why it was killed)


def _mutation(item):
    (mutation,) = item.mutations  # cosmic-ray's init makes one mutation per work item
    return mutation


def describe(item) -> dict:
    mutation = _mutation(item)
    return {"module": str(mutation.module_path), "operator": mutation.operator_name,
            "occurrence": mutation.occurrence, "line": mutation.start_pos[0]}


def key_of(described: dict) -> str:
    return f"{described['module']}:{described['operator']}:{described['occurrence']}"


def list_mutants(paths: list[str]) -> list[dict]:
    found = []
    for path in paths:
        with use_db(path, WorkDB.Mode.open) as db:
            found += [describe(item) for item in db.work_items]
    return found


def skip(path: str, reasons: dict[str, str]) -> int:
    """Mark the mutants named in `reasons` (key -> reason) skipped: cosmic-ray's exec leaves them alone."""
    with use_db(path, WorkDB.Mode.open) as db:
        marked = 0
        for item in db.work_items:
            reason = reasons.get(key_of(describe(item)))
            if reason is not None:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=reason))
                marked += 1
    return marked


def outcome(result: WorkResult | None) -> str:
    """killed, survived, timeout, skipped, error (the mutant could not be tested) or pending."""
    if result is None:
        return "pending"
    if result.worker_outcome == WorkerOutcome.SKIPPED:
        return "skipped"
    if result.worker_outcome != WorkerOutcome.NORMAL or result.test_outcome == TestOutcome.INCOMPETENT:
        return "error"
    if result.test_outcome == TestOutcome.SURVIVED:
        return "survived"
    return "timeout" if result.output == "timeout" else "killed"  # cosmic-ray's words for a timeout


def results(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with use_db(path, WorkDB.Mode.open) as db:
            done = dict(db.results)
            for item in db.work_items:
                result = done.get(item.job_id)
                rows.append({**describe(item), "outcome": outcome(result),
                             "diff": (result.diff if result else None) or "",
                             "output": ((result.output if result else None) or "")[-OUTPUT_TAIL:]})
    return rows


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "list":
        print(json.dumps(list_mutants(args)))
    elif command == "skip":
        with open(args[1]) as handle:
            print(json.dumps({"marked": skip(args[0], json.load(handle))}))
    elif command == "results":
        print(json.dumps(results(args)))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
