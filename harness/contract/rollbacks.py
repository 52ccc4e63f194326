"""Several rollbacks in one process: the baseline restores the checkpoints of several writers (an upgrade's
candidate and each attribution entry) with one pytest session per writer, one after another in this one
Python process, each writing its own report and JUnit file as a process of its own per writer did.

Why one process: each rollback is a few seconds of checks behind seconds of start-up (Python, JAX, Orbax,
the suite's modules, collection). Here those are imported once; the second writer's session finds the
modules in sys.modules (pytest imports a test module by its package name, so it is not run twice) and the
checkpoints family's compiled training step in memory. Each session is still a whole pytest session: its
own configuration, its writer's folder and report given as its pytest options (--harness-rollback-from,
--harness-report, over the job's and the environment's), fixtures, report.

  python -m harness.contract.rollbacks --writer FOLDER REPORT JUNIT [--writer ...] -- PYTEST_ARGS...

Run by the baseline's session (harness.stack.entry_side.entry), which names each writer's report.
The exit status is the worst of the sessions': an interruption or internal error first, then failed checks.
The process ends as a suite's does (harness.contract.suite_main): without Python's teardown.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from harness.contract import suite_main  # first: its exit function ends the process once the others ran

_OK, _FAILED, _NO_TESTS = 0, 1, 5  # pytest.ExitCode's: the suite ran (some checks failed), or selected none


@dataclasses.dataclass(frozen=True)
class Writer:
    """One rollback: the checkpoints folder restored, the report and JUnit file its session writes."""

    folder: str
    report: str
    junit: str


def parse(argv: list[str]) -> tuple[list[Writer], list[str]]:
    """The writers (in order) and pytest's arguments (after `--`)."""
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(prog="python -m harness.contract.rollbacks")
    parser.add_argument("--writer", nargs=3, action="append", required=True, metavar=("FOLDER", "REPORT", "JUNIT"))
    found = parser.parse_args(argv[:split])
    return [Writer(*w) for w in found.writer], argv[split + 1:]


def worst(codes: list[int]) -> int:
    """The exit status of the sessions together: one that did not run to its end (interrupted, internal or
    usage error) over failed checks over none; "no tests" only when every session selected none."""
    ran = [c for c in codes if c != _NO_TESTS]
    if not ran:
        return _NO_TESTS if codes else _OK
    return max(ran, key=lambda c: (c not in (_OK, _FAILED), c))


def session_arguments(writer: Writer, arguments: list[str]) -> list[str]:
    """One writer's pytest session: the suite's arguments, then its folder, report and JUnit file (pytest
    takes an option's last value: these over any the arguments hold)."""
    return [*arguments, f"--harness-rollback-from={writer.folder}", f"--harness-report={writer.report}",
            f"--junitxml={writer.junit}"]


def main(argv: list[str]) -> int:
    import pytest  # here: the parser above is plain Python (the harness's own tests read it without pytest's weight)

    writers, arguments = parse(argv)
    codes = []
    for writer in writers:
        print(f"harness.contract.rollbacks: restoring {writer.folder} -> {writer.report}", flush=True)
        code = int(pytest.main(session_arguments(writer, arguments)))
        codes.append(code)
        if code not in (_OK, _FAILED, _NO_TESTS):  # interrupted or broken: the writers after it would be too
            break
    return worst(codes)


if __name__ == "__main__":
    suite_main.end(main(sys.argv[1:]))  # as the suite's own process ends (its module says why)
