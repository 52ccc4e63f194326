"""Which bump caused the candidate's contract changes, said in one phrase for the headline:
"all from optax 0.2.6 → 0.2.8 (jax/jaxlib 0.11.2 → 0.12.0.1: none)". The single-package entries
(baseline with one package group bumped) are the evidence.
"""

from __future__ import annotations

from harness.model.enums import Status
from harness.model.report import STACK_VERSION_KEYS
from harness.model.verdict import EntryVerdict


def _versions(entry: EntryVerdict) -> dict[str, str | None]:
    return entry.versions if entry.status != Status.UNRESOLVABLE else dict(entry.requested)


def _single_text(base: dict[str, str | None], entry: EntryVerdict) -> str:
    """A single-package entry by the group it is named for ("jax-only": jax/jaxlib); packages that had to
    move with it (harness.stack.resolve) follow as "with flax 0.12.6"."""
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


def cause(base: dict[str, str | None], entries: list[EntryVerdict]) -> str | None:
    """The cause phrase of the candidate's (entries[0]) contract changes; None when there are none."""
    candidate, singles = entries[0], entries[1:]
    changed = {c.check_id for c in candidate.contract_changes}
    if not changed:
        return None
    if not singles:
        bumped = bump_text(base, candidate)
        return None if bumped.endswith("(same pins)") else f"all from {bumped}"
    found, clean, unjudged = [], [], []
    explained: set[str] = set()
    for single in singles:
        label = _single_text(base, single)
        if single.status != Status.COMPLETE:
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
    tail = clean + unjudged
    return head + (f" ({'; '.join(tail)})" if tail else "")
