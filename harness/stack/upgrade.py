"""`nox -s upgrade`: run baseline and candidate, attribute what changed with the single-package
entries, then print the verdict. Each entry runs as a child nox session with its log in reports/.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.model import report_io
from harness.stack import matrix, paths
from harness.stack.interpreters import find_python
from harness.verdict import cli, compare

CANDIDATE_ENV = "HARNESS_CANDIDATE"  # an ad-hoc candidate, passed from `upgrade` to its child sessions
SUMMARY_FILES = ("upgrade-summary.md", "upgrade-summary.json", "upgrade-report.html", "attribution-selection.txt")


class HelpShown(Exception):
    """`nox -s upgrade -- --help`: the usage is printed, nothing runs."""


def _parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="nox -s upgrade --", add_help=True)
    parser.add_argument("--candidate", help='ad-hoc candidate pins, e.g. "jax==X jaxlib==X optax==Y flax==Z"')
    parser.add_argument("--jobs", type=int, default=2, help="entries run at once (default 2)")
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:
        if exc.code == 0:  # --help was printed
            raise HelpShown() from None
        raise HarnessError(f"nox -s upgrade: bad arguments {list(argv)}; see the usage above.") from exc


def _check_writable(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise HarnessError(
            f"reports directory {directory} is not writable ({exc.strerror or exc}); "
            "fix its permissions (or remove the file in its place) and run again."
        ) from None


def keep_previous(names: list[str]) -> list[str]:
    """Move last run's reports to reports/previous/ so a new run never silently overwrites them."""
    reports = paths.REPORTS
    files = [f"{name}{suffix}" for name in names for suffix in (".json", ".junit.xml", ".log")]
    kept = [name for name in [*files, *SUMMARY_FILES] if (reports / name).exists()]
    if kept:
        (reports / "previous").mkdir(exist_ok=True)
    for name in kept:
        os.replace(reports / name, reports / "previous" / name)
    return kept


def _child_environment(candidate: str | None, only: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("HARNESS_ONLY", None)
    env.pop(CANDIDATE_ENV, None)
    if only is not None:
        env["HARNESS_ONLY"] = str(only)
    if candidate:
        env[CANDIDATE_ENV] = candidate
    return env


def run_entries(plan: list[matrix.Entry], candidate: str | None, jobs: int, only: Path | None = None) -> dict[str, int]:
    """Run each entry's session as a child nox process, `jobs` at a time; logs in reports/<entry>.log."""
    env = _child_environment(candidate, only)
    pending, running, codes = list(plan), {}, {}
    while pending or running:
        while pending and len(running) < max(1, jobs):
            entry = pending.pop(0)
            log = open(paths.REPORTS / f"{entry.name}.log", "w")
            cmd = [sys.executable, "-m", "nox", "-f", str(paths.ROOT / "noxfile.py"), "-s", entry.name]
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=paths.ROOT)
            running[entry.name] = (proc, log, time.perf_counter())
            print(f"  {entry.name:12s} started   {entry.pin_text}", flush=True)
        time.sleep(0.2)
        for name, (proc, log, t0) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                codes[name] = proc.returncode
                del running[name]
                print(f"  {name:12s} finished  in {time.perf_counter() - t0:5.1f}s (log: reports/{name}.log)",
                      flush=True)
    return codes


def _tail(path: Path, lines: int = 8) -> str:
    try:
        return "\n".join("    " + ln for ln in path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "    (no log)"


def _changed_on_candidate() -> list[str]:
    """Ids of the checks that changed on the candidate (empty if either report is unusable)."""
    try:
        base = report_io.load(paths.REPORTS / f"{matrix.BASELINE}.json")
        cand = report_io.load(paths.REPORTS / f"{matrix.CANDIDATE}.json")
    except HarnessError:
        return []
    return compare.changed_check_ids(base, cand)


def _prepare(argv) -> tuple[argparse.Namespace, list[matrix.Entry]]:
    """Arguments, the plan, a Python and a writable reports/: HarnessError (exit 2) before anything runs."""
    args = _parse(argv)
    plan = matrix.upgrade_plan(matrix.entries(args.candidate))
    find_python(matrix.PYTHON)
    _check_writable(paths.REPORTS)
    return args, plan


def _run_plan(args, plan: list[matrix.Entry]) -> list[matrix.Entry]:
    """Baseline and candidate, then the single-package entries on just the checks that changed."""
    pair, singles = plan[:2], plan[2:]
    print(f"upgrade: running {', '.join(e.name for e in pair)}, {args.jobs} at a time")
    run_entries(pair, args.candidate, args.jobs)
    changed = _changed_on_candidate() if singles else []
    if singles and changed:
        selection = paths.REPORTS / "attribution-selection.txt"
        selection.write_text("\n".join(changed) + "\n")
        print(f"upgrade: {len(changed)} checks changed on the candidate; attributing them with "
              f"{', '.join(e.name for e in singles)}")
        run_entries(singles, args.candidate, args.jobs, only=selection)
        return [*pair, *singles]
    if singles:
        print("upgrade: no check changed on the candidate; the single-package entries are not needed")
    return pair


def upgrade(argv) -> int:
    """nox -s upgrade: run the plan, compare, print the verdict, return the exit status."""
    try:
        args, plan = _prepare(argv)
    except HelpShown:
        return 0
    except HarnessError as exc:
        print(f"upgrade: {exc}", file=sys.stderr)
        return exc.exit_status
    kept = keep_previous([e.name for e in plan])
    if kept:
        print(f"upgrade: last run's reports moved to reports/previous/ ({len(kept)} files)")
    started = time.perf_counter()
    ran = _run_plan(args, plan)
    print(f"upgrade: entries done in {time.perf_counter() - started:.1f}s")
    silent = [e.name for e in ran if not (paths.REPORTS / f"{e.name}.json").exists()]
    for name in silent:
        print(f"upgrade: entry {name} wrote no report; the end of reports/{name}.log says:\n"
              + _tail(paths.REPORTS / f"{name}.log"), file=sys.stderr)
    if silent:
        print("upgrade: CANNOT JUDGE (exit status 2)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    reports = paths.REPORTS
    return cli.main([str(reports / f"{e.name}.json") for e in ran] + [
        "--markdown", str(reports / "upgrade-summary.md"), "--json", str(reports / "upgrade-summary.json"),
        "--html", str(reports / "upgrade-report.html")])
