"""One entry's report from its pytest processes: the main, single-device run and a family run in a process of
its own (harness.devices: the data-parallel family on 4 devices), merged; and the parts of a report (the
built-in contracts and the project's own, each run and kept for reuse apart: harness.stack.entry_side.parts),
joined. The verdict, the report cache and CI see one report per entry, as before; the family's platform is kept
beside the main one.
"""

from __future__ import annotations

import dataclasses

from harness.model.enums import CheckKind, Outcome, ReportPart, Status
from harness.model.report import CheckRecord, Environment, JaxPlatform, Report, Summary, Timings, WarningRecord

# pytest's exit statuses (pytest.ExitCode), worst last: the merged run ends as the worse of the two.
_OK, _FAILED, _NO_TESTS = 0, 1, 5


def merged(main: Report, part: Report, family: str) -> Report:
    """`main` with `part`'s checks, warnings, timings and examples added, and `part`'s JAX platform recorded
    as `family`'s. The merged report is complete only when both are (harness.model.enums.Status)."""
    clash = sorted({c.id for c in main.checks} & {c.id for c in part.checks})
    if clash:
        raise ValueError(f"the {family} family's process ran checks the main process also ran: {clash[:3]}")
    checks = [*main.checks, *part.checks]
    platforms = {**(main.environment.family_platforms or {}), family: part.environment.jax}
    problem = main.problem or (f"its {family} family's process {part.problem}" if part.problem else None)
    return dataclasses.replace(
        main, status=_worse_status(main.status, part.status),
        exit_status=_worse(main.exit_status, part.exit_status),
        finished_at=part.finished_at if main.finished_at and part.finished_at else None,
        environment=dataclasses.replace(main.environment, family_platforms=platforms),
        hypothesis=dataclasses.replace(main.hypothesis,
                                       examples_run=main.hypothesis.examples_run + part.hypothesis.examples_run),
        checks=checks, warnings=_warnings(main.warnings + part.warnings),
        timings=Timings(total_s=round(main.timings.total_s + part.timings.total_s, 3)),
        performance=dict(sorted({**main.performance, **part.performance}.items())),
        summary=Summary.of(checks), problem=problem, golden_hosts=_hosts(main, part))


def _hosts(first: Report, second: Report) -> dict | None:
    """The families' recording hosts both parts name."""
    return {**(first.golden_hosts or {}), **(second.golden_hosts or {})} or None


def joined(first: Report, second: Report) -> Report:
    """Two parts of one entry's report as one: `first`'s checks then `second`'s, their warnings, timings,
    examples and performance added; complete only when both are; the JAX platforms of both parts' family
    processes kept; the project's own families and their golden values' stacks those `second` or `first` names,
    and the run either names. A part whose process could not
    say why it ended names its problem in its own words ("its built-in contracts' process was killed...")."""
    clash = sorted({c.id for c in first.checks} & {c.id for c in second.checks})
    if clash:
        raise ValueError(f"two parts of one report ran the same checks: {clash[:3]}")
    checks = [*first.checks, *second.checks]
    platforms = {**(first.environment.family_platforms or {}), **(second.environment.family_platforms or {})}
    problems = [r.problem for r in (first, second) if r.problem]
    own = sorted({*(first.own_families or ()), *(second.own_families or ())})
    # The own part alone reads the project's golden files: their recording stacks are its to say.
    stacks = {**(first.golden_stacks or {}), **(second.golden_stacks or {})}
    ended = [r.finished_at for r in (first, second)]
    return dataclasses.replace(
        first, status=_worse_status(first.status, second.status), exit_status=_worse(first.exit_status,
                                                                                    second.exit_status),
        started_at=min(first.started_at, second.started_at), finished_at=max(ended) if all(ended) else None,
        environment=dataclasses.replace(first.environment, family_platforms=platforms or None),
        hypothesis=dataclasses.replace(first.hypothesis,
                                       examples_run=first.hypothesis.examples_run + second.hypothesis.examples_run),
        checks=checks, warnings=_warnings(first.warnings + second.warnings),
        timings=Timings(total_s=round(first.timings.total_s + second.timings.total_s, 3)),
        performance=dict(sorted({**first.performance, **second.performance}.items())),
        summary=Summary.of(checks), problem="; ".join(problems) or None, own_families=own or None,
        run_id=first.run_id or second.run_id, golden_stacks=stacks or None, golden_hosts=_hosts(first, second))


OWN_PROCESS = ReportPart.OWN.label  # the project's own contracts' process, among an entry's platforms


def platforms(environment: Environment) -> dict[str, JaxPlatform]:
    """The JAX platform of each process of an entry: "main" (`environment.jax`), then each family run in a
    process of its own (`family_platforms`: data_parallel on 4 devices), then the project's own contracts' when
    they ran apart from the built-in ones (`own_jax`: as many devices as its code set)."""
    own = {OWN_PROCESS: environment.own_jax} if environment.own_jax is not None else {}
    return {"main": environment.jax, **(environment.family_platforms or {}), **own}


_STATUS_ORDER = (Status.COMPLETE, Status.UNCOLLECTED, Status.PARTIAL)


def _worse_status(a: Status, b: Status) -> Status:
    """Complete when both are; some checks never collected in either: uncollected; else partial."""
    if a in _STATUS_ORDER and b in _STATUS_ORDER:
        return max(a, b, key=_STATUS_ORDER.index)
    return Status.PARTIAL


def _worse(a: int | None, b: int | None) -> int | None:
    """pytest's exit status of the two runs together: no tests in one is no failure of the other."""
    codes = [c for c in (a, b) if c is not None and c != _NO_TESTS]
    if not codes:
        return _NO_TESTS if _NO_TESTS in (a, b) else None
    return max(codes, key=lambda c: (c not in (_OK, _FAILED), c))


def _warnings(records: list[WarningRecord]) -> list[WarningRecord]:
    """One record per distinct warning, counts and checks added."""
    found: dict[tuple, WarningRecord] = {}
    for w in records:
        key = (w.category, w.message, w.origin, w.filename, w.lineno)
        seen = found.get(key)
        found[key] = w if seen is None else dataclasses.replace(
            seen, count=seen.count + w.count, checks=list(dict.fromkeys(seen.checks + w.checks)))
    return list(found.values())


def not_started(main: Report, family: str, why: str, platform=None) -> Report:
    """`main` with one check that says the family's process could not run: an error, so the family is not
    judged (and the entry's report is not kept for reuse) rather than silently missing."""
    record = CheckRecord(
        id=f"{family}/process", nodeid=f"{family}::process", family=family, kind=CheckKind.COLLECTION,
        outcome=Outcome.ERROR, duration_s=0.0, exception=None, message=f"the {family} family could not run: {why}",
        falsifying_example=None, examples=None, max_abs_err=None, max_rel_err=None, comparisons=[],
        errors_observed={}, series={}, about=f"The {family} family runs in a pytest process of its own.")
    checks = [*main.checks, record]
    environment = main.environment
    if platform is not None:
        environment = dataclasses.replace(environment,
                                          family_platforms={**(environment.family_platforms or {}), family: platform})
    return dataclasses.replace(main, checks=checks, summary=Summary.of(checks), environment=environment,
                               exit_status=_worse(main.exit_status, _FAILED),
                               status=_worse_status(main.status, Status.UNCOLLECTED))
