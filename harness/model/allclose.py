"""The tolerance of a comparison as numpy.testing.assert_allclose states it, beside the ulps.

A reviewer re-checks a comparison with the tools they know: `assert_allclose(observed, expected,
rtol=rtol, atol=atol)` on the values the report and the golden file hold (float64) passes wherever the
comparison passes, and at the comparison's loosest element it allows no more than that element's ulps
allowance (harness.contract.allclose says how the pair is derived and what it reproduces).
"""

from __future__ import annotations

import dataclasses
import decimal


@dataclasses.dataclass(frozen=True)
class AllClose:
    """The (rtol, atol) with which assert_allclose reproduces one comparison's judgement."""

    rtol: float  # the loosest allowance relative to its value, over elements whose ulps are taken at their value
    atol: float  # the loosest allowance of the others: expected zero or subnormal, or ulps taken at a scale

    @property
    def shown(self) -> str:
        """`rtol=9.54e-07, atol=0`: 3 digits, rounded up, so the pair as read never rejects what the
        comparison accepts (the report keeps the exact numbers)."""
        return f"rtol={_up(self.rtol)}, atol={_up(self.atol)}"


def _up(x: float) -> str:
    near = f"{x:.3g}"
    if float(near) >= x:  # reads back as x or above
        return near
    exact = decimal.Decimal(x)
    step = exact.adjusted() - 2  # keep 3 significant digits
    return f"{float(exact.scaleb(-step).to_integral_value(rounding=decimal.ROUND_CEILING).scaleb(step)):.3g}"
