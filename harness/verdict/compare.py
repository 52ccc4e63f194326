"""Judging: how each check changed from the baseline on every other entry, and the exit status.

Every report's checks are judged against the same golden values (recorded from the baseline),
so a check that passes on the baseline and fails on another entry is a changed contract.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable

from harness.errors import EXIT_CANNOT_JUDGE, EXIT_OK, EXIT_CHANGED
from harness.model.api_diff import ApiDiff
from harness.model.enums import BuiltinMode, CheckKind, Mark, Outcome, Status
from harness.model.report import LIBRARY_ORIGINS, CheckRecord, Report, Tolerance, WarningRecord
from harness.model.report_merge import platforms
from harness.model.verdict import Change, EntryVerdict, ImportFailure, Timing, Verdict
from harness.verdict import against_baseline, api_view, bits, cause, explain, groups, host_drift, import_failure, own
from harness.verdict import report_mode, where
from harness.verdict.classify import classify

def _tolerances(check: CheckRecord) -> list[Tolerance | str]:
    found: list[Tolerance | str] = []
    for comparison in check.comparisons:
        if comparison.tolerance not in found:
            found.append(comparison.tolerance)
    return found


def compare_performance(base: Report, other: Report) -> list[Timing]:
    """Entry/baseline time ratios per measured operation (measured in the same run)."""
    rows = []
    for name, b in sorted(base.performance.items()):
        o = other.performance.get(name)
        if o is None:
            rows.append(Timing(name, None, None, None, b.steady_min_s))
            continue
        # The fastest of many calls: the least disturbed by the other entry sharing the cores.
        rows.append(Timing(name, o.steady_min_s / b.steady_min_s if b.steady_min_s else None,
                           o.compile_s / b.compile_s if b.compile_s else None, o.steady_min_s, b.steady_min_s))
    return rows


def _new_warnings(base: Report, other: Report) -> list[WarningRecord]:
    def key(w: WarningRecord) -> tuple:
        return w.category, w.origin, w.message

    seen = {key(w) for w in base.warnings}
    return [w for w in other.warnings if key(w) not in seen and w.origin in LIBRARY_ORIGINS]


def _replayed(mark: Mark, detail: str, other: CheckRecord | None, replay: Report | None) -> tuple[Mark, str]:
    """A property that failed here only, whose falsifying example the baseline fails too: failing in both."""
    if replay is None or other is None or mark != Mark.VALUE_CHANGED or other.kind != CheckKind.PROPERTY:
        return mark, detail
    again = replay.check(other.id)
    # The same failure, not a replay Hypothesis refused (another version's blob) or a crash.
    if again is None or again.outcome != Outcome.FAILED or again.exception != other.exception:
        return mark, detail
    example = again.falsifying_example or again.message
    return Mark.FAILING_BOTH, f"the baseline fails it too with this entry's failing examples replayed: {example}"


def _pairs(base: Report, other: Report) -> list[tuple[str, CheckRecord | None, CheckRecord | None]]:
    """Each check judged on `other`, with its records on the baseline and there: the baseline's order, then
    the checks only `other` has."""
    base_checks = {c.id: c for c in base.checks}
    other_checks = {c.id: c for c in other.checks}
    if other.selection is not None:  # an attribution run: judge only the checks it ran
        selected = set(other.selection)
        base_checks = {i: c for i, c in base_checks.items() if i in selected}
    return [(i, base_checks.get(i), other_checks.get(i))
            for i in [*base_checks, *(i for i in other_checks if i not in base_checks)]]


def _change(check_id: str, b: CheckRecord | None, o: CheckRecord | None, same_host: bool) -> Change:
    o = host_drift.rejudged(b, o, same_host)  # host drift: judged against this machine's baseline values
    moved = bits.moved(b, o) if b and o else None
    mark, detail = classify(b, o, moved)
    ref = o or b
    told = explain.explain(b, o, mark)
    return Change(check_id, ref.family, ref.kind, mark, detail, o.max_abs_err if o else None,
                  o.max_rel_err if o else None, _tolerances(ref), moved, about=ref.about,
                  input=ref.input, before=told.before, after=told.after, size=told.size, own=bool(ref.own))


def _changes(base: Report, other: Report) -> list[Change]:
    same = host_drift.same_host(base, other)
    return [_change(*pair, same) for pair in _pairs(base, other)]


def _counts(changes: list[Change]) -> dict[Mark, int]:
    return {mark: sum(c.mark == mark for c in changes) for mark in Mark}


def compare_entry(base: Report, other: Report, replay: Report | None = None) -> EntryVerdict:
    """How each check changed on `other`; `replay` is the baseline re-running the candidate's failing examples."""
    changes = _changes(base, other) if other.status.ran_to_end else []
    compared = EntryVerdict(
        name=other.entry.name, versions=other.environment.versions, status=other.status, problem=other.problem,
        changes=changes, new_warnings=_new_warnings(base, other), counts=_counts(changes),
        requested=other.entry.requested, requested_python=other.entry.python,
        resolution_notes=list(other.entry.notes or []),
        timings=compare_performance(base, other), reused=other.reused, reused_parts=other.reused_parts,
        platforms=platforms(other.environment), preinstalled=dict(other.environment.preinstalled or {}),
    )
    return compared if replay is None else replayed(compared, base, other, replay)


def rejudged(compared: EntryVerdict, base: Report, other: Report, ids: frozenset[str]) -> EntryVerdict:
    """`compared` (base against a report) for `other`, that report with the checks `ids` taken from another run
    (harness.verdict.rollback.merged): only those judged again, the rest as compared."""
    if not other.status.ran_to_end:
        return compared
    kept = {c.check_id: c for c in compared.changes}
    same = host_drift.same_host(base, other)
    changes = [kept[i] if i in kept and i not in ids else _change(i, b, o, same) for i, b, o in _pairs(base, other)]
    return dataclasses.replace(compared, changes=changes, counts=_counts(changes))


def replayed(compared: EntryVerdict, base: Report, other: Report, replay: Report) -> EntryVerdict:
    """`compared` (base against `other`, without the replay) with the replay applied: a property that failed on
    `other` only whose falsifying example the baseline fails too is failing in both. The follow-ups compare
    without the replay (they decide it); the verdict then needs only the properties re-marked."""
    changes = []
    for change in compared.changes:
        o = other.check(change.check_id) if change.mark == Mark.VALUE_CHANGED else None  # the only ones replayed
        mark, detail = _replayed(change.mark, change.detail, o, replay)
        if mark != change.mark:
            told = explain.explain(base.check(change.check_id), o, mark)
            change = dataclasses.replace(change, mark=mark, detail=detail, before=told.before, after=told.after,
                                         size=told.size)
        changes.append(change)
    return dataclasses.replace(compared, changes=changes, counts=_counts(changes))


def _against_baseline(compared: EntryVerdict, base: Report, other: Report,
                      ids: frozenset[str]) -> tuple[EntryVerdict, frozenset[str]]:
    """`compared` with the built-in checks `ids` (the baseline fails them against their recording) judged against
    the baseline's values, where `other` ran on the baseline's host (harness.verdict.against_baseline); the ids
    so judged."""
    if not ids or not other.status.ran_to_end or not host_drift.same_host(base, other):
        return compared, frozenset()
    base_checks, other_checks = {c.id: c for c in base.checks}, {c.id: c for c in other.checks}
    changes, judged = [], set()
    for change in compared.changes:
        pair = None
        if change.check_id in ids and change.check_id in other_checks:
            pair = against_baseline.rebased(base_checks[change.check_id], other_checks[change.check_id])
        if pair is not None:
            change = _change(change.check_id, *pair, True)
            judged.add(change.check_id)
        changes.append(change)
    return dataclasses.replace(compared, changes=changes, counts=_counts(changes)), frozenset(judged)


def _incomplete(name: str, status: Status, problem: str | None, subject: str) -> str:
    """A partial run says why when its report knows (harness.stack.entry_side.ending words it to follow the name:
    "candidate was killed by SIGKILL after 212 of 345 checks (often out of memory)"); otherwise its status."""
    if status == Status.PARTIAL and problem:
        return f"{name} {problem}"
    return f"{subject} is {status}"


def _problems(base: Report, verdicts: list[EntryVerdict], baseline_failures: list[CheckRecord],
              not_counted: frozenset[str] = frozenset(), own_failures: list[CheckRecord] = ()) -> list[str]:
    """Short reasons the verdict cannot be given; the details are printed below the headline. A check in
    `not_counted` not judged is said elsewhere: the project's own failing on the baseline too (its
    change, or its golden value not recorded: one problem here), a built-in one whose contracts are
    reported only."""
    problems = []
    if not base.status.ran_to_end:
        problems.append(_incomplete("the baseline", base.status, base.problem, "the baseline report"))
    own_not_judged = own.not_judged_problem(list(own_failures))
    if own_not_judged:
        problems.append(own_not_judged)
    if baseline_failures:
        problems.append(f"the baseline fails {len(baseline_failures)} of its own checks "
                        f"({report_mode.BASELINE_FAILS_WHY})")
    # Only the candidate decides: an attribution entry that could not run makes the attribution
    # partial (harness.verdict.cause says so), never the verdict impossible.
    for v in verdicts[:1]:
        if not v.status.ran_to_end:
            problems.append(_incomplete(v.name, v.status, v.problem, v.name))
        # An own check that fails or errors on the baseline too is said once, as the project's change or
        # as its own problem above, not counted again here.
        not_judged = [c for c in v.changes if c.mark == Mark.NOT_JUDGED and c.check_id not in not_counted]
        if not_judged:
            problems.append(f"{v.name}: {len(not_judged)} checks not judged")
    return problems


def _headline(candidate: EntryVerdict | None, found: ImportFailure | None, why: str | None,
              accepted: list[str] = ()) -> tuple[int, str]:
    if candidate is None or not candidate.contract_changes:
        noise = sum(c.mark == Mark.NOISE for c in candidate.changes) if candidate else 0
        said = [f"{len(accepted)} accepted on this branch ({', '.join(accepted[:3])}"
                f"{' and more' if len(accepted) > 3 else ''})"] if accepted else []
        said += [f"{noise} check{'s' * (noise != 1)} moved within numerical noise"] if noise else []
        return EXIT_OK, ("OK: no contract changed" + (f" on {candidate.name}" if candidate else "")
                         + (f" ({'; '.join(said)})" if said else ""))
    changes = candidate.contract_changes
    if found is not None:
        others = [c for c in changes if not found.folds(c)]
        return EXIT_CHANGED, f"CHANGED: {found.text}" + (f"; and {len(others)} other contracts" if others else "")
    count = groups.count_text(changes)
    mine = sum(c.own for c in changes)
    count += f", {mine} of them in your own contracts" if mine else ""
    return EXIT_CHANGED, f"CHANGED: {count}" + (f", {why}" if why else "")


def _with_own_failures(status: int, headline: str, own_failing: str | None) -> tuple[int, str]:
    """The project's own checks failing on the baseline come first: a changed contract of its own."""
    if own_failing is None:
        return status, headline
    if status == EXIT_CHANGED:
        return EXIT_CHANGED, f"CHANGED: {own_failing}; on the candidate: {headline.removeprefix('CHANGED: ')}"
    return EXIT_CHANGED, f"CHANGED: {own_failing}; otherwise {headline}"


def _with_api(status: int, headline: str, base: Report, api: ApiDiff | None, reported: bool) -> tuple[int, str]:
    """A removed name or parameter that the judged contracts or the project's code call is a change;
    the rest of the API diff is informational."""
    own_keys = {api_view.test_key(c.nodeid) for c in base.checks if c.own}
    removed = api_view.used_removals(api, own_keys if reported else None)
    if not removed or status == EXIT_CANNOT_JUDGE:
        return status, headline
    said = api_view.removal_text(removed)
    return EXIT_CHANGED, f"CHANGED: {said}" if status == EXIT_OK else f"{headline}; {said}"


Comparing = Callable[[Report, Report, Report | None], EntryVerdict]  # compare_entry, or a run's memo of it


def judge(base: Report, others: list[Report], replay: Report | None = None,
          builtin: BuiltinMode = BuiltinMode.JUDGE, api: ApiDiff | None = None,
          compared: Comparing = compare_entry) -> Verdict:
    """The verdict over all entries; the exit status follows the candidate (the second report), and with
    `builtin` REPORT (and contracts of the project's own) the project's own contracts only. `api`: the
    candidate's API diff, shown, and a change where it removes what is used. `compared`: how a pair is
    compared (a run's reports, harness.verdict.run_reports, compare each pair once)."""
    # The replay ran the candidate's examples: it speaks for the candidate only.
    verdicts = [compared(base, o, replay if i == 0 else None) for i, o in enumerate(others)]
    baseline_failures = [c for c in base.checks if c.outcome in (Outcome.FAILED, Outcome.ERROR)]
    # The project's own checks failing on the baseline are its code's change, said as such; the
    # built-in ones mean the golden files or the baseline stack moved: no verdict then, unless the
    # built-in contracts are reported only (their part of the headline says it).
    own_failures, builtin_failures = own.split_failures(base, baseline_failures)
    mode, mode_note = own.applied_mode(base, builtin)
    reported = mode == BuiltinMode.REPORT
    against: frozenset[str] = frozenset()
    if reported and verdicts:  # reported only: judged against the baseline's values where its recording fails
        ids = frozenset(c.id for c in builtin_failures if against_baseline.failing_recordings(c) is not None)
        pairs = [_against_baseline(v, base, o, ids) for v, o in zip(verdicts, others)]
        verdicts, against = [v for v, _ in pairs], pairs[0][1]
        builtin_failures = [c for c in builtin_failures if c.id not in against]
    not_counted = {c.id for c in own_failures}
    if reported:  # the built-in checks not judged are said in their part of the headline
        not_counted |= {c.check_id for v in verdicts[:1] for c in v.changes if not c.own}
    problems = _problems(base, verdicts, [] if reported else builtin_failures, frozenset(not_counted), own_failures)
    problems = [p for p in [where.mismatch(base, others)] if p] + problems
    candidate = verdicts[0] if verdicts else None
    own_families = own.families(base, candidate, own_failures)
    found = import_failure.find(base, others[0], candidate.changes) if candidate else None
    why = cause.cause(base.environment.versions, verdicts) if candidate else None
    if problems:
        status, headline = EXIT_CANNOT_JUDGE, "CANNOT JUDGE: " + "; ".join(problems)
    elif reported and candidate is not None:
        status, headline = report_mode.headline(base, verdicts, found, own_families, builtin_failures, len(against))
    else:
        status, headline = _with_own_failures(*_headline(candidate, found, why,
                                                         [i for f in own_families for i in f.accepted]),
                                              own.headline_part(own_families))
    status, headline = _with_api(status, headline, base, api, reported)
    headline += where.suffix(base)
    changed_bits = [c for c in candidate.changes if c.mark.moved_only] if candidate else []
    if reported:  # the line under the headline speaks of what decides: your contracts (report mode has some)
        changed_bits = [c for c in changed_bits if c.own]
    accepted = {i for f in own_families for i in f.accepted}  # the candidate's golden values: said in their section
    baseline_failures = [c for c in baseline_failures if c.id not in accepted and c.id not in against]
    return Verdict(base, verdicts, baseline_failures, status, headline, bits.summary_line(changed_bits), why, found,
                   own_families=own_families, own_changes=own.changes(base, verdicts, others[0]) if candidate else [],
                   builtin=mode, mode_note=mode_note, api_diff=api, host_line=host_drift.line(base, others))


def changed_check_ids(candidate: EntryVerdict) -> list[str]:
    """Ids of the checks whose mark on the candidate is not 'unchanged' (what attribution re-runs)."""
    return sorted({c.check_id for c in candidate.changed})


def changed_text(candidate: EntryVerdict) -> str:
    """The candidate's changed checks counted as the headline counts them, the bits-only moves and any
    other marks apart: '25 checks changed and 9 moved bits only' (what the attribution re-runs)."""
    changed = candidate.changed
    others = Counter(c.mark for c in changed if not c.mark.changes_contract and c.mark != Mark.BITS_CHANGED)
    counts = [(sum(c.mark.changes_contract for c in changed), "changed"),
              (sum(c.mark == Mark.BITS_CHANGED for c in changed), "moved bits only"),
              *((n, str(mark)) for mark, n in sorted(others.items(), key=lambda item: item[0].rank))]
    said = [(n, words) for n, words in counts if n]
    if not said:
        return "no check changed"
    (n, words), rest = said[0], said[1:]
    parts = [f"{n} check{'s' * (n != 1)} {words}", *(f"{n} {words}" for n, words in rest)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def property_regressions(candidate: EntryVerdict) -> list[str]:
    """Ids of properties that pass on the baseline and fail on the candidate: replayed before judging."""
    return sorted(c.check_id for c in candidate.changes
                  if c.mark == Mark.VALUE_CHANGED and c.kind == CheckKind.PROPERTY)
