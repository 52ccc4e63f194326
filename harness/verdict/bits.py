"""Which observed values moved between two entries, bit for bit, and by how many ulps.

Pure Python (struct), no NumPy: the host judges reports without the stack. A move is counted in
ulps of the value's own dtype as the number of representable values between the baseline's value
and the entry's (0 for -0.0 against 0.0, which is counted as a sign flip instead).
"""

from __future__ import annotations

import math
import struct

from harness.model.enums import ComparisonKind
from harness.model.float_formats import number
from harness.model.report import CheckRecord, Comparison
from harness.model.verdict import BitsMoved

# dtype -> (struct format of the float, struct format of the same-width signed integer, shift)
_FLOAT_FORMATS = {"float64": ("<d", "<q", 0), "float32": ("<f", "<i", 0), "float16": ("<e", "<h", 0),
                  "bfloat16": ("<f", "<i", 16)}  # bfloat16 is the top half of a float32


def _ordered(value: float, dtype: str) -> int:
    """The value's bits as an integer that grows with the value (sign-magnitude made monotonic)."""
    float_fmt, int_fmt, shift = _FLOAT_FORMATS[dtype]
    bits = struct.unpack(int_fmt, struct.pack(float_fmt, value))[0] >> shift
    width = struct.calcsize(int_fmt) * 8 - shift
    magnitude = bits & ((1 << (width - 1)) - 1)
    return -magnitude if bits < 0 else magnitude


def ulps_between(a: float, b: float, dtype: str) -> int:
    if dtype not in _FLOAT_FORMATS:  # integers and booleans: the difference itself
        return abs(int(a) - int(b))
    return abs(_ordered(a, dtype) - _ordered(b, dtype))


def _relation(base: Comparison, other: Comparison) -> tuple[list[str], list[str]]:
    """For two library paths held equal (an equivalence comparison): now bit-identical, or no longer (not where
    either side judged a departure's recorded values instead: its error is from those, not the other path)."""
    paths = (base.kind, other.kind) == (ComparisonKind.EQUIVALENCE, ComparisonKind.EQUIVALENCE)
    if not paths or base.max_abs_err is None or other.max_abs_err is None:
        return [], []
    if base.max_abs_err > 0 and other.max_abs_err == 0:
        return [base.label], []
    if base.max_abs_err == 0 and other.max_abs_err > 0:
        return [], [base.label]
    return [], []


def _comparable(base: Comparison, other: Comparison) -> int:
    """How many values of a comparison are set bit for bit against the baseline's (both kept exactly)."""
    b, o = base.values, other.values
    if b is None or o is None or b.values is None or o.values is None or b.dtype != o.dtype or b.shape != o.shape:
        return 0
    return len(b.values)


def _moved(base: Comparison, other: Comparison) -> BitsMoved | None:
    now_identical, now_differ = _relation(base, other)
    b, o = base.values, other.values
    if b is None or o is None or b.digest == o.digest:
        if now_identical or now_differ:  # the other path moved
            return BitsMoved(0, 0, None, base.label, 0, 0, 0, 0, now_identical, now_differ)
        return None
    if b.values is None or o.values is None or b.dtype != o.dtype or b.shape != o.shape:
        return BitsMoved(values=0, compared=0, max_ulps=None, largest=base.label, sign_flips=0,
                         nonfinite_appeared=0, nonfinite_vanished=0, digests_changed=1,
                         paths_now_identical=now_identical, paths_now_differ=now_differ)
    changed = flips = appeared = vanished = 0
    worst = 0
    counts_ulps = base.kind != ComparisonKind.BOUND  # a bound's statistic: its draws are not ulps apart
    for x, y in zip(map(number, b.values), map(number, o.values)):
        same = (x == y and math.copysign(1, x) == math.copysign(1, y)) or (math.isnan(x) and math.isnan(y))
        if same:
            continue
        changed += 1
        if x == y == 0:
            flips += 1
        elif math.isfinite(x) and not math.isfinite(y):
            appeared += 1
        elif not math.isfinite(x) and math.isfinite(y):
            vanished += 1
        elif math.isfinite(x) and math.isfinite(y) and counts_ulps:
            worst = max(worst, ulps_between(y, x, b.dtype))
    return BitsMoved(values=changed, compared=len(b.values), max_ulps=worst, largest=base.label, sign_flips=flips,
                     nonfinite_appeared=appeared, nonfinite_vanished=vanished, digests_changed=0,
                     paths_now_identical=now_identical, paths_now_differ=now_differ)


def moved(base: CheckRecord, other: CheckRecord) -> BitsMoved | None:
    """The check's comparisons whose observed values differ, summed; None when none moved.

    Comparisons made more than once in a check (a property's examples keep only the worst) are
    not comparable value for value and are left out.
    """
    before = {c.label: c for c in base.comparisons if c.count == 1}
    pairs = [(before[c.label], c) for c in other.comparisons if c.count == 1 and c.label in before]
    parts = [m for b, o in pairs for m in [_moved(b, o)] if m is not None]
    if not parts:
        return None
    largest = max(parts, key=lambda m: m.max_ulps or 0)
    return BitsMoved(  # compared: every value set against the baseline's, the unmoved comparisons' too
        values=sum(m.values for m in parts), compared=sum(_comparable(b, o) for b, o in pairs), max_ulps=largest.max_ulps,
        largest=largest.largest, sign_flips=sum(m.sign_flips for m in parts),
        nonfinite_appeared=sum(m.nonfinite_appeared for m in parts),
        nonfinite_vanished=sum(m.nonfinite_vanished for m in parts),
        digests_changed=sum(m.digests_changed for m in parts),
        paths_now_identical=[label for m in parts for label in m.paths_now_identical],
        paths_now_differ=[label for m in parts for label in m.paths_now_differ],
    )


def describe(bits: BitsMoved) -> str:
    """One line: how many values moved, the largest move and where, sign flips, NaN/inf."""
    parts = []
    if bits.compared:
        parts.append(f"{bits.values} of {bits.compared} values changed bits")
    if bits.max_ulps:
        parts.append(f"max {bits.max_ulps} ulp ({bits.largest})")
    if bits.sign_flips:
        parts.append(f"{bits.sign_flips} zeros changed sign")
    if bits.nonfinite_appeared:
        parts.append(f"NaN/inf appeared in {bits.nonfinite_appeared}")
    if bits.nonfinite_vanished:
        parts.append(f"NaN/inf vanished in {bits.nonfinite_vanished}")
    if bits.digests_changed:
        parts.append(f"{bits.digests_changed} large arrays changed (digest)")
    if bits.paths_now_identical:
        parts.append("now bit-identical: " + ", ".join(bits.paths_now_identical))
    if bits.paths_now_differ:
        parts.append("no longer bit-identical: " + ", ".join(bits.paths_now_differ))
    return "; ".join(parts)


def summary_line(changes: list) -> str | None:
    """'N values in M checks changed bits (max K ulp: check label)' over changes marked bits-changed."""
    moved_checks = [c for c in changes if c.bits is not None]
    if not moved_checks:
        return None
    values = sum(c.bits.values for c in moved_checks)
    worst = max(moved_checks, key=lambda c: c.bits.max_ulps or 0)
    checks = len(moved_checks)
    line = f"{values} value{'s' * (values != 1)} in {checks} check{'s' * (checks != 1)} changed bits"
    if worst.bits.max_ulps:
        line += f" (max {worst.bits.max_ulps} ulp: {worst.check_id} {worst.bits.largest})"
    flips = sum(c.bits.sign_flips for c in moved_checks)
    return line + (f"; {flips} zeros changed sign" if flips else "")
