"""Changed checks grouped for reading: one row per contract (a test function) and mark, with its
parametrized cases, ordered by danger (harness.model.enums.Mark's order)."""

from __future__ import annotations

import dataclasses
import math

from harness.model.enums import Mark
from harness.model.verdict import Change

# What each mark means to someone bumping their pins: the group's title.
MEANING = {
    Mark.NOW_SILENT: "bad input now accepted without an error",
    Mark.STATE_CHANGED: "dtype or state layout changed",
    Mark.VALUE_CHANGED: "values changed beyond tolerance",
    Mark.ERROR_TYPE_CHANGED: "bad input raises another exception type",
    Mark.API_MISSING: "a function or module the contract uses is gone",
    Mark.MISSING: "the contract did not run",
    Mark.IMPROVED: ("improvement (NaN gone, bad input now rejected, or a statement holds again): still a change "
                    "to accept"),
    Mark.NOT_JUDGED: "could not be judged",
    Mark.FAILING_BOTH: "fails on the baseline too",
    Mark.FIXED: "failed on the baseline, passes now",
    Mark.ACCEPTED: "accepted on this branch: the golden values are the candidate's (informational)",
    Mark.NOISE: "moved within the numerical noise measured on the baseline (informational)",
    Mark.BITS_CHANGED: "within tolerance, but values changed bits (informational)",
    Mark.NOT_ON_STACK: "not applicable: the baseline's stack lacks a callable, parameter or module it calls",
    Mark.NEW_CHECK: "only on this entry",
}


@dataclasses.dataclass(frozen=True)
class ChangeGroup:
    """One contract's changed cases that share a mark."""

    mark: Mark
    contract: str  # family/test_name, parameters stripped
    changes: list[Change]

    @property
    def about(self) -> str:
        return self.changes[0].about

    @property
    def cases(self) -> list[str]:
        return [case_id(c.check_id) for c in self.changes]

    @property
    def cases_text(self) -> str:
        """'6 cases: multisteps_sgd × leaf_broadcastable, rank_down, scalar_leaf × eager, jit' when the
        cases are a full product of their parameters; else the case ids."""
        cases = [c for c in self.cases if c]
        if not cases:
            return ""
        dims = [c.split("-") for c in cases]
        # Ids are "-"-joined parameters; values with their own "-" (max_norm=-1) are not split.
        splittable = len(cases) > 1 and all(part and not part.endswith("=") for d in dims for part in d)
        if splittable and len({len(d) for d in dims}) == 1:
            values = [list(dict.fromkeys(d[i] for d in dims)) for i in range(len(dims[0]))]
            if math.prod(len(v) for v in values) == len(cases):
                return f"{len(cases)} case{'s' * (len(cases) > 1)}: " + " × ".join(", ".join(v) for v in values)
        return f"{len(cases)} case{'s' * (len(cases) > 1)}: " + ", ".join(cases)

    @property
    def before_after(self) -> str:
        """'before → after' when every case says the same; else the first case's, marked as varying."""
        pairs = list(dict.fromkeys((c.before, c.after) for c in self.changes if c.before or c.after))
        if not pairs:
            return ""
        text = f"{pairs[0][0]} → {pairs[0][1]}"
        others = len(pairs) - 1
        return text if not others else f"{text} (and {others} other outcome{'s' * (others > 1)}: see the cases)"

    @property
    def size(self) -> str:
        sized = [c for c in self.changes if c.size]
        if not sized:
            return ""
        worst = max(sized, key=lambda c: c.max_rel_err or 0.0)
        return worst.size + (f" (the largest of {len(sized)} cases)" if len(sized) > 1 else "")


def first_changed(group: ChangeGroup, found: dict[str, str]) -> str:
    """Where the group's cases first changed (`upgrade -- --bisect`): one release, or each distinct one
    with its count of cases; '' when none was bisected."""
    said = [found[c.check_id] for c in group.changes if c.check_id in found]
    counts = {text: said.count(text) for text in dict.fromkeys(said)}
    if len(counts) <= 1:
        return next(iter(counts), "")
    return "; ".join(f"{text} ({n} case{'s' * (n > 1)})" for text, n in counts.items())


def count_text(changes: list[Change], verb: str = "") -> str:
    """'24 checks in 7 contracts{verb} (3 improvements)': a headline's count of changed checks."""
    improved = sum(c.mark == Mark.IMPROVED for c in changes)
    contracts = len({contract_of(c.check_id) for c in changes})
    count = f"{len(changes)} check{'s' * (len(changes) > 1)} in {contracts} contract{'s' * (contracts > 1)}{verb}"
    return count + (f" ({improved} improvement{'s' * (improved > 1)})" if improved else "")


def contract_of(check_id: str) -> str:
    return check_id.split("[", 1)[0]


def case_id(check_id: str) -> str:
    return check_id.split("[", 1)[1].rstrip("]") if "[" in check_id else ""


def group(changes: list[Change]) -> list[ChangeGroup]:
    """Changes grouped by (mark, contract): the most dangerous marks first, then by contract."""
    groups: dict[tuple[Mark, str], list[Change]] = {}
    for change in sorted(changes, key=lambda c: (c.mark.rank, c.check_id)):
        groups.setdefault((change.mark, contract_of(change.check_id)), []).append(change)
    return [ChangeGroup(mark, contract, members) for (mark, contract), members in groups.items()]


def bits_text(group: ChangeGroup) -> str:
    """What moved in a bits-changed group, summed over its cases."""
    moved = [c.bits for c in group.changes if c.bits is not None]
    if not moved:
        return ""
    parts = [f"{sum(b.values for b in moved)} of {sum(b.compared for b in moved)} values changed bits"]
    worst = max((b.max_ulps or 0 for b in moved), default=0)
    parts += [f"max {worst} ulp"] if worst else []
    flips = sum(b.sign_flips for b in moved)
    parts += [f"{flips} zeros changed sign"] if flips else []
    identical = sum(len(b.paths_now_identical) for b in moved)
    parts += [f"{identical} path pairs now bit-identical"] if identical else []
    return "; ".join(parts)
