"""Which bump caused the candidate's contract changes, said in one phrase for the headline:
"all from optax 0.2.6 → 0.2.8 (jax/jaxlib 0.11.2 → 0.12.0.1: none)". The single-package entries
(baseline with one package group bumped) are the evidence.
"""

from __future__ import annotations

from collections.abc import Collection

from harness.model.enums import Mark, Status
from harness.model.report import STACK_VERSION_KEYS
from harness.model.verdict import EntryVerdict


def _versions(entry: EntryVerdict) -> dict[str, str | None]:
    return entry.versions if entry.status != Status.UNRESOLVABLE else dict(entry.requested)


def _single_text(base: dict[str, str | None], entry: EntryVerdict) -> str:
    """A single-package entry by the group it is named for ("jax-only": jax/jaxlib); packages that had to
    move with it (harness.stack.pins.resolve) follow as "with flax 0.12.6"."""
    full = bump_text(base, entry)
    group = entry.name.removesuffix("-only")
    parts = full.split(", ")
    own = [p for p in parts if p.split(" ", 1)[0].split("/", 1)[0].startswith(group)]
    moved = [p.split(" ")[0] + " " + p.rsplit(" ", 1)[-1] for p in parts if p not in own]
    return ", ".join(own or parts) + (f" with {', '.join(moved)}" if own and moved else "")


def bump_text(base: dict[str, str | None], entry: EntryVerdict) -> str:
    """'optax 0.2.6 → 0.2.8'; jax and jaxlib moving between the same versions read 'jax/jaxlib ...'."""
    versions = _versions(entry)
    moved = [k for k in STACK_VERSION_KEYS[1:] if versions.get(k) and versions.get(k) != base.get(k)]
    together = base.get("jax") == base.get("jaxlib") and versions.get("jax") == versions.get("jaxlib")
    if {"jax", "jaxlib"} <= set(moved) and together:
        moved.remove("jaxlib")
    names = {"jax": "jax/jaxlib"} if together else {}
    return ", ".join(f"{names.get(k, k)} {base.get(k)} → {versions.get(k)}" for k in moved) or f"{entry.name} (same pins)"


def cause(base: dict[str, str | None], entries: list[EntryVerdict], within: Collection[str] | None = None,
          tail: bool = True) -> str | None:
    """The cause phrase of the candidate's (entries[0]) contract changes, or of those among `within` (check
    ids: the project's own, the built-in ones); None when there are none. Without `tail`, the entries that
    change none of them are left unsaid (a headline with two parts)."""
    candidate, singles = entries[0], entries[1:]
    changed = {c.check_id for c in candidate.contract_changes}
    if within is not None:
        changed &= set(within)
    if not changed:
        return None
    if not singles:
        bumped = bump_text(base, candidate)
        return None if bumped.endswith("(same pins)") else f"all from {bumped}"
    found, clean, unjudged = [], [], []
    explained: set[str] = set()
    for single in singles:
        label = _single_text(base, single)
        if not single.status.ran_to_end:
            unjudged.append(f"{label}: not judged, {single.status}")
            continue
        ids = {c.check_id for c in single.contract_changes} & changed
        explained |= ids
        (found.append((label, len(ids))) if ids else clean.append(f"{label}: none"))
    together = len(changed - explained)
    if len(found) == 1 and not together and not unjudged:
        head = f"all from {found[0][0]}"
    else:
        parts = [f"{n} from {label}" for label, n in sorted(found, key=lambda f: -f[1])]
        if together:
            parts.append(f"{together} only with the bumps together" if not unjudged else f"{together} unattributed")
        head = ", ".join(parts)
    said = clean + unjudged if tail else []
    return head + (f" ({'; '.join(said)})" if said else "")


def of_check(base: dict[str, str | None], entries: list[EntryVerdict], check_id: str) -> str:
    """Which single-package bump moves one check of the candidate (entries[0]) the way it moved there:
    'optax 0.2.6 → 0.2.8', each of two bumps, 'only with the bumps together', or why it is not known.
    Without single-package entries (one package group moved), the candidate's own bump."""
    candidate, singles = entries[0], entries[1:]
    mark = next((c.mark for c in candidate.changes if c.check_id == check_id), Mark.UNCHANGED)
    if not singles:
        bumped = bump_text(base, candidate)
        return "" if bumped.endswith("(same pins)") else bumped

    def moves(entry: EntryVerdict) -> bool:
        """Moved there as on the candidate: a fixed check (accepted on a branch) only where it passes too; a
        single entry that still fails it, as the baseline does, did not move it."""
        found = next((c.mark for c in entry.changes if c.check_id == check_id), Mark.UNCHANGED)
        if mark == Mark.FIXED:
            return found == Mark.FIXED
        return found.changes_contract if mark.changes_contract else found != Mark.UNCHANGED

    judged = [s for s in singles if s.status.ran_to_end]
    found = [_single_text(base, s) for s in judged if moves(s)]
    unjudged = [f"{_single_text(base, s)}: not judged, {s.status}" for s in singles if s not in judged]
    if found:
        return " and ".join(found) + (" (each alone)" if len(found) > 1 else "") + \
            (f" ({'; '.join(unjudged)})" if unjudged else "")
    return f"unattributed ({'; '.join(unjudged)})" if unjudged else "only with the bumps together"
