"""The project's own contracts (--contracts DIR): their families summed apart from the built-in ones,
their moved checks listed first with what moved them, and their failures on the baseline read as what
they are, a change in the project's own code (or its golden values) since recording, rather than a
stack the harness cannot judge. An own check that errors on the baseline (its golden value never
recorded) is not a change since recording: it cannot be judged, and says how to record it.
"""

from __future__ import annotations

import dataclasses

from harness.model.enums import BuiltinMode, CheckKind, Mark, Outcome
from harness.model.report import STACK_VERSION_KEYS, CheckRecord, Report
from harness.model.verdict import Change, EntryVerdict, KeyMove, OwnChange, OwnFamily
from harness.verdict import cause, explain

# The cause of an own check failing on both sides: not the stack (harness.verdict.cause names no bump for it).
SINCE_RECORDING = "your code or golden values since recording (the baseline fails it too)"
MESSAGE_SHOWN = 200  # characters of an exception's message a headline shows
NO_OWN_CONTRACTS = ('builtin = "report" asks that only your own contracts decide, but the baseline ran no contracts '
                    "of your own, so the built-in contracts decide the exit status: add test modules using `check` "
                    "to your contracts directory")


def applied_mode(base: Report, asked: BuiltinMode) -> tuple[BuiltinMode, str | None]:
    """The mode the verdict applies, and why it differs from the one asked for: reporting the built-in
    contracts only needs contracts of the project's own to decide; without any, the built-in ones decide
    (a verdict that could never say CHANGED would be worse than one that says too much)."""
    if asked == BuiltinMode.REPORT and not base.own_families:
        return BuiltinMode.JUDGE, NO_OWN_CONTRACTS
    return asked, None


def accepted(base: Report, candidate: EntryVerdict | None, check: CheckRecord) -> bool:
    """An own check the baseline fails because its family's golden values were recorded on the candidate's stack
    (accepted on the branch, then judged against the base), and the candidate, on the recording's own stack,
    passes: the baseline differs by design, the code did not change. An error (a golden value never recorded)
    is never accepted, nor a check the candidate fails too (the code changed since the accept)."""
    recorded = (base.golden_stacks or {}).get(check.family)
    if not recorded or candidate is None or check.outcome != Outcome.FAILED:
        return False
    if not any(c.check_id == check.id and c.mark == Mark.FIXED for c in candidate.changes):
        return False
    on = {k: candidate.versions.get(k) for k in STACK_VERSION_KEYS}
    here = {k: base.environment.versions.get(k) for k in STACK_VERSION_KEYS}
    return recorded == on and recorded != here


def split_failures(base: Report, failures: list[CheckRecord]) -> tuple[list[CheckRecord], list[CheckRecord]]:
    """The baseline's failing checks: those of the project's own families, and the built-in ones."""
    return [c for c in failures if c.own], [c for c in failures if not c.own]


def families(base: Report, candidate: EntryVerdict | None, own_failures: list[CheckRecord]) -> list[OwnFamily]:
    """One summary per own family, in the order the baseline report lists them."""
    found = []
    for name in base.own_families or []:
        changes = [c for c in candidate.changes if c.own and c.family == name] if candidate else []
        failures = [c for c in own_failures if c.family == name]  # own_failures are all own
        found.append(OwnFamily(
            name=name, checks=sum(bool(c.own) and c.family == name for c in base.checks),
            changed=[c.check_id for c in changes if c.mark.changes_contract],
            bits_changed=sum(c.mark == Mark.BITS_CHANGED for c in changes),
            failing_on_baseline=[c.id for c in failures if not unjudgeable(c) and not accepted(base, candidate, c)],
            not_judged_on_baseline=[c.id for c in failures if unjudgeable(c)],
            within_noise=sum(c.mark == Mark.NOISE for c in changes),
            accepted=[c.id for c in failures if accepted(base, candidate, c)]))
    return found


def unjudgeable(check: CheckRecord) -> bool:
    """An own check the baseline cannot judge: an error (a golden value never recorded, a fixture that
    fails), a contract module that does not import (a syntax error), or a contract whose code raised (a shape
    error in the team's training code): no golden value to accept fixes it."""
    return check.outcome == Outcome.ERROR or check.kind == CheckKind.COLLECTION or check.raised_at is not None


def _why(check: CheckRecord) -> str:
    """Why a check cannot be judged, in a line: what raised where, or its message."""
    if check.raised_at is None:
        return check.message.strip().rstrip(".")
    said = check.message.strip().splitlines()[0].removeprefix(f"{check.exception}:").strip() if check.message else ""
    said = said if len(said) <= MESSAGE_SHOWN else said[:MESSAGE_SHOWN - 3] + "..."
    return f"your contract raised {check.exception} at {check.raised_at}" + (f" ({said})" if said else "")


def not_judged_problem(own_failures: list[CheckRecord]) -> str | None:
    """Why the run cannot be judged when own checks error on the baseline, with the first one's message
    (it names the fix: "golden file ... does not exist; record it ... with `upgrade-harness golden`")."""
    errored = [c for c in own_failures if unjudgeable(c)]
    if not errored:
        return None
    return (f"{_plural(len(errored), 'check')} of your own contracts cannot be judged on the baseline "
            f"({_shown([c.id for c in errored])}): {_why(errored[0])}")


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def changes(base: Report, verdicts: list[EntryVerdict], candidate: Report) -> list[OwnChange]:
    """The candidate's (verdicts[0], its report `candidate`) moved own checks, most dangerous first and bits-only
    moves last, each with the single-package bump that moves it (for a check failing in both, the team's code or
    golden values since recording) and every value that differs."""
    moved = sorted((_as_accepted(base, verdicts[0], c) for c in verdicts[0].changes
                    if c.own and c.mark != Mark.UNCHANGED), key=lambda c: (c.mark.rank, c.check_id))
    versions = base.environment.versions
    return [OwnChange(c, cause.of_check(versions, verdicts, c.check_id) if c.mark.changes_contract
                      or c.mark.informational else SINCE_RECORDING if c.mark == Mark.FAILING_BOTH else "",
                      _key_moves(base, candidate, c)) for c in moved]


def _key_moves(base: Report, candidate: Report, change: Change) -> list[KeyMove]:
    """Every value of the check that differs: on the candidate; for an accepted check, the baseline's against the
    candidate's golden values (base → candidate, as its row says)."""
    if change.mark == Mark.ACCEPTED:
        return [dataclasses.replace(k, before=k.after, after=k.before) for k in explain.key_moves(
            base.check(change.check_id))]
    return explain.key_moves(candidate.check(change.check_id))


def _as_accepted(base: Report, candidate: EntryVerdict, change: Change) -> Change:
    """A check fixed on the candidate that the baseline fails only because its golden values are the
    candidate's: accepted on the branch, its move said base → candidate (the baseline's values, then the golden
    ones the candidate holds)."""
    failed = base.check(change.check_id)
    if change.mark != Mark.FIXED or failed is None or not accepted(base, candidate, failed):
        return change
    told = explain.explain(None, failed, Mark.VALUE_CHANGED)
    before, after = explain.reversed_move(told)
    return dataclasses.replace(change, mark=Mark.ACCEPTED, detail="the golden values are the candidate's: accepted "
                               "on this branch", before=before, after=after, size=told.size)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def headline_part(found: list[OwnFamily]) -> str | None:
    """The headline's words for own checks failing on the baseline; None when there are none."""
    failing = [i for f in found for i in f.failing_on_baseline]
    if not failing:
        return None
    verb = "fails" if len(failing) == 1 else "fail"
    return (f"{_plural(len(failing), 'check')} of your own contracts {verb} on the baseline itself "
            f"({_shown(failing)}): your "
            "code or the machine changed since its golden values were recorded, not the stack")


def summary(family: OwnFamily, candidate: str) -> str:
    """'mlp_training: 3 checks, unchanged on candidate (1 with bits changed, informational)'."""
    parts = []
    if family.failing_on_baseline:
        parts.append(f"{len(family.failing_on_baseline)} failing on the baseline itself (your code or the machine "
                     "changed since recording; `upgrade-harness golden --accept-changes` records it, if intended)")
    if family.not_judged_on_baseline:
        parts.append(f"{len(family.not_judged_on_baseline)} not judged on the baseline itself "
                     "(the messages below say why)")
    if family.changed:
        parts.append(f"{len(family.changed)} changed on {candidate}")
    elif not family.failing_on_baseline and not family.not_judged_on_baseline:
        parts.append(f"unchanged on {candidate}")
    if family.accepted:
        parts.append(f"{len(family.accepted)} accepted on this branch (the golden values are the candidate's; "
                     "the baseline differs as below)")
    if family.within_noise:
        parts.append(f"{family.within_noise} moved within numerical noise (informational)")
    if family.bits_changed:
        parts.append(f"{family.bits_changed} with bits changed (informational)")
    return f"{family.name}: {_plural(family.checks, 'check')}, " + ", ".join(parts)
