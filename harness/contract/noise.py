"""A golden value's noise: measured when it is recorded, allowed when another stack (its numerical noise) or
another host (its host noise) recomputes it.

harness.numerical_noise and harness.host_emulation say why and how each is measured. Here: the noise of one key
from the values the perturbed compilations or emulated hosts recorded (`measured`), and a golden comparison
outside its ulps judged again against it (`rejudged`, `host_judged`). Pure NumPy.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from harness import host_emulation, numerical_noise
from harness.contract.encoding import decode_array, observed as observed_values
from harness.contract.golden import GoldenProblem, GoldenStore
from harness.contract.noise_entry import NOISE, without_noise
from harness.contract.measure import compare_close, errors
from harness.host_emulation import HOST_NOISE
from harness.model.report import Comparison, HostDrift, NoiseJudgement, Tolerance


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


def with_noise(store: GoldenStore, family: str, key: str, entry: dict, value: np.ndarray,
               check_id: str | None = None) -> dict:
    """A recording's golden `entry` for `value` with its noise, when the perturbed runs recorded the key, and its
    host noise, when the emulated hosts did (`{}` where none moved it: measured, and left out of the file). A
    dimension whose runs left the check (`check_id`) out by the measured map keeps the noise the file holds for
    the value while it is recorded the same (none: the map left it out because no host had moved it)."""
    if store.perturbed:
        store.noise_keys.add((family, key))
        found = measured(observed_in(store.perturbed_entries(family, key)), value)
        entry = entry if found is None else {**entry, NOISE: found}
    if store.emulated:
        store.host_noise_keys.add((family, key))
        left = {d for d, ids in store.host_left_out.items() if check_id in ids}
        if left == set(store.emulated):
            store.left_out_keys.add((family, key))
        moves = {dimension: measured(observed_in(store.perturbed_entries(family, key, stores)), value)
                 for dimension, stores in store.emulated.items() if dimension not in left}
        kept = unmeasured_host_noise(store, family, key, entry, {str(d) for d in store.emulated if d not in left})
        if any(move is not None for move in moves.values()) or kept:  # some emulated host reached it
            entry = {**entry, HOST_NOISE: dict(sorted({**kept, **{str(d): move for d, move in moves.items()
                                                                    if move}}.items()))}
    return entry


def unmeasured_host_noise(store: GoldenStore, family, key: str, entry: dict, measured_here: set[str]) -> dict:
    """The host noise the family's file holds for `key` in the dimensions this recording did not emulate (measured
    on another host: `golden --measure-host`), while the value is recorded the same: a recording that cannot
    measure a dimension keeps what a host that could measured."""
    try:
        old = store._load(family, kept_only=True)["values"].get(key)
    except GoldenProblem:
        return {}
    if not isinstance(old, dict) or without_noise(old) != without_noise(entry):
        return {}
    noise = old.get(HOST_NOISE)
    return {d: move for d, move in noise.items() if d not in measured_here} if isinstance(noise, dict) else {}


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


def host_judged(store: GoldenStore, family, entry: dict, found: Comparison, observed, expected, scale) -> Comparison:
    """A golden comparison on a host that differs from its recording's in dimensions its entry holds host noise
    for (harness.host_emulation), with its judgement and its values kept exactly, whatever their size (the
    verdict judges another entry's against them): outside its ulps but within FACTOR times that noise (and the
    numerical noise it may move by on another stack), host drift, passed; beyond it, still failing. Any other
    comparison as it is."""
    if not isinstance(found.tolerance, Tolerance) or found.max_abs_err is None:
        return found
    allowed, dimensions = host_emulation.allowance(entry.get(HOST_NOISE), store.host_differences(family))
    if not dimensions:
        return found
    noise = recorded(entry) if store.across_stacks(family) else None
    noise_allowed = None if noise is None else numerical_noise.FACTOR * noise
    outside_ulps = not found.passed  # its golden ulps (on another stack, its numerical noise: judged) do not hold it
    within = not outside_ulps or compare_close(found.kind, found.label, observed, expected, found.tolerance,
                                              found.dtype, scale, keep_values=False,
                                              absolute=max(allowed, noise_allowed or 0.0)).passed
    per_element = None if scale is None else np.broadcast_to(np.asarray(scale, np.float64), np.shape(observed))
    drift = HostDrift(dimensions=dimensions, measured=allowed / host_emulation.FACTOR, allowed=allowed,
                      used=min(found.max_abs_err / allowed, 1e9), within=within, outside_ulps=outside_ulps,
                      recorded_on=_recorded_on(store, family), noise_allowed=noise_allowed,
                      scale=None if per_element is None else [float(x) for x in per_element.ravel()])
    if found.values is not None and found.values.values is None:  # a large array's digest: the values themselves
        found = dataclasses.replace(found, values=observed_values(observed, exact=True))
    if outside_ulps and within:
        return dataclasses.replace(found, passed=True, host=drift, message="")
    return dataclasses.replace(found, host=drift)


def _recorded_on(store: GoldenStore, family) -> str:
    recorded = store.recording_host(family)
    return recorded.text() if recorded is not None else "a host its golden file does not name"
