"""A golden entry's measured numerical noise (harness.contract.noise) as the golden file holds it: beside the
value, never part of it, so a recording that measures it anew changes no value."""

from __future__ import annotations

NOISE = "noise"  # the entry's field: the largest move under the perturbed compilations, absolute


def without_noise(entry):
    """A golden entry without its measured noise: what a recording compares to tell a changed value."""
    return {k: v for k, v in entry.items() if k != NOISE} if isinstance(entry, dict) and NOISE in entry else entry


def kept_noise(old, new):
    """`new`, with `old`'s noise when it records the same value without a noise of its own."""
    if (isinstance(old, dict) and isinstance(new, dict) and NOISE in old and NOISE not in new
            and without_noise(old) == new):
        return {**new, NOISE: old[NOISE]}
    return new


def noise_only(old, new) -> bool:
    """The same value recorded again with its noise measured (anew): not a change to accept."""
    return NOISE in new and old != new and without_noise(old) == without_noise(new)
