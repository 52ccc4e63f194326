"""The changelog ledger held against a real pair's verdict (tests/real_stacks): which of its entries between two
releases the verdict must name, and those it does not."""

from __future__ import annotations

from packaging.version import Version

from harness.coverage import changelog

# What shows as a changed check when it happens at a contract's inputs (an added parameter or callable, a new
# signature, need not change any value the baseline's calls see).
VISIBLE = {changelog.ChangeKind.VALUE, changelog.ChangeKind.GRADIENT, changelog.ChangeKind.NONFINITE,
           changelog.ChangeKind.DTYPE, changelog.ChangeKind.DEFAULT, changelog.ChangeKind.RAISES,
           changelog.ChangeKind.STATE, changelog.ChangeKind.SHAPE, changelog.ChangeKind.REMOVED}


def entries_between(baseline: dict[str, str], candidate: dict[str, str]) -> list[changelog.Entry]:
    """The ledger's visible, seen entries of the releases after the baseline's up to the candidate's."""
    found = []
    for package in ("optax", "flax", "jax"):
        low, high = Version(baseline[package]), Version(candidate[package])
        found += [e for e in changelog.read(package).entries
                  if low < Version(e.release) <= high and e.seen and e.kind in VISIBLE]
    return found


def unnamed(summary: dict, entries: list[changelog.Entry]) -> list[str]:
    """Each entry none of whose seen_by contracts the verdict marks changed on the candidate (informational
    marks aside), as 'release source: text (seen_by ...)'."""
    candidate = next(e for e in summary["entries"] if e["name"] == "candidate")
    informational = {"bits changed", "moved within noise", "unchanged", "accepted", "not on the baseline's stack"}
    changed = {c["check_id"].split("[")[0] for c in candidate["changes"] if c["mark"] not in informational}
    return [f"{e.release} {e.source}: {e.text} (seen_by {', '.join(e.seen_by)})" for e in entries
            if not any(contract in changed for contract in e.seen_by)]
