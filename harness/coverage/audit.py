"""The ledger held against the installed surface and the contracts that exist: what it does not account
for, what it names that is not there, and the counts the coverage command prints."""

from __future__ import annotations

import dataclasses
import enum

from harness.coverage.ledger import GRADIENT_AREAS, InScope, Ledger
from harness.coverage.surface import PublicCallable, Surface


class Problem(enum.Enum):
    UNKNOWN_CALLABLE = "public callable the ledger does not account for"
    UNKNOWN_PARAM = "parameter of an in-scope callable the ledger does not account for"
    NO_SUCH_CALLABLE = "ledger entry for a callable that is not public"
    NO_SUCH_PARAM = "ledger names a parameter the callable does not have"
    NO_SUCH_CONTRACT = "ledger names a contract that does not exist"
    TWICE = "one callable has two ledger lines (under two of its names)"
    NO_GRADIENT_LINE = "a loss or activation with neither the contracts that take its gradient at its edges nor why it has none"


@dataclasses.dataclass(frozen=True)
class Finding:
    problem: Problem
    name: str  # the ledger's or the surface's name of the callable
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.problem.value}: {self.name}" + (f" ({self.detail})" if self.detail else "")


@dataclasses.dataclass(frozen=True)
class Coverage:
    surface: Surface
    ledger: Ledger
    findings: tuple[Finding, ...]

    @property
    def in_scope(self) -> list[InScope]:
        return list(self.ledger.in_scope.values())

    @property
    def gaps(self) -> list[InScope]:
        return [e for e in self.in_scope if not e.covered]

    def counts(self) -> dict[str, int]:
        differentiable = [e for e in self.in_scope if e.area in GRADIENT_AREAS]
        return {"public callables": len(self.surface.callables), "in scope": len(self.in_scope),
                "covered": len(self.in_scope) - len(self.gaps), "gaps": len(self.gaps),
                "out of scope": len(self.ledger.out_of_scope),
                "gradient at edges": sum(1 for e in differentiable if e.gradient),
                "no gradient (why given)": sum(1 for e in differentiable if e.no_gradient is not None)}


def _params(entry: InScope, found: PublicCallable, contracts: set[str]) -> list[Finding]:
    findings = []
    listed = set(entry.params) | set(entry.gaps)
    for name in sorted(listed - {p.name for p in found.params}):
        findings.append(Finding(Problem.NO_SUCH_PARAM, entry.name, name))
    for p in found.params:
        if p.name not in listed and entry.missing is None:  # a callable without contracts misses them all
            default = "required" if p.default is None else f"default {p.default}"
            findings.append(Finding(Problem.UNKNOWN_PARAM, entry.name, f"{p.name}, {default}"))
    for param, ids in sorted(entry.params.items()):
        findings += [Finding(Problem.NO_SUCH_CONTRACT, entry.name, f"{param}: {c}") for c in ids if c not in contracts]
    findings += [Finding(Problem.NO_SUCH_CONTRACT, entry.name, f"contracts: {c}") for c in entry.calls if c not in contracts]
    findings += [Finding(Problem.NO_SUCH_CONTRACT, entry.name, f"gradient: {c}")
                 for c in entry.gradient if c not in contracts]
    if entry.area in GRADIENT_AREAS and not entry.gradient and entry.no_gradient is None:
        findings.append(Finding(Problem.NO_GRADIENT_LINE, entry.name, 'gradient = ["family/test"] or no_gradient = "why"'))
    return findings


def audit(surface: Surface, ledger: Ledger, contracts: set[str]) -> Coverage:
    """Every public callable accounted for once; every in-scope parameter mapped to contracts that exist (the
    ledger's lines of the surface's library)."""
    ledger = ledger.of(surface.package)
    by_name = surface.by_any_name()
    findings, accounted = [], {}
    for name in [*ledger.in_scope, *ledger.out_of_scope]:
        found = by_name.get(name)
        if found is None:
            findings.append(Finding(Problem.NO_SUCH_CALLABLE, name))
            continue
        if found.name in accounted:
            findings.append(Finding(Problem.TWICE, name, f"also listed as {accounted[found.name]}"))
        accounted[found.name] = name
        if name in ledger.in_scope:
            findings += _params(ledger.in_scope[name], found, contracts)
    for name, c in surface.callables.items():
        if name not in accounted:
            also = f"also {', '.join(c.aliases)}; " if c.aliases else ""
            findings.append(Finding(Problem.UNKNOWN_CALLABLE, name,
                                    f"{also}{c.kind}({', '.join(p.name for p in c.params)})"))
    return Coverage(surface, ledger, tuple(findings))
