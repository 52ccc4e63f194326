"""Which built-in contracts a team's run takes, and why.

In report mode the built-in contracts decide nothing, so a team's run takes only the tests whose subject is
what its code calls: each Optax callable it uses names, through the coverage ledger, the tests that exercise
it and the check of its defaults (and, for a callable outside the ledger's scope, those of what it builds on:
[built_on]). Those tests' families run in part: pytest deselects their other tests at collection
(harness.contract.plugin, told the kept tests in the entry's job). The families the ledger does not name
follow a library use of their own (RULES) and run whole (they are small): Flax NNX training, checkpointing,
data-parallel sharding. Families that need Flax never run for a team whose code does not import it (its
baseline need not pin flax, and its entries may not install it). `--builtin all` takes every family whole.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter

from harness import builtin_families as families
from harness import devices
from harness.stack.selection import builtin_modules, ledger_families
from harness.stack.selection.team_code import TeamCode, Use


class Scope(enum.StrEnum):
    """Which built-in families a run takes."""

    USED = "used"  # the tests covering what the team's code calls (report mode's default)
    ALL = "all"  # every family (judge mode; `--builtin all`; this checkout)


@dataclasses.dataclass(frozen=True)
class Rule:
    """A family that runs whole for code using one of `prefixes` (harness.builtin_families: Family.uses), beside
    the tests the ledger's callables take."""

    family: str
    prefixes: tuple[str, ...]


RULES = tuple(Rule(f.name, f.uses) for f in families.FAMILIES if f.uses)  # declared in harness/builtin_families.py


@dataclasses.dataclass(frozen=True)
class Chosen:
    """A family taken whole for a library use."""

    family: str
    because: Use  # the team's first use of a name it covers
    tests: int = 0  # its test functions


@dataclasses.dataclass(frozen=True)
class Called:
    """An Optax callable the team's code calls, and the built-in tests it takes."""

    use: Use  # the team's first use of it
    callable: str  # as the ledger names it ("optax.MultiSteps")
    tests: tuple[str, ...]  # test ids ("accumulation/test_guide_case") and check ids ("...[optax.MultiSteps]")


def base_test(check_id: str) -> str:
    """"masks/test_adamw[case0]" -> "masks/test_adamw": the test a check is one parametrization of."""
    return check_id.split("[", 1)[0]


def kept(check_id: str, tests: frozenset[str]) -> bool:
    """Whether a check of a family taken in part runs: its test, or the check itself, is one of `tests`."""
    return check_id in tests or base_test(check_id) in tests


@dataclasses.dataclass(frozen=True)
class Selection:
    """The built-in contracts a team's run takes, the modules pytest runs, and why."""

    scope: Scope
    called: tuple[Called, ...]  # USED: each callable the code calls that takes tests (ALL: empty)
    chosen: tuple[Chosen, ...]  # USED: each family taken whole for a library use (ALL: empty)
    modules: tuple[str, ...]  # the main pytest process's modules (the data-parallel family runs apart)
    families: tuple[str, ...]  # every family taken, whole or in part, the data-parallel one included
    skipped: tuple[str, ...]  # families not taken
    without_flax: tuple[str, ...]  # families left out because the team's code does not import flax
    # The tests kept of the families taken in part (pytest deselects their others); a family absent from
    # them runs whole. None: every family taken runs whole (ALL).
    tests: tuple[str, ...] | None = None
    test_count: int = 0  # the built-in test functions that run (each one check or more: its parametrizations)
    total_tests: int = 0  # the built-in test functions there are

    def runs(self, family: str) -> bool:
        return family in self.families

    @property
    def in_part(self) -> tuple[str, ...]:
        """The families taken in part: those some of whose tests pytest deselects."""
        return tuple(dict.fromkeys(ledger_families.family_of(t) for t in self.tests or ()))

    def line(self) -> str:
        """One line for the verdict: what ran and why (which callables took which tests, counted)."""
        if self.scope == Scope.ALL:
            said = "built-in contracts run: every family"
        elif self.called or self.chosen:
            parts = []
            if self.called:
                parts.append("for the library callables it calls, " + ", ".join(
                    f"{c.callable} at {c.use.where} ({_counted(c.tests)})" for c in self.called))
            if self.chosen:
                parts.append("whole families for the libraries it uses, " + ", ".join(
                    f"{c.family} ({c.tests} tests; {c.because.name} at {c.because.where})" for c in self.chosen))
            said = (f"built-in contracts run for what your code calls: {self.test_count} of the {self.total_tests} "
                    f"built-in tests; " + "; ".join(parts))
        else:
            said = "built-in contracts run for what your code calls: none (it calls no callable they cover)"
        if self.scope == Scope.USED:
            rest = list(self.skipped)
            if self.in_part:
                rest.append(f"{'and ' * bool(rest)}the other tests of {', '.join(self.in_part)}")
            if rest:
                said += f"; not run: {', '.join(rest)} (`--builtin all` runs them)"
        if self.without_flax:
            said += (f"; your code does not import flax: {', '.join(self.without_flax)} do not run (and flax need "
                     "not be pinned)")
        return said


def _counted(tests: tuple[str, ...]) -> str:
    """"7 tests: accumulation 4, compositions 3" (a defaults check counts as a test of its family)."""
    by_family = Counter(ledger_families.family_of(t) for t in dict.fromkeys(base_test(t) for t in tests))
    total = sum(by_family.values())
    return f"{total} test{'s' * (total != 1)}: " + ", ".join(f"{f} {n}" for f, n in sorted(by_family.items()))


def _matches(use: str, callable_name: str) -> bool:
    """`optax.MultiSteps` as called, or under a submodule (`optax.transforms.MultiSteps`); a jax.nn function
    under its other name or as Flax re-exports it (`nnx.relu` and linen's `nn.relu` are `jax.nn.relu`)."""
    use = _as_jax_nn(use)
    if use == callable_name or use.startswith(callable_name + "."):
        return True
    return use.startswith("optax.") and use.rsplit(".", 1)[-1] == callable_name.rsplit(".", 1)[-1]


def _as_jax_nn(use: str) -> str:
    """`flax.nnx.swish` -> `jax.nn.silu`, `flax.linen.gelu` -> `jax.nn.gelu`, `flax.nnx.initializers.xavier_uniform`
    -> `jax.nn.initializers.glorot_uniform`: the name the ledger gives the function a use calls."""
    package, _, name = use.rpartition(".")
    if name in families.JAX_NN_REEXPORTS.get(package, ()) or package == "jax.nn":
        return f"jax.nn.{families.JAX_NN_ALIASES.get(name, name)}"
    if package in families.FLAX_INITIALIZERS or package == "jax.nn.initializers":
        return f"jax.nn.initializers.{families.JAX_INITIALIZER_ALIASES.get(name, name)}"
    return use


def _called(code: TeamCode, ledger: dict[str, frozenset[str]]) -> dict[str, tuple[Use, frozenset[str]]]:
    """Ledger callable -> the team's first use of it, and the tests it takes."""
    found: dict[str, tuple[Use, frozenset[str]]] = {}
    for use in code.uses:
        for name, tests in ledger.items():
            if tests and name not in found and _matches(use.name, name):
                found[name] = (use, tests)
    return found


def _chosen(code: TeamCode) -> dict[str, Use]:
    """Family -> the first library use that takes it whole."""
    found: dict[str, Use] = {}
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
    total = sum(len(m.tests) for m in modules)
    if scope != Scope.USED or code is None:
        taken = [m for m in modules if m.family not in without_flax]
        return Selection(scope=Scope.ALL, called=(), chosen=(), modules=tuple(
            m.name for m in taken if m.family != devices.FAMILY), families=tuple(dict.fromkeys(
            m.family for m in taken)), skipped=(), without_flax=without_flax, tests=None,
            test_count=sum(len(m.tests) for m in taken), total_tests=total)
    chosen = _chosen(code)
    called = _called(code, ledger_families.tests_by_callable() if ledger is None else ledger)
    runnable = {f for f in every if f not in without_flax}
    # The tests of the families taken in part: those a callable takes, in families that run, not taken whole.
    tests = sorted({t for _, ids in called.values() for t in ids
                    if ledger_families.family_of(t) in runnable and ledger_families.family_of(t) not in chosen})
    functions: dict[str, set[str]] = {}
    for t in tests:
        functions.setdefault(ledger_families.family_of(t), set()).add(base_test(t).split("/", 1)[1])
    taken = [m for m in modules if m.family in runnable
             and (m.family in chosen or m.tests & functions.get(m.family, set()))]
    taken_families = tuple(dict.fromkeys(m.family for m in taken))
    count = len({base_test(t) for t in tests}) + sum(len(m.tests) for m in taken if m.family in chosen)
    shown = [Called(use, name, tuple(sorted(t for t in ids if ledger_families.family_of(t) in taken_families)))
             for name, (use, ids) in called.items()]
    return Selection(
        scope=Scope.USED,
        called=tuple(c for c in shown if c.tests),  # in the order the code first uses them
        chosen=tuple(Chosen(f, chosen[f], sum(len(m.tests) for m in taken if m.family == f))
                     for f in taken_families if f in chosen),
        modules=tuple(m.name for m in taken if m.family != devices.FAMILY),
        families=taken_families,
        skipped=tuple(f for f in every if f not in taken_families and f not in without_flax),
        without_flax=without_flax, tests=tuple(tests), test_count=count, total_tests=total)
