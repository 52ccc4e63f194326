"""A mutant's stable name, and the seeded sample of mutants a run judges.

cosmic-ray names its work items with random job ids, new at every `init`; a mutant is named here by
what it is instead: the module, cosmic-ray's operator and the occurrence of that operator in the module
(cosmic-ray's own enumeration, fixed by the pinned cosmic-ray and the baseline's optax), plus the line for
people. The sample is drawn from all mutants, equivalent ones included, so listing a mutant as equivalent
never changes which others are drawn.
"""

from __future__ import annotations

import dataclasses
import random

from harness.errors import HarnessError


@dataclasses.dataclass(frozen=True, order=True)
class MutantId:
    module: str  # relative to site-packages: optax/transforms/_clipping.py
    operator: str  # cosmic-ray's operator name: core/ReplaceBinaryOperator_Add_Sub
    occurrence: int  # which match of that operator in the module, from 0
    line: int = dataclasses.field(compare=False)  # where the mutated code starts, from 1

    @property
    def key(self) -> str:
        return f"{self.module}:{self.operator}:{self.occurrence}"

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.operator} #{self.occurrence}"


@dataclasses.dataclass(frozen=True)
class Selection:
    """Which mutants run: `sample` of N mutants drawn with `seed` (None: all of them)."""

    sample: int | None = None
    seed: int = 0
    shard: tuple[int, int] = (0, 1)  # (index, count): this runner's share of the selected mutants

    def apply(self, mutants: list[MutantId]) -> list[MutantId]:
        """The selected mutants in their stable order: the same for the same mutants, whatever order
        cosmic-ray listed them in."""
        ordered = sorted(set(mutants))
        if self.sample is not None:
            if self.sample < 1:
                raise HarnessError(f"--sample must be at least 1, not {self.sample}")
            drawn = random.Random(self.seed).sample(ordered, min(self.sample, len(ordered)))
            ordered = sorted(drawn)
        index, count = self.shard
        return ordered[index::count]


def parse_shard(text: str) -> tuple[int, int]:
    """"2/4" -> (1, 4): the second of four shards; HarnessError saying the form otherwise."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise HarnessError(f"cannot read shard {text!r}: give I/N, e.g. 1/4 for the first of four") from None
    if not 1 <= index <= count:
        raise HarnessError(f"shard {text!r}: I must be between 1 and N")
    return index - 1, count
