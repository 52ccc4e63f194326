"""How a checkpoint's leaves differ from what the restoring stack expects, and what a team can do about it.

Orbax restores into a target of the reading stack's own dtypes and shapes: a leaf written in another dtype
is cast without a word, one written and no longer expected is dropped, one expected and never written (or
of another shape) fails the restore. Each of those is a change a team must hear of by leaf, before a
resumed run trains on state it did not save. Plain Python (no NumPy, no JAX), so the harness's own tests
exercise it on synthetic trees.
"""

from __future__ import annotations

import dataclasses
import enum


@dataclasses.dataclass(frozen=True)
class LeafSpec:
    """One leaf as a checkpoint's metadata or a restore target describes it."""

    dtype: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.dtype} {self.shape}"


class Kind(enum.StrEnum):
    """What a restore does with a differing leaf (in the order a reviewer should read them)."""

    MISSING = "missing"  # expected by the reader, not in the checkpoint: the restore fails
    SHAPE = "shape"  # another shape: the restore fails (or would need a conversion)
    DTYPE = "dtype"  # another dtype: the restore casts it silently
    DROPPED = "dropped"  # in the checkpoint, not expected: a restore that drops it loses its value


ADVICE = {
    Kind.MISSING: ("the reader's optimizer or model has state the checkpoint lacks: keep the old configuration "
                   "(the parameter that adds the leaf), or restore the rest and initialise that leaf from "
                   "tx.init(params) (a partial restore)"),
    Kind.SHAPE: ("a shape cannot be cast: keep the old layout (the parameter that changed it), or convert the "
                 "checkpoint once with a script that reshapes the leaf and saves it again"),
    Kind.DTYPE: ("keep the old layout where the library offers a parameter for it (a state dtype argument such as "
                 "MultiSteps' accumulator_dtype, or the model's param_dtype), or convert on purpose: restore with "
                 "the written dtypes as target (ocp.utils.to_shape_dtype_struct of checkpointer.metadata(path)) "
                 "and cast the leaf yourself, knowing the resumed run differs from one never interrupted"),
    Kind.DROPPED: ("the reader no longer keeps this state: restoring drops it, so a resumed run loses what it "
                   "held; keep the old configuration, or restore with a target that omits it only if that "
                   "state may restart"),
}


@dataclasses.dataclass(frozen=True)
class Difference:
    """One leaf that does not restore as written."""

    path: str
    kind: Kind
    written: LeafSpec | None
    expected: LeafSpec | None

    def text(self) -> str:
        if self.kind == Kind.MISSING:
            return f"{self.path}: not in the checkpoint; expected {self.expected}"
        if self.kind == Kind.DROPPED:
            return f"{self.path}: written as {self.written}; not expected (dropped on restore)"
        return f"{self.path}: written as {self.written}; expected {self.expected}"


def differences(written: dict[str, LeafSpec], expected: dict[str, LeafSpec]) -> list[Difference]:
    """Every leaf of the checkpoint (`written`) that the reader (`expected`) would not restore as written."""
    found = []
    for path in sorted(written.keys() | expected.keys()):
        w, e = written.get(path), expected.get(path)
        if w is None:
            found.append(Difference(path, Kind.MISSING, None, e))
        elif e is None:
            found.append(Difference(path, Kind.DROPPED, w, None))
        elif tuple(w.shape) != tuple(e.shape):
            found.append(Difference(path, Kind.SHAPE, w, e))
        elif w.dtype != e.dtype:
            found.append(Difference(path, Kind.DTYPE, w, e))
    return sorted(found, key=lambda d: list(Kind).index(d.kind))


def message(found: list[Difference], writer: str, reader: str, shown: int = 12) -> str:
    """One paragraph: which leaves, what was written and what is expected, and what the team can do."""
    if not found:
        return f"the checkpoint {writer} wrote restores into {reader} leaf for leaf"
    kinds = list(dict.fromkeys(d.kind for d in found))
    effect = {Kind.MISSING: "fails", Kind.SHAPE: "fails", Kind.DTYPE: "only works by casting",
              Kind.DROPPED: "only works by dropping"}
    how = " and ".join(dict.fromkeys(effect[k] for k in kinds))
    lines = [d.text() for d in found[:shown]]
    more = f"; and {len(found) - shown} more" if len(found) > shown else ""
    advice = " ".join(f"[{k}] {ADVICE[k]}." for k in kinds)
    return (f"a checkpoint written by {writer} restored into {reader} {how} for {len(found)} "
            f"{'leaves' if len(found) != 1 else 'leaf'}: " + "; ".join(lines) + more + f". What you can do: {advice}")


def layout(specs: dict[str, LeafSpec]) -> list[list]:
    """[path, dtype, shape] per leaf, sorted: the form the verdict reads as a state layout."""
    return [[path, spec.dtype, list(spec.shape)] for path, spec in sorted(specs.items())]
