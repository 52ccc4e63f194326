"""The values a comparison observed: exactly (small arrays), as a summary (large ones), and, when it failed,
the element furthest outside its tolerance. Part of the session report (harness.model.report)."""

from __future__ import annotations

import dataclasses

from harness.model.fields import Json, optional as _optional
from harness.model.host import Dimension


@dataclasses.dataclass(frozen=True)
class ValuesSummary:
    """What a report says of an array too large to keep whole."""

    min: float | None  # of the finite values
    max: float | None
    nan: int
    posinf: int
    neginf: int
    negative_zeros: int


@dataclasses.dataclass(frozen=True)
class ObservedValues:
    """The values a comparison observed, exactly, so entries can be compared bit for bit."""

    dtype: str
    shape: list[int]
    digest: str  # of the exact values: equal digests, equal bits (the sign of zero included)
    values: list[Json] | None = _optional()  # exact, flat (harness.contract.encoding), for small arrays
    summary: ValuesSummary | None = _optional()  # instead of the values, for large arrays


@dataclasses.dataclass(frozen=True)
class WorstElement:
    """The element of a failing numeric comparison furthest outside its tolerance: where, and its two values
    exactly (NaN and infinities as "nan", "inf", "-inf"), so a verdict can say before -> after of any array."""

    index: list[int]  # its position in the array ([] for a scalar)
    expected: Json
    observed: Json
    ulps: float | None  # |observed - expected| in ulps of the tolerance's dtype at the expected value


@dataclasses.dataclass(frozen=True)
class NoiseJudgement:
    """A golden comparison outside its golden ulps, judged against the numerical noise the baseline measured for
    its key (harness.numerical_noise): on another stack than the recording's, a move within `allowed` is noise."""

    measured: float  # the largest move of any element under the perturbed compilations, absolute
    allowed: float  # factor x measured: the move allowed on another stack, absolute
    used: float  # the largest move / allowed (<= 1: within the noise)
    within: bool  # every element within max(its golden ulps, allowed)


@dataclasses.dataclass(frozen=True)
class HostDrift:
    """A golden comparison on a host that differs from its recording's, of a value the recording measured host
    noise for in the dimensions that differ (harness.host_emulation): how far it is from its recording against
    what that host may explain. Outside its golden ulps but within the allowance, the value is host drift: the
    check passes, and the verdict judges the other entries' values of this key against this machine's baseline
    values (harness.verdict.host_drift), never against the allowance. Its values are kept exactly."""

    dimensions: list[Dimension]  # the dimensions that differ from the recording's host and hold noise for the key
    measured: float  # the largest host noise of those dimensions, absolute
    allowed: float  # factor x measured: the move a host may explain, absolute
    used: float  # the largest move / allowed (<= 1: within what the host explains)
    within: bool  # every element within the larger of its golden ulps and the allowed move
    outside_ulps: bool  # some element outside its golden ulps (and any numerical noise its run allows): drift if within
    recorded_on: str  # the recording host, in words (harness.model.host.Host.text)
    scale: list[float] | None = _optional()  # the comparison's operand scale per element, when it had one
    # On another stack than the recording's: the move its numerical noise allows (harness.numerical_noise), which
    # a differential comparison on this host allows too.
    noise_allowed: float | None = _optional()

    @property
    def drifted(self) -> bool:
        """Outside its golden ulps, within what the host explains."""
        return self.within and self.outside_ulps
