"""The (rtol, atol) pair with which numpy.testing.assert_allclose reproduces an ulps comparison.

An ulps comparison (harness.contract.measure) allows each element its own error, allowed[i];
assert_allclose(observed, expected, rtol, atol) allows atol + rtol * |expected[i]| at every element. No
single pair equals every allowance, so the pair recorded is the one that never rejects what the
comparison accepts and is tight at the comparison's loosest element:

* rtol: the largest allowed[i] / |expected[i]| over the elements whose ulps are taken at their own
  value (a normal expected value, no cancellation scale above it), rounded up so that
  rtol * |expected[i]| is never below allowed[i] in float64;
* atol: the largest allowed[i] over the other finite elements, where an allowance relative to the
  value means nothing: an expected zero or subnormal (the smallest normal's spacing, or the smallest
  normal itself where XLA flushes), and an element whose ulps are taken at its operands' scale;
* NaN and infinities: both require the same value (assert_allclose's equal_nan is on by default).

So, on the float64 values the report and the golden file hold, assert_allclose with the pair passes
wherever the comparison passes. At the element that sets rtol it allows that element's allowance plus
atol, at the element that sets atol that allowance plus rtol * |expected|: there a value one ulp of the
dtype outside the allowance fails whenever the other term is below that ulp (always when atol is 0).
Elsewhere it is looser, up to about twice an element's allowance (an ulp is relative to its binade,
not to the value). Compare the float64 values: in a 16-bit dtype assert_allclose rounds its own bound.
"""

from __future__ import annotations

import numpy as np

from harness.model.allclose import AllClose

EXACT = AllClose(rtol=0.0, atol=0.0)  # an exact numeric comparison: |observed - expected| <= 0


def pair(expected, allowed, relative) -> AllClose:
    """The pair for one ulps comparison: `allowed` per element, `relative` where its ulps are taken at
    the element's own normal value."""
    size = np.abs(np.asarray(expected, np.float64)).ravel()
    allowed = np.asarray(allowed, np.float64).ravel()
    finite = np.isfinite(size)
    rel = np.asarray(relative, bool).ravel() & finite & (size > 0)
    rtol = 0.0
    if rel.any():
        rtol = float((allowed[rel] / size[rel]).max())
        while np.any(rtol * size[rel] < allowed[rel]):  # the quotient rounded down: one float64 step up
            rtol = float(np.nextafter(rtol, np.inf))
    rest = finite & ~rel
    return AllClose(rtol=rtol, atol=float(allowed[rest].max()) if rest.any() else 0.0)


def loosest(a: AllClose | None, b: AllClose | None) -> AllClose | None:
    """One pair for repeated comparisons (a property's examples): each example's pair is within it."""
    if a is None or b is None:
        return a or b
    return AllClose(rtol=max(a.rtol, b.rtol), atol=max(a.atol, b.atol))
