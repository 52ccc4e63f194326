"""Which built-in contract modules a team's run takes, and why.

In report mode the built-in contracts decide nothing, so a team's run takes only the families that cover
what its code calls: each Optax callable it uses names, through the coverage ledger, the families whose
contracts exercise it (and what it builds on: adamw -> add_decayed_weights -> masks). The families the
ledger does not name follow a library use of their own (RULES): Flax NNX training, checkpointing,
data-parallel sharding. Families that need Flax never run for a team whose code does not import it (its
baseline need not pin flax, and its entries may not install it). `--builtin all` takes every family.
"""

from __future__ import annotations

import dataclasses
import enum

from harness import builtin_families as families
from harness import devices
from harness.stack.selection import builtin_modules, ledger_families
from harness.stack.selection.team_code import TeamCode, Use


class Scope(enum.StrEnum):
    """Which built-in families a run takes."""

    USED = "used"  # those covering what the team's code calls (report mode's default)
    ALL = "all"  # every family (judge mode; `--builtin all`; this checkout)


@dataclasses.dataclass(frozen=True)
class Rule:
    """A family that runs for code using one of `prefixes` (harness.builtin_families: Family.uses), beside the
    families the ledger's callables take."""

    family: str
    prefixes: tuple[str, ...]


RULES = tuple(Rule(f.name, f.uses) for f in families.FAMILIES if f.uses)  # declared in harness/builtin_families.py


@dataclasses.dataclass(frozen=True)
class Chosen:
    family: str
    because: Use  # the team's first use of a name it covers


@dataclasses.dataclass(frozen=True)
class Selection:
    """The built-in families a team's run takes, the modules pytest runs, and why."""

    scope: Scope
    chosen: tuple[Chosen, ...]  # USED: each family taken, with its reason (ALL: empty)
    modules: tuple[str, ...]  # the main pytest process's modules (the data-parallel family runs apart)
    families: tuple[str, ...]  # every family taken, the data-parallel one included
    skipped: tuple[str, ...]  # families not taken
    without_flax: tuple[str, ...]  # families left out because the team's code does not import flax

    def runs(self, family: str) -> bool:
        return family in self.families

    def line(self) -> str:
        """One line for the verdict: what ran and why."""
        if self.scope == Scope.ALL:
            said = "built-in contracts run: every family"
        elif self.chosen:
            said = "built-in contracts run for what your code calls: " + ", ".join(
                f"{c.family} ({c.because.name} at {c.because.where})" for c in self.chosen)
        else:
            said = "built-in contracts run for what your code calls: none (it calls no callable they cover)"
        if self.skipped and self.scope == Scope.USED:
            said += f"; not run: {', '.join(self.skipped)} (`--builtin all` runs them)"
        if self.without_flax:
            said += (f"; your code does not import flax: {', '.join(self.without_flax)} do not run (and flax need "
                     "not be pinned)")
        return said


def _matches(use: str, callable_name: str) -> bool:
    """`optax.MultiSteps` as called, or under a submodule (`optax.transforms.MultiSteps`)."""
    if use == callable_name or use.startswith(callable_name + "."):
        return True
    return use.startswith("optax.") and use.rsplit(".", 1)[-1] == callable_name.rsplit(".", 1)[-1]


def _used(code: TeamCode, ledger: dict[str, frozenset[str]]) -> dict[str, Use]:
    """Family -> the first use that takes it."""
    found: dict[str, Use] = {}
    for use in code.uses:
        for name, families in ledger.items():
            if _matches(use.name, name):
                for family in sorted(families):
                    found.setdefault(family, use)
    for rule in RULES:
        first = code.first(rule.prefixes)
        if first is not None:
            found.setdefault(rule.family, first)
    return found


def select(scope: Scope, code: TeamCode | None, modules: tuple[builtin_modules.BuiltinModule, ...] | None = None,
           ledger: dict[str, frozenset[str]] | None = None) -> Selection:
    """The selection for a team whose code is `code` (None: this checkout, which runs everything)."""
    modules = builtin_modules.modules() if modules is None else modules
    every = tuple(dict.fromkeys(m.family for m in modules))
    flax_ok = code is None or code.imports_flax
    without_flax = () if flax_ok else tuple(dict.fromkeys(m.family for m in modules if m.needs_flax))
    chosen: dict[str, Use] = {}
    if scope == Scope.USED and code is not None:
        chosen = _used(code, ledger_families.families_by_callable() if ledger is None else ledger)
        wanted = set(chosen)
    else:
        wanted = set(every)
    taken = [m for m in modules if m.family in wanted and m.family not in without_flax]
    families = tuple(dict.fromkeys(m.family for m in taken))
    return Selection(
        scope=scope if code is not None else Scope.ALL,
        chosen=tuple(Chosen(f, chosen[f]) for f in families if f in chosen),
        modules=tuple(m.name for m in taken if m.family != devices.FAMILY),
        families=families,
        skipped=tuple(f for f in every if f not in families and f not in without_flax),
        without_flax=without_flax)
