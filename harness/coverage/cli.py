"""`python -m harness coverage [--site-packages DIR] [--ledger FILE]`: the public surface of Optax and of the
parts of Flax and JAX a training step calls (harness.coverage.libraries) against the ledger, a section each: the
counts, every gap, and anything the ledger does not account for (exit status 1)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.coverage import audit, changelog, contracts, ledger, libraries, surface
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError

# Where the baseline's optax is installed once its environments exist (the entry's, or the tests').
ENVIRONMENTS = (".nox/baseline", ".nox/tests")


def baseline_optax() -> str:
    from harness.stack.pins import matrix

    return matrix.load_pins(matrix.matrix_path()).baseline[surface.PACKAGE]


def find_site_packages(root: Path, version: str) -> Path:
    """The site-packages of the first environment under root whose optax is the baseline's."""
    seen = []
    for env in ENVIRONMENTS:
        for site in sorted((root / env).glob("lib/python3*/site-packages")):
            if (site / surface.PACKAGE).is_dir():
                found = surface.installed_version(site)
                if found == version:
                    return site
                seen.append(f"{site} has {found}")
    raise HarnessError(f"no environment with the baseline's optax {version} under {root} "
                       f"({'; '.join(seen) or 'none of ' + ', '.join(ENVIRONMENTS) + ' exists'}): run "
                       "`nox -s baseline` once, or give --site-packages DIR.")


def render(result: audit.Coverage) -> str:
    s = result.surface
    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items())
    part = libraries.BY_PACKAGE[s.package].part
    lines = [f"{s.package} {s.version}, {part} ({s.source}): {counts}"]
    for entry in sorted(result.gaps, key=lambda e: (e.area.value, e.name)):
        what = entry.missing or "; ".join(f"{p}: {why}" for p, why in sorted(entry.gaps.items()))
        lines.append(f"  gap  {entry.area.value:12s} {entry.name}: {what}")
    lines += [f"  NOT ACCOUNTED FOR  {f}" for f in result.findings]
    return "\n".join(lines)


def audit_all(site: Path, ledger_path: Path) -> list[audit.Coverage]:
    """One audit a library, each against its lines of the one ledger."""
    read, ids = ledger.read(ledger_path), contracts.ids()
    return [audit.audit(surface.load(site, library), read, ids) for library in libraries.LIBRARIES]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness coverage", description=__doc__)
    parser.add_argument("--site-packages", type=Path, help="where the baseline's optax, flax and jax are installed "
                                                           "(default: the baseline entry's environment, then the tests')")
    parser.add_argument("--ledger", type=Path, default=ledger.LEDGER)
    args = parser.parse_args(argv)
    try:
        site = args.site_packages or find_site_packages(Path.cwd(), baseline_optax())
        results = audit_all(site, args.ledger)
    except HarnessError as exc:
        print(f"coverage: {exc}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    try:
        changelogs = [changelog.read(library.package) for library in libraries.LIBRARIES]
    except HarnessError as exc:
        print(f"coverage: {exc}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    in_scope, ids = ledger.read(args.ledger).in_scope, contracts.ids()
    problems = [changelog.findings(log, in_scope, ids) for log in changelogs]
    print("\n\n".join(render(result) + "\n" + render_changelog(log, found)
                       for result, log, found in zip(results, changelogs, problems)))
    return 1 if any(result.findings for result in results) or any(problems) else 0


def render_changelog(log: changelog.Changelog, problems: list[str]) -> str:
    """The changelog ledger's line for a library, each entry no contract sees (a gap), each problem."""
    lines = [f"  changelog ({changelog.FOLDER.name}/{log.package}.toml): {log.summary()}"]
    lines += [f"  not seen  {e.release} {', '.join(e.callables)} ({e.kind}): {e.not_seen}"
              for e in log.entries if not e.seen]
    lines += [f"  NOT ACCOUNTED FOR  {p}" for p in problems]
    return "\n".join(lines)
