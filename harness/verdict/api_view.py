"""The API diff (harness.model.api_diff) as the verdict shows it: per library, breaking changes first,
each change said at its public name, linked to the changed contracts whose checks call it; and the rule
that makes a removed name a change of contract when the contracts or the project's code use it.
"""

from __future__ import annotations

import dataclasses
import re

from harness.model.api_diff import ApiChange, ApiChangeKind as K, ApiDiff, PackageApiDiff
from harness.model.report import Report
from harness.model.verdict import Change

ADDED_SHOWN = 8  # added names listed by name; the rest counted (all in upgrade-summary.json)


def test_key(nodeid: str) -> str:
    """"tests/contracts/test_accumulation.py::test_state_layout[bfloat16]" -> "test_accumulation.py::test_state_layout"."""
    path, _, name = nodeid.partition("::")
    return f"{path.rsplit('/', 1)[-1]}::{name.split('[')[0]}"


def check_keys(baseline: Report) -> dict[str, str]:
    """Check id -> its test function's key (the API diff's `used_by_checks` names tests so)."""
    return {c.id: test_key(c.nodeid) for c in baseline.checks}


def signature(change: ApiChange) -> str:
    """`optax.MultiSteps(accumulator_dtype=jnp.float32)`, `optax.monte_carlo`."""
    if change.parameter is None:
        return change.symbol
    value = change.new if change.kind in (K.PARAMETER_ADDED, K.DEFAULT_CHANGED) else None
    return f"{change.symbol}({change.parameter}" + (f"={value}" if value is not None else "") + ")"


def describe(change: ApiChange) -> str:
    """The change in words: "parameter added: optax.MultiSteps(accumulator_dtype=jnp.float32)"."""
    said = f"{change.kind}: {signature(change)}"
    if change.kind == K.DEFAULT_CHANGED:
        said += f" (was {change.old})"
    elif change.kind in (K.KEYWORD_ONLY, K.KIND_CHANGED) and change.old:
        said += f" ({change.old} → {change.new})"
    return said


def _token(value: str | None) -> str | None:
    """The last name of a default's source text: `jnp.float32` -> "float32", `'hard'` -> "hard"."""
    if not value:
        return None
    return re.split(r"[.]", value.strip("'\""))[-1] or None


def keeps_old(api: ApiChange, change: Change) -> str | None:
    """The argument that keeps the baseline's behaviour in this check: for a changed default, the old
    default; for a new parameter, the baseline's observed value when the check now shows the parameter's
    default where it showed that value (`accumulator_dtype=bfloat16` for a bfloat16 → float32 state)."""
    if api.kind == K.DEFAULT_CHANGED and api.old is not None:
        return f"{api.parameter}={api.old}"
    new = _token(api.new)
    if api.kind != K.PARAMETER_ADDED or not new or not change.before:
        return None
    words = lambda text: set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))  # noqa: E731
    old_word = re.match(r"[A-Za-z_][A-Za-z0-9_]*", change.before)
    if new in words(change.after) and new not in words(change.before) and old_word:
        return f"{api.parameter}={old_word.group(0)}"
    return None


def links(diff: ApiDiff | None, baseline: Report, changes: list[Change]) -> list[str]:
    """The API changes that `changes` (one contract's changed cases) call, each with what keeps the
    baseline's behaviour when the diff and the check say it."""
    if diff is None:
        return []
    keys = check_keys(baseline)
    found = {keys.get(c.check_id) for c in changes}
    out = []
    for api in diff.changes:
        if api.kind in (K.ADDED, K.MODULE_ADDED) or not found & set(api.used_by_checks):
            continue
        kept = next((k for c in changes if (k := keeps_old(api, c))), None)
        if kept:  # the change this API change explains: its words, and how to keep the old behaviour
            out.append(f"API: {describe(api)}" + (f" ({api.doc})" if api.doc else "")
                       + f"; {kept} keeps the baseline's behaviour here ({_old_new(changes)})")
        else:
            out.append(f"API it calls changed: {describe(api)}")
    return out


def _old_new(changes: list[Change]) -> str:
    c = changes[0]
    return f"{c.before} → {c.after.split(' (')[0]}"


def _contracts(n: int) -> str:
    return "1 contract calls" if n == 1 else f"{n} contracts call"


def _used(api: ApiChange) -> str:
    parts = [f"{_contracts(len(api.used_by_checks))} it"] if api.used_by_checks else []
    if api.used_by_project:
        more = f" and {len(api.used_by_project) - 3} more" if len(api.used_by_project) > 3 else ""
        parts.append("YOUR CODE calls it: " + ", ".join(api.used_by_project[:3]) + more)
    return "; ".join(parts)


def package_title(p: PackageApiDiff) -> str:
    name = p.scope if p.scope.startswith(p.package) else p.package
    if p.old_version is None and p.new_version is None:  # a project that does not use it (flax) installs none
        return f"{name}: installed on neither side"
    old, new = p.old_version or "not installed", p.new_version or "not installed"
    versions = f"{old} → {new}" if old != new else f"{new} on both"
    scope = "" if p.scope.startswith(p.package) or p.scope == "public API" else f", {p.scope}"
    breaking = sum(c.kind.breaking for c in p.changes)
    counted = f"{breaking} breaking, {len(p.changes) - breaking} added" if p.changes else "no change"
    return f"{name} {versions}{scope}: " + (p.problem or counted)


def package_lines(p: PackageApiDiff) -> list[str]:
    """One line per breaking or signature change (what calls it below it); added names and modules on
    one line each."""
    out = []
    for c in p.changes:
        if c.kind in (K.ADDED, K.MODULE_ADDED):
            continue
        out.append(("BREAKING " if c.kind.breaking else "") + describe(c) + (f": {c.doc}" if c.doc else ""))
        out += [f"  {_used(c)}"] if c.used else []
    for kind in (K.MODULE_ADDED, K.ADDED):
        names = [c.symbol for c in p.changes if c.kind == kind]
        if names:
            more = f" and {len(names) - ADDED_SHOWN} more" if len(names) > ADDED_SHOWN else ""
            out.append(f"{'modules' if kind == K.MODULE_ADDED else 'names'} added: " + ", ".join(names[:ADDED_SHOWN]) + more)
    if p.unread:
        out.append(f"not compared ({len(p.unread)}: their source could not be read): "
                   + ", ".join(p.unread))
    return out


def used_removals(diff: ApiDiff | None, own_keys: set[str] | None) -> list[ApiChange]:
    """Removed names or parameters that something judged uses: the project's code, or the contracts
    (only the project's own, `own_keys`, when the built-in ones are reported only; None: all)."""
    if diff is None:
        return []
    return [c for c in diff.used_removals
            if c.used_by_project or (own_keys is None and c.used_by_checks) or set(c.used_by_checks) & (own_keys or set())]


def removal_text(found: list[ApiChange]) -> str:
    """"optax.foo removed, which 3 contracts call" for the headline."""
    def one(c: ApiChange) -> str:
        users = [_contracts(len(c.used_by_checks)) if c.used_by_checks else "",
                 f"your code calls ({c.used_by_project[0]})" if c.used_by_project else ""]
        return f"{signature(c)} {c.kind}, which " + " and ".join(u for u in users if u)
    return "API: " + "; ".join(one(c) for c in found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")


@dataclasses.dataclass(frozen=True)
class Section:
    """The verdict's API section: a title and, per library, its title and lines."""

    title: str
    packages: list[tuple[str, list[str]]]


def section(diff: ApiDiff | None) -> Section | None:
    if diff is None:
        return None
    title = (f"API changes, {diff.entry} vs baseline (informational, except a removed name or parameter that the "
             "contracts or your code call)")
    return Section(title, [(package_title(p), package_lines(p)) for p in diff.packages])
