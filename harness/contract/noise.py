"""A golden value's numerical noise: measured when it is recorded, allowed when another stack recomputes it.

harness.numerical_noise says why and how it is measured. Here: the noise of one key from the values the
perturbed compilations recorded (`measured`), and a golden comparison outside its ulps judged again against it
(`rejudged`). Pure NumPy.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from harness import numerical_noise
from harness.contract.encoding import decode_array
from harness.contract.golden import GoldenStore
from harness.contract.noise_entry import NOISE
from harness.contract.measure import compare_close, errors
from harness.model.report import Comparison, NoiseJudgement, Tolerance


def measured(observed: list[np.ndarray], value) -> float | None:
    """The largest absolute move of any element of `value` in the perturbed runs' `observed` values; None when
    none of them observed it comparably (another shape, a non-finite move)."""
    value = np.asarray(value)
    moves = []
    for other in observed:
        if other.shape != value.shape:
            continue
        abs_err, _ = errors(other, value)
        if abs_err.size and not np.isfinite(abs_err).all():
            continue
        moves.append(float(abs_err.max()) if abs_err.size else 0.0)
    return max(moves) if moves else None


def observed_in(entries: list[dict | None]) -> list[np.ndarray]:
    """The arrays the perturbed runs recorded for one key (None where a run did not record it)."""
    found = []
    for entry in entries:
        if entry is None or "values" not in entry:
            continue
        try:
            found.append(decode_array(entry))
        except (KeyError, TypeError, ValueError):
            continue
    return found


def rejudged(failed: Comparison, observed, expected, noise: float, dtype: str, scale=None) -> Comparison:
    """`failed` (a golden comparison outside its ulps, made on another stack than the recording's) with its
    noise judgement: when every element is within max(its golden allowance, FACTOR x `noise`), it passes as
    noise; the comparison's other fields still describe its golden ulps."""
    if not isinstance(failed.tolerance, Tolerance) or failed.max_abs_err is None:
        return failed  # a shape or dtype change: no noise makes it the same value
    allowed = numerical_noise.FACTOR * noise
    again = compare_close(failed.kind, failed.label, observed, expected, failed.tolerance, dtype, scale,
                          keep_values=False, absolute=allowed)
    used = failed.max_abs_err / allowed if allowed > 0 else 1e9
    judgement = NoiseJudgement(measured=noise, allowed=allowed, used=min(used, 1e9), within=again.passed)
    if not again.passed:
        return dataclasses.replace(failed, noise=judgement)
    return dataclasses.replace(failed, passed=True, noise=judgement, message="")


def with_noise(store: GoldenStore, family: str, key: str, entry: dict, value: np.ndarray) -> dict:
    """A recording's golden `entry` for `value` with its noise, when the perturbed runs recorded the key."""
    if not store.perturbed:
        return entry
    store.noise_keys.add((family, key))
    found = measured(observed_in(store.perturbed_entries(family, key)), value)
    return entry if found is None else {**entry, NOISE: found}


def judged(store: GoldenStore, family: str, entry: dict, failed: Comparison, observed, expected, scale) -> Comparison:
    """A golden comparison outside its ulps judged against its recorded noise when this stack is another than its
    recording's; any other (one that passed, the same stack, no noise recorded) as it is."""
    noise = recorded(entry)
    if failed.passed or noise is None or not store.across_stacks(family):
        return failed
    return rejudged(failed, observed, expected, noise, failed.dtype, scale)


def recorded(entry: dict) -> float | None:
    """The noise a golden entry holds (a number), or None when none was measured."""
    noise = entry.get(NOISE)
    return float(noise) if isinstance(noise, (int, float)) and not isinstance(noise, bool) and noise >= 0 else None
