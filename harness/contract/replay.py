"""Replaying another entry's falsifying examples, so a property is called changed only when the
baseline passes the very example the candidate fails.

Hypothesis prints, for every failure, the arguments of its public `@reproduce_failure` decorator
(the profiles set print_blob); the report keeps them (CheckRecord.reproduce_failure), `nox -s
upgrade` writes them to a file its entry's job names (harness.contract.job), and here they decorate the baseline's tests.
A blob is tied to the Hypothesis version that wrote it: another version makes Hypothesis refuse the
replay (InvalidArgument), which the verdict does not count as the baseline failing (compare._replayed
needs the same exception as the candidate's). All parametrizations of a test share one function, so
the blob is set for the one item while it runs (plugin.pytest_runtest_call) and removed after.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re

from harness.contract import job

_BLOB = re.compile(r"@reproduce_failure\((['\"][^'\"]+['\"], b['\"][^'\"]*['\"])\)")


def blob(longrepr_text: str) -> str | None:
    """The `@reproduce_failure(...)` arguments in a failure's text, e.g. "'6.170.17', b'AEICaQ=='"."""
    found = _BLOB.findall(longrepr_text or "")
    return found[-1] if found else None


def examples(config) -> dict[str, tuple[str, bytes]]:
    """check id -> (Hypothesis version, blob) from the job's replay file; empty when there is none."""
    path = job.options(config).replay
    if not path:
        return {}
    with open(path) as fh:
        return {check: ast.literal_eval(f"({args})") for check, args in json.load(fh).items()}


_ATTRIBUTE = "_hypothesis_internal_use_reproduce_failure"  # what hypothesis.reproduce_failure sets


@contextlib.contextmanager
def replaying(test, example: tuple[str, bytes] | None):
    """The test decorated with its falsifying example while one item runs, undecorated after."""
    if example is None or not getattr(test, "is_hypothesis_test", False):
        yield
        return
    import hypothesis

    before = getattr(test, _ATTRIBUTE, None)
    hypothesis.reproduce_failure(*example)(test)
    try:
        yield
    finally:
        setattr(test, _ATTRIBUTE, before)
