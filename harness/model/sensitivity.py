"""The report of `nox -s sensitivity` (reports/sensitivity.json): each judged mutant and its outcome.

The tallies are derived from the mutants, never stored apart from them, so reports of shards of one run
merge by putting their mutants together.
"""

from __future__ import annotations

import dataclasses
import enum

SCHEMA_VERSION = 1


class MutantOutcome(enum.StrEnum):
    KILLED = "killed"  # a contract failed (or the suite could not import the mutated optax)
    SURVIVED = "survived"  # every contract of the module's families passed
    TIMEOUT = "timeout"  # the contracts ran past the per-mutant timeout: counted as noticed
    EQUIVALENT = "equivalent"  # listed in harness/sensitivity/equivalent.toml: not run, not scored
    ERROR = "error"  # cosmic-ray could not apply or test it: scored as not noticed


NOTICED = (MutantOutcome.KILLED, MutantOutcome.TIMEOUT)


@dataclasses.dataclass(frozen=True)
class Mutant:
    module: str  # relative to site-packages
    operator: str  # cosmic-ray's operator name
    occurrence: int
    line: int
    outcome: MutantOutcome
    change: str  # the diff on one line: "L57: `a < b` -> `a <= b`"
    families: list[str]  # the contract families run against it
    note: str = ""  # an equivalent mutant's reason; the end of the test output for an error


@dataclasses.dataclass(frozen=True)
class Tally:
    killed: int
    survived: int
    timeout: int
    error: int
    equivalent: int
    scored: int  # the non-equivalent mutants judged: the score's denominator
    score: float | None  # (killed + timeout) / scored; None when nothing was scored


def tally(mutants: list[Mutant]) -> Tally:
    counts = {outcome: 0 for outcome in MutantOutcome}
    for mutant in mutants:
        counts[mutant.outcome] += 1
    scored = sum(counts.values()) - counts[MutantOutcome.EQUIVALENT]
    noticed = sum(counts[o] for o in NOTICED)
    return Tally(**{outcome.value: count for outcome, count in counts.items()}, scored=scored,
                 score=round(noticed / scored, 4) if scored else None)


@dataclasses.dataclass(frozen=True)
class Selection:
    sample: int | None  # None: every mutant
    seed: int
    shard: str  # "1/1" for the whole selection
    modules: list[str] = dataclasses.field(default_factory=list)  # judged only these modules' mutants ([]: all)


@dataclasses.dataclass(frozen=True)
class SensitivityReport:
    started_at: str
    finished_at: str
    optax: str  # the baseline's optax version, whose modules were mutated
    cosmic_ray: str
    selection: Selection
    mutants_found: int  # every mutant cosmic-ray made of the modules in scope, outside_scope's included
    seconds: float  # wall time of the mutants' runs (setup and baseline runs not counted)
    workers: int
    mutants: list[Mutant]
    summary: Tally  # tally(mutants), stored for readers of the JSON
    # module -> its mutants outside the lines of its in-scope callables (scope.IN_SCOPE_LINES_ONLY): not judged
    outside_scope: dict[str, int] = dataclasses.field(default_factory=dict)
    # the packages whose modules were mutated (optax, flax, jax) -> the baseline's version of each; {} in a report
    # written before the tool mutated Flax's and JAX's modules (optax's version alone then, in `optax`)
    libraries: dict[str, str] = dataclasses.field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION


def report(mutants: list[Mutant], **fields) -> SensitivityReport:
    """The report of these mutants, its summary computed from them."""
    return SensitivityReport(mutants=mutants, summary=tally(mutants), **fields)
