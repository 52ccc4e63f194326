"""Replaying another entry's falsifying examples, so a property is called changed only when the
baseline passes the very example the candidate fails.

Hypothesis prints, for every failure, the arguments of its public `@reproduce_failure` decorator
(the profiles set print_blob); the report keeps them (CheckRecord.reproduce_failure), `nox -s
upgrade` writes them to a file named by HARNESS_REPLAY, and here they decorate the baseline's tests.
A blob is tied to the Hypothesis version that wrote it: another version makes the replay fail as an
error, which leaves the change as it was.
"""

from __future__ import annotations

import ast
import json
import os
import re

from harness import env_vars

_BLOB = re.compile(r"@reproduce_failure\((['\"][^'\"]+['\"], b['\"][^'\"]*['\"])\)")


def blob(longrepr_text: str) -> str | None:
    """The `@reproduce_failure(...)` arguments in a failure's text, e.g. "'6.170.17', b'AEICaQ=='"."""
    found = _BLOB.findall(longrepr_text or "")
    return found[-1] if found else None


def apply(items, check_id) -> None:
    """Decorate the tests named in the HARNESS_REPLAY file with their recorded falsifying examples."""
    path = os.environ.get(env_vars.REPLAY)
    if not path:
        return
    import hypothesis

    with open(path) as fh:
        wanted: dict[str, str] = json.load(fh)
    for item in items:
        args = wanted.get(check_id(item))
        test = getattr(item, "obj", None)
        if args and getattr(test, "is_hypothesis_test", False):
            version, data = ast.literal_eval(f"({args})")
            hypothesis.reproduce_failure(version, data)(test)
