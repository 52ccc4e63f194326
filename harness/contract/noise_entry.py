"""A golden entry's measured noise as the golden file holds it: beside the value, never part of it, so a recording
that measures it anew changes no value. Two kinds: the stack's numerical noise (harness.numerical_noise, a number)
and the host noise per dimension (harness.host_emulation, {dimension: move})."""

from __future__ import annotations

from harness import golden_layout
from harness.host_emulation import HOST_NOISE

NOISE = "noise"  # the entry's field: the largest move under the perturbed compilations, absolute
FIELDS = golden_layout.MEASURED_NOISE  # (NOISE, HOST_NOISE), as the host reads them (harness.stack.run.golden_changes)


without_noise = golden_layout.without_noise  # what a recording compares to tell a changed value


def normalized(entry):
    """The entry as it is written: a host noise measured as no move at all (an empty one) is left out."""
    if isinstance(entry, dict) and entry.get(HOST_NOISE) == {}:
        return {k: v for k, v in entry.items() if k != HOST_NOISE}
    return entry


def kept_noise(old, new):
    """`new` as it is written: when it records the same value as `old`, with `old`'s noise of each kind it did not
    measure itself (a host noise measured as no move, `{}`, was measured: `old`'s is not kept)."""
    if not (isinstance(old, dict) and isinstance(new, dict)) or without_noise(old) != without_noise(new):
        return normalized(new)
    kept = {f: old[f] for f in FIELDS if f in old and f not in new}
    return normalized({**new, **kept})


def noise_only(old, new) -> bool:
    """The same value recorded again with its noise measured anew, and other than the file holds: not a change
    to accept, but the file is written."""
    return (isinstance(old, dict) and isinstance(new, dict) and without_noise(old) == without_noise(new)
            and kept_noise(old, new) != old)
