"""The headline when a project reports the built-in contracts only (builtin = "report"): the project's
own contracts decide the exit status and are said first; the built-in ones follow, never deciding.

  CHANGED: your contracts: 1 check in 1 contract (regressor/test_loss), from jax/jaxlib 0.11.2 → 0.12.0.1;
  built-in contracts (reported only): 24 checks in 7 contracts changed (3 improvements), all from optax ...
"""

from __future__ import annotations

from harness.errors import EXIT_CHANGED, EXIT_OK
from harness.model.enums import Mark
from harness.model.report import CheckRecord, Report
from harness.model.verdict import Change, EntryVerdict, ImportFailure, OwnFamily
from harness.verdict import cause, groups, own

# Why a baseline fails its own checks, in both headlines (a new CPU too: 16-bit rounding, harness.model.host).
BASELINE_FAILS_WHY = "golden files, the baseline stack or the machine changed"

NAMED = 3  # own contracts named in the headline; the others counted
# Built-in checks whose golden values the baseline fails (a stack the team accepted), judged baseline-against-candidate.
AGAINST_BASELINE = "the baseline's own values on this host: their golden values do not hold on the baseline"
PREFIX = "built-in contracts (reported only): "


def _cause(base: Report, verdicts: list[EntryVerdict], changes: list[Change]) -> str:
    """', all from optax 0.2.6 → 0.2.8' (', from ...' for one check); the bumps that change none of them
    are left to the sections below, so that two parts fit one headline."""
    why = cause.cause(base.environment.versions, verdicts, within={c.check_id for c in changes}, tail=False)
    if why and len(changes) == 1:
        why = why.removeprefix("all ")
    return f", {why}" if why else ""


def _named(changes: list[Change]) -> str:
    names = list(dict.fromkeys(groups.contract_of(c.check_id) for c in changes))
    return ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def _named_ids(ids: list[str]) -> str:
    return ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def _own(base: Report, verdicts: list[EntryVerdict], families: list[OwnFamily]) -> tuple[int, str]:
    candidate = verdicts[0]
    changes = [c for c in candidate.contract_changes if c.own]
    failing = own.headline_part(families)  # own checks failing on the baseline: the team's change
    if changes:
        text = f"your contracts: {groups.count_text(changes)} ({_named(changes)}){_cause(base, verdicts, changes)}"
        return EXIT_CHANGED, f"CHANGED: {failing}; on the candidate: {text}" if failing else f"CHANGED: {text}"
    unchanged = _held(candidate, families)
    return (EXIT_CHANGED, f"CHANGED: {failing}; otherwise {unchanged}") if failing else (EXIT_OK, f"OK: {unchanged}")


def _held(candidate: EntryVerdict, families: list[OwnFamily]) -> str:
    """'your contracts hold on candidate (13 checks)', or, when some were not judged there (they fail on the
    baseline), how many of them hold and how many were not judged, apart: a count says only what it counts.
    Accepted on the branch, moved within noise or bits within tolerance: each held, and said."""
    checks, bits = sum(f.checks for f in families), sum(f.bits_changed for f in families)
    noise, accepted = sum(f.within_noise for f in families), [i for f in families for i in f.accepted]
    failing = {i for f in families for i in (*f.failing_on_baseline, *f.not_judged_on_baseline)}
    held = sum(c.own and c.check_id not in failing and (c.mark in (Mark.UNCHANGED, Mark.BITS_CHANGED, Mark.NOISE)
                                                         or c.check_id in accepted) for c in candidate.changes)
    said = [f"{len(accepted)} accepted on this branch ({_named_ids(accepted)})"] if accepted else []
    said += [f"{noise} moved within numerical noise"] if noise else []
    said += [f"{bits} moved bits within tolerance"] if bits else []
    moved = f"; {', '.join(said)}" if said else ""
    if held == checks:
        return f"your contracts hold on {candidate.name} ({checks} check{'s' * (checks != 1)}{moved})"
    unjudged = checks - held
    why = (": it fails on the baseline" if unjudged == 1 else ": they fail on the baseline") \
        if unjudged == len(failing) else ""
    return (f"{held} of your {checks} check{'s' * (checks != 1)} hold{'s' * (held == 1)} on {candidate.name} "
            f"({unjudged} not judged{why}{moved})")


def _builtin(base: Report, verdicts: list[EntryVerdict], found: ImportFailure | None,
             failures: list[CheckRecord], against: int) -> str | None:
    """What became of the built-in contracts; None when the baseline ran none. `against`: how many the baseline
    fails against their golden values that were judged against its own values (harness.verdict.against_baseline)."""
    if all(c.own for c in base.checks):
        return None
    if failures:
        return f"not judged, the baseline fails {len(failures)} of them ({BASELINE_FAILS_WHY})"
    candidate = verdicts[0]
    changes = [c for c in candidate.contract_changes if not c.own]
    not_judged = sum(c.mark == Mark.NOT_JUDGED and not c.own for c in candidate.changes)
    if found is not None and any(found.folds(c) for c in changes):
        others = [c for c in changes if not found.folds(c)]
        text = found.text + (f"; and {len(others)} other checks changed" if others else "")
    elif changes:
        text = groups.count_text(changes, " changed") + _cause(base, verdicts, changes)
    else:
        text = "unchanged"
    text += f", {not_judged} not judged" if not_judged else ""
    return text + (f" ({against} judged against {AGAINST_BASELINE})" if against else "")


def headline(base: Report, verdicts: list[EntryVerdict], found: ImportFailure | None, families: list[OwnFamily],
             builtin_failures: list[CheckRecord], against: int = 0) -> tuple[int, str]:
    """The exit status (the project's own contracts only) and the headline with both parts."""
    status, text = _own(base, verdicts, families)
    said = _builtin(base, verdicts, found, builtin_failures, against)
    return status, text + (f"; {PREFIX}{said}" if said else "")
