"""From cosmic-ray's results to the typed report, and the report as a Markdown table.

The Markdown gives killed / survived / timeout per module and operator, the score over the
non-equivalent mutants, and every survivor as its one-line diff: each is a behaviour change no contract
noticed, the list a new contract starts from.
"""

from __future__ import annotations

from collections import defaultdict

from harness.errors import HarnessError
from harness.model.sensitivity import Mutant, MutantOutcome, SensitivityReport, tally


def one_line(diff: str, line: int) -> str:
    """cosmic-ray's unified diff as one line: "L57: `a < b` -> `a <= b`" (lines joined with ' / ')."""
    removed, added = [], []
    for text in diff.splitlines():
        if text.startswith(("---", "+++", "@@")):
            continue
        if text.startswith("-"):
            removed.append(text[1:].strip())
        elif text.startswith("+"):
            added.append(text[1:].strip())
    if not removed and not added:
        return f"L{line}: (no diff recorded)"
    return f"L{line}: `{' / '.join(removed)}` -> `{' / '.join(added)}`"


def mutant(row: dict, families: list[str], equivalent_reason: str | None) -> Mutant:
    """One row of crsession's results as the model's mutant."""
    if equivalent_reason is not None:
        outcome, note = MutantOutcome.EQUIVALENT, equivalent_reason
    else:
        outcome = MutantOutcome(row["outcome"])
        note = row["output"] if outcome == MutantOutcome.ERROR else ""
    return Mutant(module=row["module"], operator=row["operator"], occurrence=row["occurrence"], line=row["line"],
                  outcome=outcome, change=one_line(row["diff"], row["line"]), families=families, note=note)


def mutants(rows: list[dict], families: dict[str, list[str]], equivalent: dict[str, str]) -> list[Mutant]:
    """The judged mutants of crsession's result rows: those not drawn are left out; the equivalent ones
    (key -> reason) are kept with their reason. A drawn mutant cosmic-ray left unjudged is an error."""
    judged = []
    for row in rows:
        key = f"{row['module']}:{row['operator']}:{row['occurrence']}"
        if key in equivalent:
            judged.append(mutant(row, families[row["module"]], equivalent[key]))
        elif row["outcome"] == "pending":
            raise HarnessError(f"cosmic-ray left the mutant {key} unjudged; run `nox -s sensitivity` again")
        elif row["outcome"] != "skipped":
            judged.append(mutant(row, families[row["module"]], None))
    return judged


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _table(mutants: list[Mutant], key, names: list[str], outside: dict[str, int] | None = None) -> list[str]:
    """killed / survived / timeout / error / equivalent and the score for each value of `key`, then all;
    with `outside` (module -> count), a last column of the mutants outside the in-scope lines."""
    extra = outside is not None
    lines = [f"| {' | '.join(names)} | killed | survived | timeout | error | equivalent | score |"
             + " outside scope |" * extra,
             f"| {' | '.join('---' for _ in names)} | ---: | ---: | ---: | ---: | ---: | ---: |" + " ---: |" * extra]
    groups: dict[tuple[str, ...], list[Mutant]] = defaultdict(list)
    for m in mutants:
        groups[key(m)].append(m)
    for module in outside or {}:
        groups.setdefault((module,), [])
    for label, members in [*sorted(groups.items()), (("**all**",) + ("",) * (len(names) - 1), mutants)]:
        t = tally(members)
        count = (sum(outside.values()) if label[0] == "**all**" else outside.get(label[0], 0)) if extra else 0
        lines.append(f"| {' | '.join(label)} | {t.killed} | {t.survived} | {t.timeout} | {t.error} | "
                     f"{t.equivalent} | {_percent(t.score)} |" + f" {count} |" * extra)
    return lines


def _libraries(report: SensitivityReport) -> str:
    """What was mutated, with the versions: "jax 0.11.2", "flax 0.12.12 and optax 0.2.6"."""
    named = [f"{package} {version}" for package, version in report.libraries.items()] or [f"optax {report.optax}"]
    return " and ".join([", ".join(named[:-1]), named[-1]]) if len(named) > 1 else named[0]


def markdown(report: SensitivityReport) -> str:
    total = report.summary
    sel = report.selection
    drawn = f"a sample of {sel.sample} (seed {sel.seed})" if sel.sample is not None else "every mutant"
    drawn += f" of {', '.join(sel.modules)} only" if sel.modules else ""
    lines = [
        "# Sensitivity of the contract suite",
        "",
        f"cosmic-ray {report.cosmic_ray} mutated {_libraries(report)}'s modules in scope: {report.mutants_found} "
        f"mutants, {drawn}{'' if sel.shard == '1/1' else f', shard {sel.shard}'}; {len(report.mutants)} judged with {report.workers} worker(s) "
        f"in {report.seconds:.0f} s ({report.seconds / max(1, total.scored):.1f} s a mutant).",
        "",
        f"**Score: {total.killed + total.timeout} of {total.scored} non-equivalent mutants noticed "
        f"({_percent(total.score)})**; {total.equivalent} equivalent (not scored).",
        "",
    ]
    if report.outside_scope:
        lines += [f"{sum(report.outside_scope.values())} mutants lie outside the lines of the in-scope callables of "
                  "modules that hold other code too (outside scope, per module below): not judged.", ""]
    lines += _table(report.mutants, lambda m: (m.module,), ["module"], report.outside_scope) + [""]
    lines += _table(report.mutants, lambda m: (m.module, m.operator), ["module", "operator"])
    lines += ["", "## Survivors", ""]
    survivors = sorted((m for m in report.mutants if m.outcome in (MutantOutcome.SURVIVED, MutantOutcome.ERROR)),
                       key=lambda m: (m.module, m.line, m.operator, m.occurrence))
    lines += [f"- {m.module} {m.change} ({m.operator} #{m.occurrence}; {', '.join(m.families)}"
              f"{'; error' if m.outcome == MutantOutcome.ERROR else ''})" for m in survivors] or ["None."]
    return "\n".join(lines) + "\n"
