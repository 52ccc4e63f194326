"""What follows baseline and candidate (harness.stack.run.followups.decide): the attribution re-runs only
checks a single-package entry could judge differently."""

from __future__ import annotations

import dataclasses
import json

from harness.model.codec import from_json, to_json
from harness.model.enums import Outcome
from harness.model.report import Report, Summary
from harness.stack.pins.matrix import Entry
from harness.stack.run import followups

ENTRIES = [Entry(name, {}, "") for name in ("baseline", "candidate", "jax-only", "optax-only")]
NOT_RECORDED = "golden file golden/demo.json does not exist; record it from the baseline with `upgrade-harness golden`."


def _write(folder, name: str, report: Report, errored: set[str]) -> None:
    checks = [dataclasses.replace(c, outcome=Outcome.ERROR, message=NOT_RECORDED, comparisons=[])
              if c.id in errored else c for c in report.checks]
    (folder / f"{name}.json").write_text(json.dumps(to_json(dataclasses.replace(
        report, checks=checks, summary=Summary.of(checks)))))


def _two(tmp_path, base_errored: set[str], candidate_errored: set[str]) -> followups.FollowUps:
    from support import upgrade_reports

    base = from_json(Report, upgrade_reports.load("baseline"))
    _write(tmp_path, "baseline", base, base_errored)
    _write(tmp_path, "candidate", base, candidate_errored)  # the baseline's own checks: nothing else moves
    return followups.decide(tmp_path, ENTRIES)


def test_a_check_the_baseline_cannot_judge_is_not_attributed(tmp_path):
    """A golden value never recorded errors on every entry: the single-package entries would only say
    "not judged" again, so none runs (the verdict already says how to record it)."""
    from support import upgrade_reports

    some = from_json(Report, upgrade_reports.load("baseline")).checks[0].id
    follow = _two(tmp_path, {some}, {some})
    assert follow.judged and follow.changed == () and not follow.attributes
    assert follow.skipped_note(ENTRIES[2:]) == ("the only checks not unchanged on the candidate (1) cannot be judged "
                                               "on the baseline either; the single-package entries are not needed")


def test_a_check_that_errors_on_the_candidate_only_is_attributed(tmp_path):
    from support import upgrade_reports

    some = from_json(Report, upgrade_reports.load("baseline")).checks[0].id
    follow = _two(tmp_path, set(), {some})
    assert follow.changed == (some,) and [e.name for e in follow.attribution] == ["jax-only", "optax-only"]
