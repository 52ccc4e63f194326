"""What the nox sessions do: install a matrix entry's stack, run the contract suite, run the upgrade.

The noxfile stays a list of readable recipes; the steps live here, where they can be tested.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from harness.model import report
from harness.stack import matrix
from harness.errors import EXIT_CANNOT_JUDGE, HarnessError
from harness.stack.interpreters import find_python

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
LOCKS = ROOT / "locks"
ADHOC_LOCKS = ROOT / ".nox" / "adhoc-locks"
CANDIDATE_ENV = "HARNESS_CANDIDATE"  # an ad-hoc candidate, passed from `upgrade` to its child sessions
LOCK_COMMAND = "nox -s lock"


def harness_requirements() -> list[str]:
    """What the contract suite needs besides the stack: the harness's own dependencies (pyproject)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [d for d in data["project"]["dependencies"] if not d.startswith("numpy")]


def lock_input(entry: matrix.Entry) -> str:
    return "\n".join(entry.requirements + harness_requirements()) + "\n"


def lock_path(entry: matrix.Entry) -> Path:
    return (LOCKS if entry.locked else ADHOC_LOCKS) / f"{entry.name}.txt"


def _uv() -> str | None:
    return shutil.which("uv")


def compile_lock(entry: matrix.Entry, output: Path, header_command: str | None = None) -> None:
    """Resolve an entry's full dependency set with uv; HarnessError with uv's words if it cannot."""
    uv = _uv()
    if uv is None:
        raise HarnessError("uv is not installed; install it with `python3 -m pip install uv` to resolve stacks.")
    output.parent.mkdir(parents=True, exist_ok=True)
    cmd = [uv, "pip", "compile", "-", "-o", str(output), "--python-version", entry.python, "--universal",
           "--quiet"]
    if header_command:
        cmd += ["--custom-compile-command", header_command]
    else:
        cmd += ["--no-header"]
    done = subprocess.run(cmd, input=lock_input(entry), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = "\n".join(line for line in done.stderr.strip().splitlines() if line.strip())[-1500:]
        raise HarnessError(
            f"cannot resolve matrix entry {entry.name!r} ({entry.pin_text}): {detail}\n"
            "Check that every pinned version exists on the package index and that the pins fit together "
            "(e.g. jax 0.11.x needs the same jaxlib version)."
        )


def _entry_meta(entry: matrix.Entry) -> dict:
    return {"name": entry.name, "python": entry.python, "requested": dict(entry.pins), "locked": entry.locked}


def install_entry(session, entry: matrix.Entry, report_name: str | None = None) -> None:
    """Make the session's virtualenv hold exactly the entry's resolved stack, plus the harness."""
    started = report.now()
    lock = lock_path(entry)
    try:
        if not entry.locked:
            compile_lock(entry, lock)
        elif not lock.exists():
            raise HarnessError(f"lock file {lock} is missing; generate it with `{LOCK_COMMAND}`.")
        if _uv() and session.venv_backend == "uv":
            session.run_install("uv", "pip", "sync", "--quiet", str(lock), external=True,
                                env={"VIRTUAL_ENV": session.virtualenv.location})
        else:
            session.install("-r", str(lock))
        session.install("--no-deps", "-e", str(ROOT))
    except HarnessError as exc:
        _write_unresolvable(entry, str(exc), started, report_name)
        session.error(str(exc))
    except Exception as exc:  # nox's CommandFailed: the installer's own output is above
        problem = f"installing {entry.pin_text} failed ({exc}); the installer's output is in the session log."
        _write_unresolvable(entry, problem, started, report_name)
        session.error(problem)


def _report_path(entry: matrix.Entry, report_name: str | None) -> Path:
    return REPORTS / f"{report_name or entry.name}.json"


def _write_unresolvable(entry: matrix.Entry, problem: str, started: str, report_name: str | None) -> None:
    report.write(_report_path(entry, report_name), report.unresolvable(_entry_meta(entry), problem, started))


def run_entry(session, entry: matrix.Entry, pytest_args=(), report_name: str | None = None,
              install: bool = True) -> None:
    """Install the entry's stack and run the contract suite, writing reports/<entry>.json."""
    if install:
        install_entry(session, entry, report_name)
    path = _report_path(entry, report_name)
    env = {
        "HARNESS_REPORT": str(path),
        "HARNESS_ENTRY": entry.name,
        "HARNESS_REQUESTED": json.dumps(entry.pins),
        "HARNESS_LOCKED": "1" if entry.locked else "0",
        "HARNESS_PYTHON": entry.python,
        # Derandomized unless asked otherwise: identical pins must give identical reports.
        "HARNESS_PROFILE": os.environ.get("HARNESS_PROFILE", "ci"),
        # Keep bytecode: without it every run recompiles JAX's sources (~2.7 s of each run).
        "PYTHONDONTWRITEBYTECODE": "",
        # JAX's persistent compilation cache, one per environment: a rerun loads the ~600 small
        # executables the suite compiles instead of compiling them again (about half of a cold run).
        # Keys include the jax/jaxlib versions and flags, so a cached executable is the same program.
        "JAX_COMPILATION_CACHE_DIR": os.path.join(session.virtualenv.location, "jax-compilation-cache"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }
    junit = path.with_suffix(".junit.xml")  # for CI test tabs, beside the JSON report
    session.run("python", "-m", "pytest", str(ROOT / "tests" / "contracts"), "-q", "-p", "no:randomly",
                f"--junitxml={junit}", "-o", f"junit_suite_name={entry.name}", *pytest_args, env=env)


def ensure_chromium(session) -> None:
    """The HTML report is checked in headless Chromium: install Debian's package when it is missing."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", "-qq", external=True, env=env)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True, env=env)
    else:
        session.warn("headless Chromium is missing and cannot be installed here (needs root and apt-get): "
                     "the HTML rendering check will fail. Install Debian's `chromium` package and run again.")


def write_locks(session, entries: list[matrix.Entry]) -> None:
    for entry in entries:
        compile_lock(entry, lock_path(entry), header_command=LOCK_COMMAND)
        session.log(f"wrote {lock_path(entry).relative_to(ROOT)} for {entry.name}: {entry.pin_text}")


# -- nox -s upgrade ---------------------------------------------------------------------------------
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


class HelpShown(Exception):
    """`nox -s upgrade -- --help`: the usage is printed, nothing runs."""


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


def _keep_previous(names: list[str]) -> list[str]:
    """Move last run's reports to reports/previous/ so a new run never silently overwrites them."""
    files = [f"{name}{suffix}" for name in names for suffix in (".json", ".junit.xml", ".log")]
    files += ["upgrade-summary.md", "upgrade-summary.json", "upgrade-report.html", "attribution-selection.txt"]
    kept = [name for name in files if (REPORTS / name).exists()]
    if kept:
        (REPORTS / "previous").mkdir(exist_ok=True)
    for name in kept:
        os.replace(REPORTS / name, REPORTS / "previous" / name)
    return kept


def _run_entries(plan: list[matrix.Entry], candidate: str | None, jobs: int,
                 only: Path | None = None) -> dict[str, int]:
    """Run each entry's session as a child nox process, `jobs` at a time; logs in reports/<entry>.log."""
    env = dict(os.environ)
    env.pop("HARNESS_ONLY", None)
    if only is not None:
        env["HARNESS_ONLY"] = str(only)
    if candidate:
        env[CANDIDATE_ENV] = candidate
    else:
        env.pop(CANDIDATE_ENV, None)
    pending, running, codes = list(plan), {}, {}
    while pending or running:
        while pending and len(running) < max(1, jobs):
            entry = pending.pop(0)
            log = open(REPORTS / f"{entry.name}.log", "w")
            cmd = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", entry.name]
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
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
    """Ids of the checks whose mark on the candidate is not 'unchanged' (empty if either report is unusable)."""
    from harness.verdict import compare

    try:
        base = report.load(REPORTS / f"{matrix.BASELINE}.json")
        cand = report.load(REPORTS / f"{matrix.CANDIDATE}.json")
    except HarnessError:
        return []
    if base["status"] != "complete" or cand["status"] != "complete":
        return []
    return sorted({c.check_id for c in compare.compare_entry(base, cand).changes if c.mark != compare.UNCHANGED})


def upgrade(argv) -> int:
    """nox -s upgrade: run the plan, compare, print the verdict, return the exit status."""
    from harness.verdict import compare

    try:
        args = _parse(argv)
        entries = matrix.entries(args.candidate)
        plan = matrix.upgrade_plan(entries)
        find_python(matrix.PYTHON)
        _check_writable(REPORTS)
    except HelpShown:
        return 0
    except HarnessError as exc:
        print(f"upgrade: {exc}", file=sys.stderr)
        return exc.exit_status
    kept = _keep_previous([e.name for e in plan])
    if kept:
        print(f"upgrade: last run's reports moved to reports/previous/ ({len(kept)} files)")
    started = time.perf_counter()
    pair, singles = plan[:2], plan[2:]
    print(f"upgrade: running {', '.join(e.name for e in pair)}, {args.jobs} at a time")
    _run_entries(pair, args.candidate, args.jobs)
    ran = list(pair)
    changed = _changed_on_candidate() if singles else []
    if singles and changed:
        # Attribution needs only the checks that changed: the single-package entries re-run just those.
        selection = REPORTS / "attribution-selection.txt"
        selection.write_text("\n".join(changed) + "\n")
        print(f"upgrade: {len(changed)} checks changed on the candidate; attributing them with "
              f"{', '.join(e.name for e in singles)}")
        _run_entries(singles, args.candidate, args.jobs, only=selection)
        ran += singles
    elif singles:
        print("upgrade: no check changed on the candidate; the single-package entries are not needed")
    print(f"upgrade: entries done in {time.perf_counter() - started:.1f}s")
    paths = [REPORTS / f"{e.name}.json" for e in ran]
    silent = [e.name for e, p in zip(ran, paths) if not p.exists()]
    if silent:
        for name in silent:
            print(f"upgrade: entry {name} wrote no report; the end of reports/{name}.log says:\n"
                  + _tail(REPORTS / f"{name}.log"), file=sys.stderr)
        print("upgrade: CANNOT JUDGE (exit status 2)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    return compare.main([str(p) for p in paths] + ["--markdown", str(REPORTS / "upgrade-summary.md"),
                                                   "--json", str(REPORTS / "upgrade-summary.json"),
                                                   "--html", str(REPORTS / "upgrade-report.html")])
