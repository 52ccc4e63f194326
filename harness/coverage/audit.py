"""The ledger held against the installed surface and the contracts that exist: what it does not account
for, what it names that is not there, and the counts the coverage command prints."""

from __future__ import annotations

import dataclasses
import enum

from harness.coverage import kinds
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
    NO_VALUE_LINE = "a value of a kind argument (harness.coverage.kinds) that no contract is named for, nor a gap"
    NO_SUCH_VALUE = "ledger names a value the argument does not take (by its annotation, or the strings its body compares it with)"


@dataclasses.dataclass(frozen=True)
class KindValue:
    """One value a kind argument of an in-scope callable takes, and whether a contract is named for it."""

    callable: str
    param: str
    value: str
    contracts: tuple[str, ...]  # those named for it; the callable's own for its default
    gap: str | None = None  # what the ledger says is missing

    @property
    def exercised(self) -> bool:
        return bool(self.contracts)


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
    kind_values: tuple[KindValue, ...] = ()

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
                "no gradient (why given)": sum(1 for e in differentiable if e.no_gradient is not None),
                "kind-argument values": len(self.kind_values),
                "exercised": sum(1 for v in self.kind_values if v.exercised)}


def kind_values(entry: InScope, found: PublicCallable) -> list[KindValue]:
    """Each value each kind argument of `found` takes (its annotation's, harness.coverage.kinds), with the
    contracts the ledger names for it: the default is exercised by the callable's contracts (they call it without
    the argument; not those named only for passing it off its default), a flag's other value by those its params line names (they pass it off its default), any other
    value by its line under `values`; a `gaps` line "param=value" says why none does."""
    found_values = []
    for p in found.params:
        takes = kinds.values(p.annotation, p.compared)
        if len(takes) < 2:
            continue
        default, named = kinds.default_value(p.default), entry.values.get(p.name, {})
        flag = set(takes) == {"True", "False"}
        for value in takes:
            if value in named:
                ids = named[value]
            elif value == default:  # contracts that call it, less those named for passing this argument off it
                ids = tuple(sorted(entry.contracts() - set(entry.params.get(p.name, ())) | set(entry.calls)))
            elif flag and default is not None:
                ids = entry.params.get(p.name, ())
            else:
                ids = ()
            found_values.append(KindValue(entry.name, p.name, value, ids, entry.gaps.get(f"{p.name}={value}")))
    return found_values


def _params(entry: InScope, found: PublicCallable, contracts: set[str]) -> list[Finding]:
    findings = []
    listed = set(entry.params) | {p for p in entry.gaps if "=" not in p}
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
    takes = {p.name: kinds.values(p.annotation, p.compared) for p in found.params}
    for param, by_value in sorted(entry.values.items()):
        findings += [Finding(Problem.NO_SUCH_VALUE, entry.name, f"{param}={value} (it takes "
                             f"{', '.join(takes.get(param, ())) or 'no named values'})")
                     for value in by_value if value not in takes.get(param, ())]
        findings += [Finding(Problem.NO_SUCH_CONTRACT, entry.name, f"{param}={value}: {c}")
                     for value, ids in by_value.items() for c in ids if c not in contracts]
    if entry.missing is None:
        findings += [Finding(Problem.NO_VALUE_LINE, entry.name,
                             f'{v.param}={v.value}: values.{v.param}.{v.value} = ["family/test"] or gaps."{v.param}={v.value}" = "why"')
                     for v in kind_values(entry, found) if not v.exercised and v.gap is None]
    if entry.area in GRADIENT_AREAS and not entry.gradient and entry.no_gradient is None:
        findings.append(Finding(Problem.NO_GRADIENT_LINE, entry.name, 'gradient = ["family/test"] or no_gradient = "why"'))
    return findings


def audit(surface: Surface, ledger: Ledger, contracts: set[str]) -> Coverage:
    """Every public callable accounted for once; every in-scope parameter mapped to contracts that exist (the
    ledger's lines of the surface's library)."""
    ledger = ledger.of(surface.package)
    by_name = surface.by_any_name()
    findings, accounted, values = [], {}, []
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
            values += kind_values(ledger.in_scope[name], found)
    for name, c in surface.callables.items():
        if name not in accounted:
            also = f"also {', '.join(c.aliases)}; " if c.aliases else ""
            findings.append(Finding(Problem.UNKNOWN_CALLABLE, name,
                                    f"{also}{c.kind}({', '.join(p.name for p in c.params)})"))
    return Coverage(surface, ledger, tuple(findings), tuple(values))
