"""`nox -s upgrade -- --bisect`: for each changed contract, the release that first changed it.

After attribution, each package group blamed for a contract change (its single-package entry changes
the check too; with one bumped group, that group) is bisected over its releases strictly between the
baseline's and the candidate's (harness.stack.commands.bisect): each probed release is an entry of the
plan (reports/bisect-<group>-<release>.json) with the other packages at the baseline's pins, running
only the checks still undecided. A release that does not resolve or cannot import there is tried again
with the candidate's other pins (said in the answer); there a check that another bumped group changes
on its own (its single-package entry says so) is unknown, since its answer would depend on those pins.
When neither works it is unknown: the release is then run beside its neighbour at the newest older jax
with which both import (harness.stack.commands.bisect), and a check that tells them apart there
first changed in it; else the answer is a range naming it, and says why. The release list comes from the
package index: with --offline no group is bisected, and the bisection says why. The result is
reports/bisect.json (harness.model.bisection), shown in the verdict.

Bisection across an import gap. A release that imports with neither side's jax leaves its checks a
range; here it is run beside its neighbour (the previous release, or the baseline's) at the newest older
jax with which both import (that jax's jaxlib, and a flax the resolver finds for it). The pair differs
only in the bisected package, so a check that tells them apart there first changed in that release. A
check they do not tell apart is then looked for between that release and the next one, at the same jax.

Only the probe runner touches the stack: this module decides which jax to try, when to stop, and what a
pair of reports says, so it is tested with a fake runner.

The two halves of bisection that need no suite: the releases to probe (from the package index),
and the joint binary search over them. The search only sees an oracle (release index, checks) ->
changed / unchanged / unknown, so it is tested without running anything.

Releases are numbered 0 (the baseline's) .. n + 1 (the candidate's): every check is unchanged at 0
and changed at n + 1. A check's answer is the first release it changed in, assuming it changed once;
when the releases between its last unchanged and first changed release could not be judged (not
installable, not importable) the answer is that range, unless a bridge (below) judged the
first of them against its neighbour at an older jax. Then the text of each answer.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import time
import urllib.request
from collections.abc import Callable
from packaging.version import InvalidVersion, Version
from pathlib import Path

from harness.errors import HarnessError
from harness.model import bisection
from harness.model.bisection import Bisection, Bridge, FirstChanged, Probe
from harness.model.enums import Mark, Outcome
from harness.model.report import CheckRecord, Report
from harness.model.verdict import EntryVerdict
from harness.stack.pins import matrix, plan, resolve
from harness.stack.run.run_directory import ENTRY_SUFFIXES, RunDirectory
from harness.stack.workspace import Workspace
from harness.verdict import bits, import_failure


INDEX_URL = "https://pypi.org/pypi/{package}/json"


def fetch_index(package: str) -> dict:
    """The package's PyPI JSON document (release -> files)."""
    try:
        with urllib.request.urlopen(INDEX_URL.format(package=package), timeout=30) as answer:
            return json.load(answer)
    except (OSError, ValueError) as exc:
        raise HarnessError(f"cannot list the releases of {package} from PyPI ({exc}); bisect when online.") from None


def _published(files: list[dict]) -> bool:
    """A release with at least one file that is not yanked (an empty or fully yanked one cannot be installed)."""
    return any(not f.get("yanked", False) for f in files)


def _installable(package: str, prerelease: bool, fetch: Callable[[str], dict]) -> list[tuple[Version, str]]:
    """The package's published releases with a valid version (pre-releases only when asked), as listed."""
    found = []
    for text, files in fetch(package).get("releases", {}).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if (prerelease or not version.is_prerelease) and _published(files):
            found.append((version, text))
    return found


def releases(package: str, baseline: str, candidate: str, prerelease: bool = False,
             fetch: Callable[[str], dict] = fetch_index) -> list[str]:
    """The releases strictly between the baseline's and the candidate's, oldest first (newest first
    for a downgrade); pre-releases only when asked."""
    low, high = sorted((Version(baseline), Version(candidate)))
    found = [(v, text) for v, text in _installable(package, prerelease, fetch) if low < v < high]
    return [text for _, text in sorted(found, reverse=Version(candidate) < Version(baseline))]


def older_releases(package: str, than: str, count: int, prerelease: bool = False,
                   fetch: Callable[[str], dict] = fetch_index) -> list[str]:
    """The `count` newest published releases older than `than`, newest first (pre-releases only when asked)."""
    found = [(v, text) for v, text in _installable(package, prerelease, fetch) if v < Version(than)]
    return [text for _, text in sorted(found, reverse=True)[:count]]


def all_releases(package: str, fetch: Callable[[str], dict] = fetch_index) -> set[str]:
    return {text for text, files in fetch(package).get("releases", {}).items() if _published(files)}


@dataclasses.dataclass(frozen=True)
class Seen:
    """What one probe of a release said: per check True (changed), False (unchanged) or None (unknown),
    and a note (why it is unknown, or how the release was installed); `why_unknown`, when given, is
    what the checks it left unknown are told instead (the others judged there get the note)."""

    changed: dict[str, bool | None]
    note: str = ""
    why_unknown: str = ""


@dataclasses.dataclass
class _State:
    lo: int  # the last release known unchanged
    hi: int  # the first release known changed
    unknown: dict[int, str] = dataclasses.field(default_factory=dict)  # release -> why it is not known
    notes: dict[int, str] = dataclasses.field(default_factory=dict)

    def next_probe(self) -> int | None:
        """The release nearest the middle of the interval not yet known to be unknown."""
        left = [i for i in range(self.lo + 1, self.hi) if i not in self.unknown]
        middle = (self.lo + self.hi) / 2
        return min(left, key=lambda i: (abs(i - middle), i)) if left else None


@dataclasses.dataclass(frozen=True)
class Span:
    """A check's first changed release: exactly `last` when first == last, else somewhere in first..last."""

    first: int
    last: int
    unknown: dict[int, str]  # why each release before `last` in the span is not known
    notes: dict[int, str]  # how the releases that decided it were probed (when it was not plainly)


def search(count: int, checks: list[str], probe: Callable[[int, list[str]], Seen]) -> dict[str, Span]:
    """Binary search over releases 1..count for all checks at once: each round probes the release most
    checks want next, with every check whose interval holds it; one run, however many checks."""
    states = {check: _State(0, count + 1) for check in checks}
    while True:
        wanted = [i for i in (s.next_probe() for s in states.values()) if i is not None]
        if not wanted:
            break
        index = collections.Counter(wanted).most_common(1)[0][0]
        batch = [c for c, s in states.items() if s.lo < index < s.hi and index not in s.unknown]
        seen = probe(index, batch)
        for check in batch:
            state, changed = states[check], seen.changed.get(check)
            if changed is None:
                state.unknown[index] = seen.why_unknown or seen.note or "not judged"
                continue
            state.hi, state.lo = (index, state.lo) if changed else (state.hi, index)
            if seen.note:
                state.notes[index] = seen.note
    return {check: Span(s.lo + 1, s.hi, {i: why for i, why in s.unknown.items() if s.lo < i < s.hi},
                        {i: n for i, n in s.notes.items() if i in (s.lo, s.hi)}) for check, s in states.items()}


def failures(failed: list[tuple[str, str]]) -> str:
    """'not importable with jax 0.11.2 nor with jax 0.12.0.1'."""
    if len({outcome for outcome, _ in failed}) == 1:
        return f"{failed[0][0]} with " + " nor with ".join(pins for _, pins in failed)
    return ", ".join(f"{outcome} with {pins}" for outcome, pins in failed)


def answer(check: str, group: str, package: str, versions: list[str], span: Span,
           bridge: Bridge | None = None) -> FirstChanged:
    """The check's first changed release, or the range, and what was said of the releases that decided it."""
    first, last = versions[span.first], versions[span.last]
    said = [*span.unknown.values(), *(span.notes[i] for i in sorted(span.notes))]
    if bridge is not None and bridge.changed_in is not None:  # judged beside its neighbour at an older jax
        first = last = bridge.changed_in
        said = [bridge_said(bridge, package), span.unknown.get(span.first, ""), span.notes.get(span.first - 1, "")]
    elif bridge is not None:
        said.append(bridge_said(bridge, package))
    said = [s for s in said if s]
    text = f"{package} {first}" if first == last else f"{package} {first}–{last}"
    text += f" ({'; '.join(dict.fromkeys(said))})" if said else ""
    return FirstChanged(check, group, package, first, last, text, bridge)


def bridge_said(bridge: Bridge, package: str) -> str:
    """What the answer says of the bridge, for the check it was recorded for (its `visible`, `changed_in`)."""
    x, w, at = bridge.release, bridge.against, f"at jax {bridge.jax}, where {bridge.release} imports"
    if bridge.jax is None:
        tried = f"tried {'; '.join(bridge.tried)}" if bridge.tried else "the package index lists none"
        return f"no older jax imports both {package} {x} and {w} ({tried})"
    if bridge.changed_in == x:
        return f"judged against {package} {w} {at}"
    if bridge.changed_in is not None:
        return f"judged against {package} {x} {at}; there {x} does not differ from {w}"
    if bridge.visible is None:
        return f"{at}, the check was not judged on both {w} and {x}: unknown"
    beyond = f" nor {x} and {bridge.later}" if bridge.later else ""
    return (f"{at}, the check does not tell {package} {w} and {x} apart{beyond}: the change is not visible there, "
            "unknown")


MAX_JAX = 8  # older jax releases tried at most, newest first: each one that resolves costs an environment


@dataclasses.dataclass(frozen=True)
class Ran:
    """One probe: its report (None when it did not install or import), what happened, its pins."""

    report: Report | None
    outcome: str  # "judged", "not installable", "not importable"
    pins: dict[str, str]


# (entry name, named pins, the other packages' pins) -> the probe's result
Runner = Callable[[str, dict[str, str], dict[str, str]], Ran]


@dataclasses.dataclass(frozen=True)
class Gap:
    """A release to bridge: its pins and its neighbour's (the bisected group's packages only)."""

    group: str
    packages: tuple[str, ...]  # the group's packages: a neighbour may differ from the release only in these
    release: str
    named: dict[str, str]
    against: str
    against_named: dict[str, str]
    later: str | None = None  # the next release, run beside it for the checks the pair does not tell apart
    later_named: dict[str, str] = dataclasses.field(default_factory=dict)


def differs(before: CheckRecord | None, after: CheckRecord | None) -> bool | None:
    """Whether a check tells two releases apart at the same pins: it passes on one and fails on the other,
    or fails on both with other observed values or another exception; None when one did not judge it."""
    judged = (Outcome.PASSED, Outcome.FAILED)
    if before is None or after is None or before.outcome not in judged or after.outcome not in judged:
        return None
    if before.outcome != after.outcome:
        return True
    if before.outcome == Outcome.PASSED:
        return False

    def failing(check: CheckRecord) -> list:
        return [(c.label, c.observed) for c in check.comparisons if not c.passed]

    return (failing(before) != failing(after) or before.exception != after.exception
            or bits.moved(before, after) is not None)


def _at(jax: str, jaxlibs: set[str]) -> dict[str, str]:
    """jax pinned, with the jaxlib of the same release when there is one (else the resolver picks one)."""
    return {"jax": jax, **({"jaxlib": jax} if jax in jaxlibs else {})}


def older_side(baseline: str, candidate: str) -> str:
    """The older of the two sides' jax: the search goes down from there (neither side's jax imports the gap)."""
    return min(baseline, candidate, key=Version)


def _beside(gap: Gap, ran: Ran, release: str, named: dict[str, str], jax: str, prefix: str,
            run: Runner) -> tuple[Ran | None, str]:
    """Another release of the group at the pins `ran` was judged at; None and why when it cannot be."""
    same = {p: ran.pins[p] for p in ("jax", "jaxlib") if p in ran.pins}
    other = run(f"{prefix}{gap.group}-{release}-jax-{jax}", {**named, **same}, ran.pins)
    moved = sorted(p for p, v in other.pins.items() if p not in gap.packages and ran.pins.get(p) != v)
    if other.report is None:
        return None, f"{release} {other.outcome}"
    if moved:
        return None, f"{release} resolves only with other {', '.join(moved)}"
    return other, ""


Told = dict[str, bool | None]  # per check: whether two releases tell it apart at one jax (None: not judged)


def bridged_gap(gap: Gap, checks: list[str], jax_releases: list[str], jaxlibs: set[str], defaults: dict[str, str],
           prefix: str, run: Runner) -> tuple[Bridge, Told, Told]:
    """The release and its neighbour at the newest of `jax_releases` with which both import, and per check
    whether they differ there; for the checks they do not tell apart, the release and the next one (when
    `gap.later` names it and it imports there too). Empty when no jax does; the Bridge says which jax
    releases were tried and what each gave."""
    tried = []
    for jax in jax_releases:
        ran = run(f"{prefix}{gap.group}-{gap.release}-jax-{jax}", {**gap.named, **_at(jax, jaxlibs)}, defaults)
        if ran.report is None:
            tried.append(f"{jax}: {gap.release} {ran.outcome}")
            continue
        neighbour, why = _beside(gap, ran, gap.against, gap.against_named, jax, prefix, run)
        if neighbour is None:
            tried.append(f"{jax}: {why}")
            continue
        tried.append(f"{jax}: both import")
        told = {c: differs(neighbour.report.check(c), ran.report.check(c)) for c in checks}
        unseen = [c for c, v in told.items() if v is False]
        later, told_later = None, {}
        if unseen and gap.later is not None:
            later, why = _beside(gap, ran, gap.later, gap.later_named, jax, prefix, run)
            if later is None:
                tried.append(f"{jax}: {why}")
            else:
                told_later = {c: differs(ran.report.check(c), later.report.check(c)) for c in unseen}
        return (Bridge(gap.release, gap.against, jax, dict(ran.pins), tried, any(told.values()),
                       gap.later if later is not None else None), told, told_later)
    return Bridge(gap.release, gap.against, None, {}, tried, None), {}, {}


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
    typed_in: Path | None  # where the command was typed: logs are shown relative to it
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
         checks: list[str]) -> tuple[Ran, dict[str, bool | None]]:
    """Resolve the release with the other packages at `defaults`, run the checks there, judge them
    against the baseline (see _judge); the probe is recorded."""
    started = time.perf_counter()
    release = named[matrix.GROUPS[group][0]]
    try:
        found = resolve.resolve(ctx.ws, named, defaults, ctx.base.python, ctx.ws.options.pre, held=ctx.base.locked_with)
    except HarnessError:
        ctx.probes.append(Probe(name, group, release, {}, checks, "not installable", [], None, 0.0))
        return Ran(None, "not installable", {}), {}
    lock = ctx.directory.locks / f"{name}.txt"
    resolve.write_lock(found, lock)
    entry = matrix.Entry(name, found.pins, f"{group} {release}, bisecting", ctx.base.python, locked=False,
                         lock_file=str(lock), notes=tuple(found.notes), resolved_at=found.resolved_at,
                         locked_with=ctx.base.locked_with)
    _add_to_plan(ctx.directory, entry)
    selection = ctx.directory.bisect_selection
    selection.write_text("\n".join(checks) + "\n")
    ctx.run(ctx.ws, [entry], ctx.seed, only=selection, typed_in=ctx.typed_in)
    report, changed, outcome = _judge(ctx, name, checks)
    ctx.probes.append(Probe(name, group, release, found.pins, checks, outcome, [c for c, v in changed.items() if v],
                            "; ".join(found.notes) or None, round(time.perf_counter() - started, 1)))
    return Ran(report, outcome, dict(found.pins)), changed


def _probe(ctx: _Context, group: str, named: dict[str, str], checks: list[str]) -> Seen:
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
            note = f"{release} probed with {with_pins}: {failures(failed)}" if failed else ""
            confounded = [c for c in changed if failed and changed[c] is not None and ctx.depends_on_others(group, c)]
            changed = {c: None if c in confounded else v for c, v in changed.items()}
            why = (f"{release} not judged: {failures(failed)}, and {with_pins} changes the check on "
                   "its own" if confounded else "")
            print(f"upgrade: bisect {group} {release}" + (f" ({note})" if note else "") + ": "
                  f"{sum(bool(v) for v in changed.values())} of {len(checks)} checks changed"
                  + (f", {len(confounded)} unknown: {with_pins} changes them on its own" if confounded else ""))
            return Seen(changed, note, why)
        failed.append((outcome, with_pins))
        print(f"upgrade: bisect {group} {release}: {outcome} with {with_pins}")
    ctx.gaps.setdefault(group, {})[release] = failures(failed)
    return Seen({}, f"{release} {failures(failed)}")


def _bridge(ctx: _Context, group: str, versions: list[str], spans: dict[str, Span],
            named_of: Callable[[str], dict[str, str]]) -> dict[str, Bridge]:
    """Checks whose first possible release imports with neither side's jax: that release and its neighbour
    at the newest older jax with which both import (the bridge, below), all such checks of a release at once."""
    gaps, waiting = ctx.gaps.get(group, {}), {}
    for check, span in spans.items():
        if span.first < span.last and versions[span.first] in gaps:
            waiting.setdefault(span.first, []).append(check)
    if not waiting or group == "jax" or "jax" not in ctx.base.pins:
        return {}
    below = older_side(ctx.base.pins["jax"], ctx.cand.pins["jax"])
    jaxes = older_releases("jax", below, MAX_JAX, ctx.ws.options.pre, ctx.fetch)
    jaxlibs = all_releases("jaxlib", ctx.fetch) if "jaxlib" in ctx.base.pins else set()
    found = {}
    for index, batch in sorted(waiting.items()):
        release, against, later = versions[index], versions[index - 1], versions[index + 1]
        print(f"upgrade: bisect {group} {release} imports with neither side's jax: judging it against {against} "
              f"at the newest older jax with which both import ({', '.join(jaxes) or 'none listed'})")
        gap = Gap(group, tuple(matrix.GROUPS[group]), release, named_of(release), against,
                                named_of(against), later, named_of(later))
        bridge, told, told_later = bridged_gap(
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
    between = releases(lead, old, new, ctx.ws.options.pre, ctx.fetch)
    following = {p: all_releases(p, ctx.fetch) for p in followers if p in ctx.base.pins}
    print(f"upgrade: bisecting {lead} {old} → {new} for {len(checks)} changed checks over the "
          f"{len(between)} release{'s' * (len(between) != 1)} between ({', '.join(between) or 'none'})")
    versions = [old, *between, new]

    def named_of(release: str) -> dict[str, str]:  # jaxlib follows jax when it has that release
        return {lead: release, **{p: release for p, found in following.items() if release in found}}

    spans = search(len(between), checks, lambda i, batch: _probe(ctx, group, named_of(versions[i]),
                                                                               batch))
    bridged = _bridge(ctx, group, versions, spans, named_of)
    return between, [answer(c, group, lead, versions, spans[c], bridged.get(c))
                     for c in checks]


def _offline_index(package: str) -> dict:
    raise HarnessError(f"--offline: the releases of {package} between baseline and candidate come from the package "
                       "index, which an offline run never asks; run `upgrade --bisect` with network access")


def run(ws: Workspace, entries: list[matrix.Entry], seed: int, run_entries: Callable, replay: Path | None = None,
        fetch: Callable[[str], dict] = fetch_index, typed_in: Path | None = None,
        offline: bool = False) -> Path | None:
    """Bisect every blamed group; reports/bisect.json, or None when no contract changed (or none can be).
    The run's options are the workspace's (--pre); `offline`: --offline was typed (a UV_OFFLINE the process was
    told keeps uv off the network, not the bisection off the index); `typed_in`: where the command was typed."""
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
    if offline:
        fetch = _offline_index
    others_change = {group: None if verdict is None else {c.check_id for c in verdict.contract_changes}
                     for group, verdict in singles.items()}
    ctx = _Context(ws, run, typed_in, seed, run_entries, base_report, entries[0], entries[1], fetch, others_change)
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
