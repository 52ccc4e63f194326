"""What follows baseline and candidate (harness.stack.run.followups.decide): the attribution re-runs only
checks a single-package entry could judge differently."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import upgrade_reports

from harness.model.codec import from_json, to_json
from harness.model.enums import CheckKind, Outcome
from harness.model.report import Report, Summary
from harness.stack.pins.matrix import Entry
from harness.stack.run import followups

ENTRIES = [Entry(name, {}, "") for name in ("baseline", "candidate", "jax-only", "optax-only")]
NOT_RECORDED = dict(outcome=Outcome.ERROR, comparisons=[],
                    message="golden file golden/demo.json does not exist; record it with `upgrade-harness golden`.")
RAISED = dict(outcome=Outcome.FAILED, exception="ValueError", comparisons=[], own=True, raised_at="mylib/train.py:4",
              message="ValueError: operands could not be broadcast together with shapes (3,) (4,)")
NOT_IMPORTED = dict(outcome=Outcome.FAILED, kind=CheckKind.COLLECTION, comparisons=[],
                    message="contracts/test_demo.py could not be collected: SyntaxError: '(' was never closed")


@pytest.fixture(scope="module")
def base() -> Report:
    return from_json(Report, upgrade_reports.load("baseline"))


def _write(folder, name: str, report: Report, broken: dict[str, dict]) -> None:
    checks = [dataclasses.replace(c, **broken[c.id]) if c.id in broken else c for c in report.checks]
    (folder / f"{name}.json").write_text(json.dumps(to_json(dataclasses.replace(
        report, checks=checks, summary=Summary.of(checks)))))


def _two(tmp_path, base: Report, on_baseline: dict[str, dict], on_candidate: dict[str, dict]) -> followups.FollowUps:
    _write(tmp_path, "baseline", base, on_baseline)
    _write(tmp_path, "candidate", base, on_candidate)  # the baseline's own checks: nothing else moves
    return followups.decide(tmp_path, ENTRIES)


@pytest.mark.parametrize("broken", [NOT_RECORDED, NOT_IMPORTED, RAISED],
                         ids=["golden-not-recorded", "module-not-imported", "own-contract-raised"])
def test_a_check_the_baseline_cannot_judge_is_not_attributed(tmp_path, base, broken):
    """A golden value never recorded, a contract module that does not import, or a contract of the team's whose
    code raises, on every entry: the single-package entries would only say "not judged" again, so none runs
    (the verdict says the fix)."""
    some = base.checks[0].id
    follow = _two(tmp_path, base, {some: broken}, {some: broken})
    assert follow.judged and follow.changed == () and not follow.attributes
    assert follow.skipped_note(ENTRIES[2:]) == ("the only checks not unchanged on the candidate (1) cannot be judged "
                                               "on the baseline itself; the single-package entries are not needed")


def test_a_check_that_errors_on_the_candidate_only_is_attributed(tmp_path, base):
    some = base.checks[0].id
    follow = _two(tmp_path, base, {}, {some: NOT_RECORDED})
    assert follow.changed == (some,) and [e.name for e in follow.attribution] == ["jax-only", "optax-only"]
