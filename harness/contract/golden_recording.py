"""The end of a `nox -s golden` run: show what would be added or changed, and write only what may be.

Nothing recorded is lost or silently overwritten: a run with a failing check writes nothing, and a
changed value needs --harness-accept-changes. So does a statement the baseline breaks (a reference, an exact
value, an agreement, a bound), which is then recorded as its departure (harness.contract.departures): each one is
listed, with its check, label and size, and so is each departure dropped because its statement holds again.
"""

from __future__ import annotations

import collections
import json

import pytest

from harness import platforms
from harness.golden_layout import ACCEPTED
from harness import not_on_stack
from harness.contract import environment
from harness.contract.families import Family
from harness.contract.golden import REMOVED, REPLACES, record_command
from harness.contract.noise_entry import NOISE
from harness.contract.session import Recorder
from harness.host_emulation import EMULATED, HOST_NOISE, SAMPLE_OF
from harness.model import departure, host as hosts
from harness.model.enums import CheckKind, ComparisonKind, Outcome
from harness.model.report import STACK_VERSION_KEYS

MAX_ADDED_LINES = 40
SHORT = 120  # characters of a recorded value shown whole; a longer change is shown by what differs
MAX_DIFFS = 6  # differing items named in one change
STATEMENTS = (ComparisonKind.REFERENCE, ComparisonKind.EQUIVALENCE, ComparisonKind.EXACT, ComparisonKind.BOUND)


def finish(session, recorder: Recorder) -> None:
    """Write the recorded golden values, or say why not and fail the run."""
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    if terminal:
        terminal.ensure_newline()  # after the progress dots' "[100%]": each line its own
    say = terminal.write_line if terminal else print
    if session.config.getoption("--harness-observe-noise"):  # into a folder of its own: all it saw, as it saw it
        written = recorder.store.write({"observed": "noise", "host": hosts.provenance(environment.host())})
        say(f"golden: observed {sum(map(len, recorder.store.recorded.values()))} values; wrote {len(written)} files")
        return
    # A check the platform refused records nothing it should have: the values it would hold are not this platform's;
    # nor does one calling what this stack lacks (harness.contract.stack_lacks): both are named below, not failures.
    failing = [c for c in recorder.checks.values() if c.outcome != Outcome.PASSED
               and not (c.outcome == Outcome.SKIPPED and (platforms.said_not_here(c.message)
                                                          or not_on_stack.said(c.message)))]
    if failing:
        failed = [c.id for c in failing]
        say(f"golden: NOT written: {len(failed)} checks did not pass while recording: {', '.join(failed[:10])}")
        for check in failing[:10]:  # why each, in a line: the traceback is above, among pytest's failures
            say(f"golden:   {check.id}: {(check.message.strip().splitlines() or ['(no message)'])[0][:300]}")
        departing = [c for c in failing if _breaks_a_statement(c)]
        if departing and not recorder.accepting:
            builtin = any(recorder.store.is_builtin(Family(c.family, bool(c.own))) for c in departing)
            say(f"golden: {len(departing)} of them break a statement (a reference, an exact value, an agreement, a "
                "bound) on this baseline: if the new behaviour is intended, "
                f"`{record_command(accept=True, builtin=builtin)}` records it as the statement's departure "
                "(listed, and judged from then on)")
        raising = [c for c in failing if _raised_here(c)]
        if raising and not recorder.accepting:
            say(f"golden: {len(raising)} of them raise on this baseline (a built-in check on another stack than "
                f"it was written for): `{record_command(accept=True, builtin=True)}` records each raise as the "
                "baseline's departure (judged from then on: the same exception passes, another or none is a change)")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    say_not_on_stack(say, recorder)
    changes = recorder.store.changes()
    changed = [c for c in changes if c[2] == "changed"]
    replaced = [c for c in changes if c[2] == REPLACES]
    dropped = [c for c in changes if c[2] == REMOVED]
    say_changes(say, changes, recorder.store.label)
    if (changed or replaced or dropped) and not recorder.accepting:
        builtin = any(recorder.store.is_builtin(family) for family, *_ in changed + replaced + dropped)
        what = [f"{len(changed)} recorded values would change"] if changed else []
        what += [f"{len(replaced)} unreadable golden files would be written anew"] if replaced else []
        what += [f"{len(dropped)} departures would be dropped (their statements hold again)"] if dropped else []
        say(f"golden: NOT written: {' and '.join(what)}. Review them above; "
            f"to accept, run `{record_command(accept=True, builtin=builtin)}`.")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    provenance = _provenance(session.config, recorder)
    say_noise(say, recorder.store)
    say_host_noise(say, recorder.store)
    written = recorder.store.write(provenance)
    departures = sum(c[1].startswith(departure.KEY) and c[2] != REMOVED for c in changes)
    values = sum(c[2] not in (REPLACES, REMOVED) for c in changes) - departures
    said = [f"{values} values added or changed"] + [f"{departures} departures recorded"] * bool(departures)
    said += [f"{len(dropped)} departures dropped"] * bool(dropped)
    say(f"golden: {', '.join(said)}; wrote {', '.join(str(recorder.store.shown(p)) for p in written) or 'nothing'}")


def say_not_on_stack(say, recorder: Recorder) -> None:
    """The checks not recorded because this stack lacks what they call: counted, and what it lacks, each once."""
    lacking = [c for c in recorder.checks.values() if c.outcome == Outcome.SKIPPED and not_on_stack.said(c.message)]
    if not lacking:
        return
    by_reason = collections.Counter(not_on_stack.what(c.message) for c in lacking)
    say(f"golden: {len(lacking)} checks not applicable on this stack (not recorded; they call what it lacks):")
    for what, count in by_reason.most_common():
        say(f"golden:   {what}: {count} check{'s' * (count != 1)}")


def _provenance(config, recorder: Recorder) -> dict:
    """What the recording's files say of it: the stack, the host, where its noise was measured, and when it accepts
    changes, the command and the reason (a pull-request check lists them beside each re-recorded value)."""
    versions = environment.versions()
    provenance = {
        "entry": config.getoption("--harness-entry"),
        "versions": {k: versions[k] for k in STACK_VERSION_KEYS},
        "backend": environment.jax_platform().get("backend"),
        "host": hosts.provenance(environment.host()),  # what the values are a statement about (harness.model.host)
    }
    if recorder.accepting:
        provenance[ACCEPTED] = {"command": config.getoption("--harness-accepted-by") or record_command(True),
                                "reason": config.getoption("--harness-accept-reason")}
    if recorder.store.perturbed:  # the compilations each value's noise was measured under (harness.numerical_noise)
        provenance["noise_from"] = [store.directory.name for store in recorder.store.perturbed]
    if recorder.store.emulated:  # the hosts each value's host noise was measured on (harness.host_emulation)
        provenance[EMULATED] = {str(d): [store.directory.name for store in stores]
                                for d, stores in sorted(recorder.store.emulated.items())}
    return provenance


def _raised_here(check) -> bool:
    """A built-in plain test ended by an exception that is no contract's failure (harness.contract.raised)."""
    return (not check.own and check.kind != CheckKind.PROPERTY and check.outcome == Outcome.FAILED
            and check.exception not in (None, "ContractFailure", "RaisedAfterMismatches"))


def _breaks_a_statement(check) -> bool:
    """A failing check whose first failure is a statement of a plain test (what accepting records)."""
    failed = next((c for c in check.comparisons if not c.passed), None)
    return check.kind != CheckKind.PROPERTY and failed is not None and failed.kind in STATEMENTS


def say_departure(say, what: str, entry, new: bool = True) -> None:
    """A departure recorded (its check, label and size) or dropped (its statement holds again)."""
    found = departure.of_entry(entry)
    if new:
        say(f"golden: departs {found.check}: {found.statement}: {what} as this baseline's departure from its "
            f"stated {departure.stated(found)} ({departure.size_text(found.size)})")
        if departure.breaks_an_identity(found):  # not a formula: the platform computes the two paths otherwise
            say(f"golden:   an identity broke here: {found.check}'s two library paths (e.g. jit and eager) compute "
                "different values on this platform; a formula's departure is a release's behaviour, this one is "
                "the platform's compilation: check it is intended before you keep it")
    else:
        say(f"golden: holds again {found.check}: {found.statement}: its departure recorded on "
            f"{departure.stack_text(found.recorded_on)} is no longer observed and is dropped")


def say_noise(say, store) -> None:
    """How many recorded values carry their noise, the largest, and those the perturbed runs did not record."""
    if not store.perturbed:
        return
    entries = [(family, key, store.recorded[family][key]) for family, key in sorted(store.noise_keys)]
    measured = [e[NOISE] for _, _, e in entries if NOISE in e]
    if not entries:
        return
    said = (f"golden: noise measured for {len(measured)} of {len(entries)} values "
            f"({', '.join(store.directory.name for store in store.perturbed)})")
    if measured:
        said += f"; largest {max(measured):.3g}"
    say(said)
    missing = [f"{store.label(family)}/{key}" for family, key, e in entries if NOISE not in e]
    if missing:
        say(f"golden: no noise for {len(missing)} values ({', '.join(missing[:5])}"
            f"{' and more' if len(missing) > 5 else ''}): the perturbed runs did not record them (their checks failed "
            "or raised there); they are judged at their golden ulps on every stack")


def say_host_noise(say, store) -> None:
    """How many recorded values the emulated hosts reached, how many each dimension moved, and those they did
    not reach (no host noise: judged at their golden ulps on every host)."""
    if not store.emulated:
        return
    entries = [(family, key, store.recorded[family][key]) for family, key in sorted(store.host_noise_keys)]
    if not entries:
        return
    reached = [e for _, _, e in entries if HOST_NOISE in e]
    moved = collections.Counter(d for e in reached for d in e[HOST_NOISE])
    hosts_run = "; ".join(f"{d}: {', '.join(s.directory.name for s in stores)}"
                          for d, stores in sorted(store.emulated.items()))
    said = ", ".join(f"{d} {n}" for d, n in sorted(moved.items())) or "none"
    say(f"golden: host noise measured for {len(reached)} of {len(entries)} values on the emulated hosts "
        f"({hosts_run}); values each dimension moved: {said}")
    if store.left_out_keys:
        say(f"golden: {len(store.left_out_keys)} values of checks the emulated hosts' runs left out: the measured map "
            "says no host moved them when last recorded (each runs there again at one commit in "
            f"{SAMPLE_OF}); they keep the host noise their file held")
    missing = [(family, key) for family, key, e in entries
               if HOST_NOISE not in e and (family, key) not in store.left_out_keys]
    ran = {family for family, _ in missing if any(s.path(family).exists() for ss in store.emulated.values() for s in ss)}
    for reached, why in ((False, "their family did not run on the emulated hosts (the data-parallel family's "
                                 "process is not emulated)"),
                         (True, "no emulated host recorded them (their checks failed or raised there)")):
        named = [f"{store.label(family)}/{key}" for family, key in missing if (family in ran) == reached]
        if named:
            say(f"golden: no host noise for {len(named)} values ({', '.join(named[:5])}"
                f"{' and more' if len(named) > 5 else ''}): {why}; they are judged at their golden ulps on every "
                "host")


def say_changes(say, changes, label=lambda family: family.name) -> None:
    """Every changed value, old -> new; added values one per line, or counted per family when there are
    many (a first recording adds hundreds, and nothing is there yet to review against). `label`: a family
    as its file is named (GoldenStore.label: a team's copy of a built-in family is `builtin/<name>`). Every
    departure recorded or dropped is said on its own line, however many values were added."""
    added = [(label(family), key) for family, key, what, _, _ in changes
             if what == "added" and not key.startswith(departure.KEY)]
    for family, key, what, old, new in changes:
        if key.startswith(departure.KEY):
            say_departure(say, what, new if what != REMOVED else old, new=what != REMOVED)
        elif what == REPLACES:  # `old` says why the file cannot be read
            say(f"golden: {what} {label(family)}: {old.rstrip('.')}. Accepting writes it anew, whole: a value "
                "this recording does not make again is lost")
        elif what != "added" or len(added) <= MAX_ADDED_LINES:
            say(f"golden: {what:7s} {label(family)}/{key}" + (f": {_difference(old, new)}" if old else ""))
    if len(added) > MAX_ADDED_LINES:
        per_family = collections.Counter(family for family, _ in added)
        say(f"golden: added   {len(added)} values: " + ", ".join(f"{f} {n}" for f, n in per_family.items()))


def _difference(old, new) -> str:
    """old -> new; when the values are the same, what else changed (a dtype, the judged precision)."""
    if isinstance(old, dict) and isinstance(new, dict) and "values" in old and old.get("values") == new.get("values"):
        before, after = _form(old), _form(new)
        moved = [f"{field} {before[field]} -> {after[field]}" for field in before if before[field] != after[field]]
        return "values unchanged; " + (", ".join(moved) or "its notes changed")
    shown = f"{_short(old)} -> {_short(new)}"
    if all(len(_text(e)) < SHORT for e in (old, new)):  # both shown whole
        return shown
    diffs = _differing(_payload(old), _payload(new))
    if not diffs:
        return shown
    what = f"{len(diffs)} of {len(_payload(new))} values" if _is_array(old, new) else f"{len(diffs)} items"
    listed = "; ".join(f"{path}: {_clip(a)} -> {_clip(b)}" for path, a, b in diffs[:MAX_DIFFS])
    return f"{what} differ: {listed}" + (f"; and {len(diffs) - MAX_DIFFS} more" if len(diffs) > MAX_DIFFS else "")


def _is_array(old, new) -> bool:
    return all(isinstance(e, dict) and isinstance(e.get("values"), list) for e in (old, new)) \
        and len(old["values"]) == len(new["values"])


def _payload(entry):
    """What a recorded entry holds: an array's values, a fact, or the entry itself."""
    if isinstance(entry, dict) and "values" in entry:
        return entry["values"]
    if isinstance(entry, dict) and set(entry) == {"fact"}:
        return entry["fact"]
    return entry


def _differing(old, new, path: str = "") -> list[tuple[str, object, object]]:
    """Where two JSON values differ: (path like [14][1] or .key, old, new), in order."""
    if isinstance(old, list) and isinstance(new, list):
        found = [d for i, (a, b) in enumerate(zip(old, new)) for d in _differing(a, b, f"{path}[{i}]")]
        if len(old) != len(new):
            found.append((f"{path} length", len(old), len(new)))
        return found
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for k in dict.fromkeys([*old, *new])
                for d in _differing(old.get(k, "<absent>"), new.get(k, "<absent>"), f"{path}.{k}")]
    return [] if old == new else [(path or "value", old, new)]


def _clip(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _form(entry: dict) -> dict:
    """What a golden value's form is beside its values; an absent precision is its own dtype's."""
    return {"dtype": entry.get("dtype"), "shape": entry.get("shape"),
            "precision": entry.get("precision", entry.get("dtype"))}


def _text(entry) -> str:
    return json.dumps(entry.get("values", entry) if isinstance(entry, dict) else entry)


def _short(entry) -> str:
    text = _text(entry)
    return text if len(text) < SHORT else text[:SHORT - 3] + "..."
