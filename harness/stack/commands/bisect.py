"""`nox -s upgrade -- --bisect`: for each changed contract, the release that first changed it.

After attribution, each package group blamed for a contract change (its single-package entry changes
the check too; with one bumped group, that group) is bisected over its releases strictly between the
baseline's and the candidate's (harness.stack.commands.bisect_search): each probed release is an entry of the
plan (reports/bisect-<group>-<release>.json) with the other packages at the baseline's pins, running
only the checks still undecided. A release that does not resolve or cannot import there is tried again
with the candidate's other pins (said in the answer); there a check that another bumped group changes
on its own (its single-package entry says so) is unknown, since its answer would depend on those pins.
When neither works it is unknown: the release is then run beside its neighbour at the newest older jax
with which both import (harness.stack.commands.bisect_bridge), and a check that tells them apart there
first changed in it; else the answer is a range naming it, and says why. The release list comes from the
package index: with --offline no group is bisected, and the bisection says why. The result is
reports/bisect.json (harness.model.bisection), shown in the verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from harness.errors import HarnessError
from harness.model import bisection
from harness.model.bisection import Bisection, Bridge, FirstChanged, Probe
from harness.model.enums import Mark, Outcome
from harness.model.report import Report
from harness.model.verdict import EntryVerdict
from harness.stack.workspace import Workspace
from harness.stack.commands import bisect_bridge, bisect_search
from harness.stack.pins import matrix, plan, resolve
from harness.stack.run.run_directory import ENTRY_SUFFIXES, RunDirectory
from harness.verdict import import_failure

PREFIX = "bisect-"
_OBSERVED = (Outcome.PASSED, Outcome.FAILED)  # a check's outcome when it ran and was judged


def report_names(reports: Path) -> list[str]:
    """The bisection reports a last run left (for keep_previous)."""
    names = {p.name[:-len(s)] for p in reports.glob(f"{PREFIX}*") for s in ENTRY_SUFFIXES if p.name.endswith(s)}
    return sorted(names)


def blame(candidate: EntryVerdict, singles: dict[str, EntryVerdict | None], bumped: list[str]) -> dict[str, list[str]]:
    """group -> the candidate's changed contracts it is blamed for: those its single-package entry changes
    too; with no single-package entries (one group bumped), all of them."""
    changed = sorted({c.check_id for c in candidate.contract_changes})
    if not singles:
        return {bumped[0]: changed} if len(bumped) == 1 and changed else {}
    found = {}
    for group, verdict in singles.items():
        theirs = {c.check_id for c in verdict.contract_changes} if verdict is not None else set()
        if any(c in theirs for c in changed):
            found[group] = [c for c in changed if c in theirs]
    return found


@dataclasses.dataclass
class _Context:
    """One bisection: where (the run's workspace), how to run entries, and what every probe is judged against."""

    ws: Workspace
    directory: RunDirectory  # the run's: its files, and its reports as read and compared once
    args: argparse.Namespace
    seed: int
    run: Callable
    base_report: Report
    base: matrix.Entry
    cand: matrix.Entry
    fetch: Callable[[str], dict]
    others_change: dict[str, set[str] | None] = dataclasses.field(default_factory=dict)  # see depends_on_others
    probes: list[Probe] = dataclasses.field(default_factory=list)
    gaps: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)  # group -> release -> why unjudged

    def depends_on_others(self, group: str, check: str) -> bool:
        """Whether another bumped group changes `check` on its own (or cannot say: its single-package
        entry is missing), so that a probe with the candidate's other pins cannot tell this group's part."""
        return any(changes is None or check in changes
                   for other, changes in self.others_change.items() if other != group)

    def others(self, group: str, pins: dict[str, str]) -> str:
        """'jax 0.11.2': the other bumped groups' packages in `pins` (jaxlib named only apart from jax)."""
        shown = []
        for other in matrix.bumped_groups(self.base.pins, self.cand.pins):
            if other != group:
                lead, *rest = matrix.GROUPS[other]
                shown += [f"{lead} {pins.get(lead)}"] + [f"{p} {pins.get(p)}" for p in rest
                                                         if pins.get(p) != pins.get(lead)]
        return ", ".join(shown) or "the other packages"


def _load(run: RunDirectory, entries: list[matrix.Entry], replay: Path | None):
    """The baseline report, the candidate's verdict and each single-package entry's; None when unusable."""
    try:
        base, cand = (run.reports(e.name) for e in entries[:2])
        replayed = run.load(replay) if replay is not None and replay.exists() else None
    except HarnessError:
        return None
    if not (base.status.ran_to_end and cand.status.ran_to_end):
        return None
    singles = {}
    for entry in entries[2:]:
        try:
            report = run.reports(entry.name)
        except HarnessError:
            report = None
        usable = report is not None and report.status.ran_to_end
        singles[entry.name.removesuffix("-only")] = run.loaded.compared(base, report) if usable else None
    return base, run.loaded.compared(base, cand, replayed), singles


def _add_to_plan(run: RunDirectory, entry: matrix.Entry) -> None:
    """The child session reads its entry from the plan file: add (or replace) this one."""
    path = run.plan
    found = plan.read(path) if path.exists() else {}
    found[entry.name] = entry
    plan.write(list(found.values()), path)


COULD_NOT_RUN = "could not run"


def _judge(ctx: _Context, name: str, checks: list[str]) -> tuple[Report | None, dict[str, bool | None], str]:
    """The probe's report and per check: changed (a contract-changing mark) or not, None when not judged;
    no report when it did not install or import, or ran none of its checks, and which. A check the probe
    did not run is never "changed" (its mark against the baseline would be "check missing"): not judged."""
    try:
        report = ctx.directory.reports(name)
    except HarnessError:
        return None, {}, "not installable"
    if not report.status.ran_to_end:
        return None, {}, "not installable"
    verdict = ctx.directory.loaded.compared(ctx.base_report, report)
    if import_failure.find(ctx.base_report, report, verdict.changes) is not None:
        return None, {}, "not importable"
    observed = {c for c in checks if (r := report.check(c)) is not None and r.outcome in _OBSERVED}
    if not observed:
        return None, {}, COULD_NOT_RUN
    marks = {c.check_id: c.mark for c in verdict.changes}
    judged = {c: marks.get(c, Mark.NOT_JUDGED) for c in observed}
    return report, {c: None if judged.get(c, Mark.NOT_JUDGED) == Mark.NOT_JUDGED else judged[c].changes_contract
                    for c in checks}, "judged"


def _run(ctx: _Context, group: str, name: str, named: dict[str, str], defaults: dict[str, str],
         checks: list[str]) -> tuple[bisect_bridge.Ran, dict[str, bool | None]]:
    """Resolve the release with the other packages at `defaults`, run the checks there, judge them
    against the baseline (see _judge); the probe is recorded."""
    started = time.perf_counter()
    release = named[matrix.GROUPS[group][0]]
    try:
        found = resolve.resolve(ctx.ws, named, defaults, ctx.base.python, ctx.args.pre, held=ctx.base.locked_with)
    except HarnessError:
        ctx.probes.append(Probe(name, group, release, {}, checks, "not installable", [], None, 0.0))
        return bisect_bridge.Ran(None, "not installable", {}), {}
    lock = ctx.directory.locks / f"{name}.txt"
    resolve.write_lock(found, lock)
    entry = matrix.Entry(name, found.pins, f"{group} {release}, bisecting", ctx.base.python, locked=False,
                         lock_file=str(lock), notes=tuple(found.notes), resolved_at=found.resolved_at,
                         locked_with=ctx.base.locked_with)
    _add_to_plan(ctx.directory, entry)
    selection = ctx.directory.bisect_selection
    selection.write_text("\n".join(checks) + "\n")
    ctx.run(ctx.ws, [entry], ctx.args, ctx.seed, only=selection)
    report, changed, outcome = _judge(ctx, name, checks)
    ctx.probes.append(Probe(name, group, release, found.pins, checks, outcome, [c for c, v in changed.items() if v],
                            "; ".join(found.notes) or None, round(time.perf_counter() - started, 1)))
    return bisect_bridge.Ran(report, outcome, dict(found.pins)), changed


def _probe(ctx: _Context, group: str, named: dict[str, str], checks: list[str]) -> bisect_search.Seen:
    """The release with the baseline's other pins; when it does not resolve or import there, with the
    candidate's (when they differ)."""
    release = named[matrix.GROUPS[group][0]]
    failed: list[tuple[str, str]] = []  # (outcome, with which pins)
    tries = [(ctx.base.pins, f"{PREFIX}{group}-{release}")]
    if ctx.others(group, ctx.cand.pins) != ctx.others(group, ctx.base.pins):  # else nothing else to try
        tries.append((ctx.cand.pins, f"{PREFIX}{group}-{release}-candidate-pins"))
    for defaults, name in tries:
        ran, changed = _run(ctx, group, name, named, defaults, checks)
        outcome, with_pins = ran.outcome, ctx.others(group, defaults)
        if ran.report is not None:
            note = f"{release} probed with {with_pins}: {bisect_search.failures(failed)}" if failed else ""
            confounded = [c for c in changed if failed and changed[c] is not None and ctx.depends_on_others(group, c)]
            changed = {c: None if c in confounded else v for c, v in changed.items()}
            why = (f"{release} not judged: {bisect_search.failures(failed)}, and {with_pins} changes the check on "
                   "its own" if confounded else "")
            print(f"upgrade: bisect {group} {release}" + (f" ({note})" if note else "") + ": "
                  f"{sum(bool(v) for v in changed.values())} of {len(checks)} checks changed"
                  + (f", {len(confounded)} unknown: {with_pins} changes them on its own" if confounded else ""))
            return bisect_search.Seen(changed, note, why)
        failed.append((outcome, with_pins))
        print(f"upgrade: bisect {group} {release}: {outcome} with {with_pins}")
    ctx.gaps.setdefault(group, {})[release] = bisect_search.failures(failed)
    return bisect_search.Seen({}, f"{release} {bisect_search.failures(failed)}")


def _bridge(ctx: _Context, group: str, versions: list[str], spans: dict[str, bisect_search.Span],
            named_of: Callable[[str], dict[str, str]]) -> dict[str, Bridge]:
    """Checks whose first possible release imports with neither side's jax: that release and its neighbour
    at the newest older jax with which both import (bisect_bridge), all such checks of a release at once."""
    gaps, waiting = ctx.gaps.get(group, {}), {}
    for check, span in spans.items():
        if span.first < span.last and versions[span.first] in gaps:
            waiting.setdefault(span.first, []).append(check)
    if not waiting or group == "jax" or "jax" not in ctx.base.pins:
        return {}
    below = bisect_bridge.older_side(ctx.base.pins["jax"], ctx.cand.pins["jax"])
    jaxes = bisect_search.older_releases("jax", below, bisect_bridge.MAX_JAX, ctx.args.pre, ctx.fetch)
    jaxlibs = bisect_search.all_releases("jaxlib", ctx.fetch) if "jaxlib" in ctx.base.pins else set()
    found = {}
    for index, batch in sorted(waiting.items()):
        release, against, later = versions[index], versions[index - 1], versions[index + 1]
        print(f"upgrade: bisect {group} {release} imports with neither side's jax: judging it against {against} "
              f"at the newest older jax with which both import ({', '.join(jaxes) or 'none listed'})")
        gap = bisect_bridge.Gap(group, tuple(matrix.GROUPS[group]), release, named_of(release), against,
                                named_of(against), later, named_of(later))
        bridge, told, told_later = bisect_bridge.bridge(
            gap, batch, jaxes, jaxlibs, ctx.base.pins, PREFIX,
            lambda name, named, defaults: _run(ctx, group, name, named, defaults, batch)[0])
        for check in batch:
            seen, seen_later = told.get(check), told_later.get(check)
            changed_in = release if seen else later if seen_later else None
            found[check] = dataclasses.replace(bridge, visible=None if seen is None else bool(seen or seen_later),
                                               changed_in=changed_in)
        print(f"upgrade: bisect {group} {release}: " + (
            f"at jax {bridge.jax}, {sum(found[c].changed_in == release for c in batch)} of {len(batch)} checks "
            f"first differ in {release}, {sum(found[c].changed_in == later for c in batch)} in {later}"
            if bridge.jax else f"no jax tried imports both ({'; '.join(bridge.tried) or 'none listed'})"))
    return found


def _bisect_group(ctx: _Context, group: str, checks: list[str]) -> tuple[list[str], list[FirstChanged]]:
    """One group's releases between baseline and candidate, searched for all its checks at once."""
    lead, *followers = matrix.GROUPS[group]
    old, new = ctx.base.pins[lead], ctx.cand.pins[lead]
    between = bisect_search.releases(lead, old, new, ctx.args.pre, ctx.fetch)
    following = {p: bisect_search.all_releases(p, ctx.fetch) for p in followers if p in ctx.base.pins}
    print(f"upgrade: bisecting {lead} {old} → {new} for {len(checks)} changed checks over the "
          f"{len(between)} release{'s' * (len(between) != 1)} between ({', '.join(between) or 'none'})")
    versions = [old, *between, new]

    def named_of(release: str) -> dict[str, str]:  # jaxlib follows jax when it has that release
        return {lead: release, **{p: release for p, found in following.items() if release in found}}

    spans = bisect_search.search(len(between), checks, lambda i, batch: _probe(ctx, group, named_of(versions[i]),
                                                                               batch))
    bridged = _bridge(ctx, group, versions, spans, named_of)
    return between, [bisect_search.answer(c, group, lead, versions, spans[c], bridged.get(c))
                     for c in checks]


def _offline_index(package: str) -> dict:
    raise HarnessError(f"--offline: the releases of {package} between baseline and candidate come from the package "
                       "index, which an offline run never asks; run `upgrade --bisect` with network access")


def run(ws: Workspace, args, entries: list[matrix.Entry], seed: int, run_entries: Callable, replay: Path | None = None,
        fetch: Callable[[str], dict] = bisect_search.fetch_index) -> Path | None:
    """Bisect every blamed group; reports/bisect.json, or None when no contract changed (or none can be)."""
    started = time.perf_counter()
    run = RunDirectory.of(ws)
    loaded = _load(run, entries, replay)
    if loaded is None:
        return None
    base_report, candidate, singles = loaded
    if not candidate.contract_changes:
        print("upgrade: no contract changed: nothing to bisect")
        return None
    blamed = blame(candidate, singles, matrix.bumped_groups(entries[0].pins, entries[1].pins))
    if not blamed:
        print("upgrade: nothing to bisect: no contract change is caused by one package group alone")
        return None
    if getattr(args, "offline", False):
        fetch = _offline_index
    others_change = {group: None if verdict is None else {c.check_id for c in verdict.contract_changes}
                     for group, verdict in singles.items()}
    ctx = _Context(ws, run, args, seed, run_entries, base_report, entries[0], entries[1], fetch, others_change)
    releases, results, notes = {}, [], []
    for group, checks in blamed.items():
        try:
            releases[group], found = _bisect_group(ctx, group, checks)
        except HarnessError as exc:
            notes.append(f"{group} not bisected: {exc}")
            continue
        results += found
    unblamed = {c.check_id for c in candidate.contract_changes} - {c for ids in blamed.values() for c in ids}
    if unblamed:
        notes.append(f"{len(unblamed)} changed checks no single package group changes alone: not bisected")
    seconds = round(time.perf_counter() - started, 1)
    path = run.bisection
    bisection.write(path, Bisection(dict(entries[0].pins), dict(entries[1].pins), releases, results, ctx.probes,
                                    seconds, notes))
    for note in notes:
        print(f"upgrade: bisect: {note}")
    print(f"upgrade: bisection done in {seconds:.1f}s ({len(ctx.probes)} probes): {path}")
    return path
