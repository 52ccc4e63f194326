"""What the text, Markdown and HTML verdicts show, computed once: rows, cells and orderings.

Each renderer only lays these out in its own format.
"""

from __future__ import annotations

import dataclasses

from harness.model.enums import BuiltinMode, Mark, Outcome, ReportPart, Status
from harness.model.report import (EXACT, STACK_VERSION_KEYS, CheckRecord, JaxPlatform, ReusedFrom, Summary, Tolerance)
from harness.model.report_merge import platforms
from harness.model.verdict import Change, EntryVerdict, KeyMove, Timing, Verdict
from harness.verdict import groups, own

SHOW_BASELINE_FAILURES = 10
DETAIL = 300  # characters of a failure message shown where there is no before → after


@dataclasses.dataclass(frozen=True)
class EntryRow:
    name: str
    versions: str
    status: str
    result: str


def versions_text(versions: dict[str, str | None], preinstalled=()) -> str:
    """'python 3.12.1 jax 0.11.2 ...'; a package the entry did not install (flax, for a project that does not
    use it) is left out; one the host preinstalled outside the environment is marked so ('jax 0.10.2
    (preinstalled)'): the judged pins take it as given."""
    return " ".join(f"{k} {versions[k]}" + (" (preinstalled)" if k in preinstalled else "")
                    for k in STACK_VERSION_KEYS if versions.get(k))


def magnitude(change: Change) -> str:
    """'max abs / max rel' error, or '-' when the check measured none."""
    if change.max_abs_err is None:
        return "-"
    rel = f" / {change.max_rel_err:.2g}" if change.max_rel_err is not None else ""
    return f"{change.max_abs_err:.2g}{rel}"


def tolerance_text(tolerances: list[Tolerance | str]) -> str:
    cells = ["exact" if t == EXACT else f"{t.ulps:g} ulp" + (f" of {t.ulp_dtype}" if t.ulp_dtype else "")
             for t in tolerances]
    return ", ".join(dict.fromkeys(cells)) or "-"  # each distinct cell once, in order


def counts_text(summary: Summary) -> str:
    parts = [f"{getattr(summary, o.value)} {o.value}" for o in Outcome if getattr(summary, o.value)]
    return f"{summary.total} checks: " + (", ".join(parts) or "none run")


def marks_text(entry: EntryVerdict) -> str:
    if not entry.status.ran_to_end:
        return "not judged (see below)"
    return ", ".join(f"{n} {m}" for m, n in entry.counts.items() if n and m != Mark.UNCHANGED) or "no change"


def entry_rows(verdict: Verdict) -> list[EntryRow]:
    """The baseline, then one row per entry: versions, status and what changed."""
    base = verdict.baseline
    rows = [EntryRow("baseline", versions_text(base.environment.versions, base.environment.preinstalled or {})
                     + platform_text(platforms(base.environment)),
                     status_text("baseline", base.status, base.reused, reused_parts=base.reused_parts),
                     counts_text(base.summary))]
    for e in verdict.entries:
        versions = e.versions if e.status != Status.UNRESOLVABLE else dict(e.requested, python=e.requested_python)
        rows.append(EntryRow(e.name, versions_text(versions, e.preinstalled) + platform_text(e.platforms),
                             status_text(e.name, e.status, e.reused, base.run_id, e.reused_parts), marks_text(e)))
    return rows


def missing_lines(verdict: Verdict) -> list[str]:
    """Each check an attribution entry did not run, and why: its row counts them ("1 check missing"), and the
    changes listed are the candidate's."""
    return [f"{e.name}: {c.check_id} did not run: {c.detail}" for e in verdict.entries[1:] for c in e.changes
            if c.mark == Mark.MISSING]


def platform_text(found: dict[str, JaxPlatform]) -> str:
    """" on cpu (1 device; data_parallel: 4 cpu devices)": where each process of the entry ran."""
    def one(p: JaxPlatform) -> str:
        if p.backend is None:
            return "no devices"
        count = p.device_count or 0
        return f"{count} {'/'.join(p.device_kinds or [p.backend])} device{'s' if count != 1 else ''}"

    main = found.get("main")
    if main is None or main.backend is None:
        return ""
    families = "".join(f"; {name}: {one(p)}" for name, p in found.items() if name != "main")
    return f" on {main.backend} ({one(main)}{families})"


def status_text(name: str, status: Status, reused: ReusedFrom | None, run_id: str | None = None,
                reused_parts: dict[str, ReusedFrom] | None = None) -> str:
    """`complete`, or `complete, reused from 2026-12-02 00:36 UTC` for a report an earlier run computed, or
    `complete, baseline's report (same stack)` for one another entry of this run (`run_id`) computed, or
    `complete, the built-in contracts reused from 2026-12-02 00:36 UTC` for a part of one."""
    if reused is None:
        return ", ".join([status, *(f"{ReportPart(p).label} reused from {o.when}"
                                    for p, o in (reused_parts or {}).items())])
    if run_id is not None and reused.run_id == run_id:
        return f"{status}, {reused.entry}'s report (same stack)"
    return f"{status}, reused from {reused.when}" + (f" (entry {reused.entry})" if reused.entry != name else "")


def changed(verdict: Verdict, entry: EntryVerdict) -> list[Change]:
    """An entry's changed checks, less the rows an import failure of the candidate stands for."""
    found = verdict.import_failure if entry is verdict.entries[0] else None
    return [c for c in entry.changed if found is None or not found.folds(c)]


def _builtin_only(verdict: Verdict, changes: list[Change]) -> list[Change]:
    """The project's own checks are shown in their own section (own_rows), not among the built-in ones."""
    return [c for c in changes if not c.own]


def contract_groups(verdict: Verdict) -> list[groups.ChangeGroup]:
    """The candidate's changed built-in contracts, grouped and ranked by danger; bits-changed rows apart."""
    if not verdict.entries:
        return []
    found = [c for c in changed(verdict, verdict.entries[0]) if not c.mark.moved_only]
    return groups.group(_builtin_only(verdict, found))


def bits_groups(verdict: Verdict) -> list[groups.ChangeGroup]:
    if not verdict.entries:
        return []
    return groups.group(_builtin_only(verdict, [c for c in verdict.entries[0].changes if c.mark.moved_only]))


def your_code(verdict: Verdict, changes: list[Change]) -> str:
    """'your code: trainer/optim.py:8 (optax.MultiSteps) +1 more': where the team's code calls a callable whose
    built-in tests hold these changes (the first call site, the others counted); '' where it calls none."""
    calls = [t for t in verdict.team_calls if any(t.covers(c.check_id) for c in changes if not c.own)]
    if not calls:
        return ""
    return f"your code: {calls[0].where} ({calls[0].callable})" + (f" +{len(calls) - 1} more" if len(calls) > 1 else "")


def changed_title(verdict: Verdict, name: str) -> str:
    """The title of the built-in contracts' section: just 'Changed on ...' when there are no others. Rows that fail on
    the baseline too did not change on `name`: a section of only those says so, one with both names both."""
    failing_both = [g.mark == Mark.FAILING_BOTH for g in contract_groups(verdict)]
    what = (f"failing on the baseline and on {name}" if failing_both and all(failing_both) else
            f"changed on {name} or failing on the baseline too" if any(failing_both) else f"changed on {name}")
    if not verdict.own_families:
        return f"{what[0].upper()}{what[1:]}, most dangerous first"
    reported = " (reported only: they do not decide the exit status)" if verdict.builtin == BuiltinMode.REPORT else ""
    return f"Built-in contracts {what}{reported}, most dangerous first"


def bits_title(verdict: Verdict, name: str | None = None) -> str:
    on = f" on {name}" if name else ""
    return ("Built-in contracts: bits" if verdict.own_families else "Bits") + f" changed{on} (informational)"


@dataclasses.dataclass(frozen=True)
class OwnRow:
    """One moved check of the project's own contracts, as its section shows it."""

    mark: Mark
    check_id: str
    what: str  # before → after; for a bits-only move, what moved
    size: str
    cause: str  # the single-package bump that moves it
    first_changed: str  # the release that first changed it (`--bisect`), or ""
    keys: list[KeyMove] = dataclasses.field(default_factory=list)  # every value that differs, whole

    @property
    def informational(self) -> bool:
        """Accepted, or a move within noise or tolerance: shown, never deciding."""
        return self.mark.informational


def own_title(verdict: Verdict) -> str:
    if verdict.builtin == BuiltinMode.REPORT:
        return "Your contracts (only these decide the exit status; the built-in contracts are reported only)"
    return "Your contracts"


def own_rows(verdict: Verdict) -> list[OwnRow]:
    """The candidate's moved own checks, most dangerous first, bits-only moves last."""
    rows = []
    for found in verdict.own_changes:
        c = found.change
        what = f"{c.before} → {c.after}" if c.before or c.after else c.detail
        what = what if len(what) <= DETAIL else what[:DETAIL - 1] + "…"
        rows.append(OwnRow(c.mark, c.check_id, what, c.size, found.cause,
                           verdict.first_changed.get(c.check_id, ""), found.keys))
    return rows


def baseline_failures_title(verdict: Verdict) -> str:
    """The heading of the baseline's own failures: under a project's own contracts, whose they are (the
    project's own are summed up in its section too; here is each one's whole message)."""
    if not verdict.own_families:
        return "Baseline fails its own checks"
    mine = [bool(c.own) for c in verdict.baseline_failures]
    whose = "Your contracts" if all(mine) else "Built-in contracts" if not any(mine) else "Your contracts and built-in ones"
    return f"{whose} failing on the baseline itself"


def shown_baseline_failures(verdict: Verdict) -> tuple[list[CheckRecord], int]:
    """The first baseline failures to show, and how many more there are."""
    failures = verdict.baseline_failures
    return failures[:SHOW_BASELINE_FAILURES], max(0, len(failures) - SHOW_BASELINE_FAILURES)


def attribution(verdict: Verdict) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Entry names, and per check that changed anywhere its mark on each entry ('-': not run there)."""
    names = [e.name for e in verdict.entries]
    marks = {e.name: {c.check_id: c.mark for c in e.changes} for e in verdict.entries}
    ids = sorted({c.check_id for e in verdict.entries for c in e.changed})
    return names, [(i, [str(marks[n].get(i, "-")) for n in names]) for i in ids]


def ratio_cell(timing: Timing | None) -> str:
    if timing is None or timing.steady_ratio is None:
        return "not measured"
    flag = " SLOWER" if timing.slower else ""
    compile_part = f" [{timing.compile_ratio:.2f}x]" if timing.compile_ratio is not None else ""
    return f"{timing.steady_ratio:.2f}x{compile_part}{flag}"


def performance_rows(verdict: Verdict) -> list[tuple[str, list[str]]]:
    """Per measured operation, one ratio cell per entry."""
    names = sorted({t.name for e in verdict.entries for t in e.timings})
    return [(name, [ratio_cell(next((t for t in e.timings if t.name == name), None)) for e in verdict.entries])
            for name in names]


def unchanged(verdict: Verdict) -> list[Change]:
    """The candidate's unchanged checks (collapsed in the Markdown)."""
    return [c for c in verdict.entries[0].changes if c.mark == Mark.UNCHANGED] if verdict.entries else []


HELD = (Mark.UNCHANGED, Mark.NOISE, Mark.BITS_CHANGED)  # the contract holds on both: within noise or tolerance


def own_held(verdict: Verdict) -> list[str]:
    """The ids of the project's own checks that held on the candidate (moved within noise or tolerance included:
    their table row says how), in the order the candidate ran them."""
    return [c.check_id for c in verdict.entries[0].changes if c.own and c.mark in HELD] if verdict.entries else []


def own_lines(verdict: Verdict) -> list[str]:
    """One line per family of the project's own contracts: what became of it."""
    name = verdict.entries[0].name if verdict.entries else "the candidate"
    return [own.summary(f, name) for f in verdict.own_families]


@dataclasses.dataclass(frozen=True)
class SameStack:
    """An entry whose report is another entry's: both install one stack (equal report keys), which ran once."""

    entry: str
    same_as: str

    @property
    def line(self) -> str:
        return f"{self.entry} installs the same stack as {self.same_as}: ran once"


def same_stacks(verdict: Verdict) -> list[SameStack]:
    """The entries served from another entry's report of this run, or reused from the very report the
    baseline was reused from (harness.stack.run.report_cache)."""
    base = verdict.baseline
    found = []
    for e in verdict.entries:
        if e.reused is None:
            continue
        in_run = base.run_id is not None and e.reused.run_id == base.run_id
        as_base = base.reused is not None and base.reused.key == e.reused.key
        if in_run or as_base:
            found.append(SameStack(e.name, e.reused.entry if in_run else "baseline"))
    return found


@dataclasses.dataclass(frozen=True)
class ReusedReport:
    """A report this run did not compute: taken from an earlier run (a CI job's restored cache, or this
    machine's reports/.cache/) because nothing that determines it changed. Which run it came from is what a
    reviewer of a pull request needs to find that run's logs."""

    entry: str
    origin: ReusedFrom
    part: ReportPart = ReportPart.ALL  # a part of its report, the entry having run the other

    @property
    def line(self) -> str:
        computed = f", computed as entry {self.origin.entry}" if self.origin.entry != self.entry else ""
        what = "not run, its report" if self.part == ReportPart.ALL else f"{self.part.label} not run, their report"
        return (f"{self.entry}: {what} reused from run {self.origin.run_id or 'unknown'} "
                f"(finished {self.origin.when}{computed}; nothing that determines it changed)")


def reused_reports(verdict: Verdict) -> list[ReusedReport]:
    """The reports taken from earlier runs, baseline first; not those of this run's same-stack entries
    (same_stacks says those)."""
    base = verdict.baseline
    found = [ReusedReport("baseline", base.reused)] if base.reused is not None else []
    found += _parts_reused("baseline", base.reused_parts)
    for e in verdict.entries:
        if e.reused is not None and (base.run_id is None or e.reused.run_id != base.run_id):
            if not (base.reused is not None and base.reused.key == e.reused.key):
                found.append(ReusedReport(e.name, e.reused))
        found += _parts_reused(e.name, e.reused_parts)
    return found


def _parts_reused(entry: str, parts: dict[str, ReusedFrom] | None) -> list[ReusedReport]:
    return [ReusedReport(entry, origin, ReportPart(part)) for part, origin in (parts or {}).items()]


def resolution_notes(verdict: Verdict) -> list[str]:
    """'candidate: flax 0.12.12 → 0.12.6: ...': pins the harness chose, and why."""
    return [f"{e.name}: {note}" for e in verdict.entries for note in e.resolution_notes]
