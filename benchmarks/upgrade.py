"""`nox -s benchmark`: how long a warm `nox -s upgrade -- --fresh` of the default matrix takes, against the floor
any upgrade check pays: both stacks imported side by side. A benchmark, not a test: it asserts nothing; it
measures, N times (default 3) and in turn,

  (a) the floor: the baseline's and the candidate's environments each import jax, optax and flax and run one
      jitted op, two processes at once (what running two entries in parallel costs before any check);
  (b) the upgrade: `nox -s upgrade -- --fresh --reports TMP --envs-size-limit off`, every entry run.

and prints, per run and as medians: wall seconds, CPU seconds (user+sys of the measured process tree, from
wait4's rusage: each process and the descendants it waited for), peak memory two ways (the largest single
process's max RSS, from the same rusage; and the whole tree's RSS summed, sampled every 0.2 s from /proc, an
upper bound since shared pages count once per process, and blind to peaks shorter than the interval), and
the ratio upgrade/floor.

Why here and not in the package: it measures this checkout's own default matrix and needs its environments;
a team's installed tool has no use for it. The upgrades write into a temporary reports directory (`--reports`),
never the checkout's reports/; that directory's `.nox` is a link to the checkout's, so the environments and
their JAX compilation caches are the warm ones (and `--envs-size-limit off` keeps the run from pruning them).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.environments.envs import dir_name
from harness.stack.pins import matrix

FLOOR_CODE = ("import jax, jax.numpy as jnp, optax, flax; "
              "jax.jit(lambda x: x * 2.0 + 1.0)(jnp.ones(3)).block_until_ready()")
SAMPLE_EVERY_S = 0.2


@dataclasses.dataclass(frozen=True)
class Sample:
    """One measurement of a process tree (or two side by side)."""

    wall_s: float
    cpu_s: float  # user + system, every process of the tree its parent waited for
    max_rss_mib: float  # the largest single process's peak resident set
    tree_rss_mib: float  # the tree's resident sets summed, the highest sample
    status: int  # the first nonzero exit status, else 0


def _tree(roots: set[int]) -> set[int]:
    """The processes descending from `roots` (and the roots), from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def _rss_bytes(pids: set[int]) -> int:
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


class _Sampler(threading.Thread):
    """The highest summed RSS of the trees under `roots` while they run."""

    def __init__(self, roots: set[int]):
        super().__init__(daemon=True)
        self.roots, self.peak, self.done = roots, 0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, _rss_bytes(_tree(self.roots)))
            self.done.wait(SAMPLE_EVERY_S)


def measure(commands: list[list[str]], env: dict[str, str], cwd: Path, log) -> Sample:
    """Run `commands` at once; wall until the last ends; each one's rusage from wait4 (itself and the
    descendants it waited for)."""
    started = time.perf_counter()
    procs = [subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT) for cmd in commands]
    sampler = _Sampler({p.pid for p in procs})
    sampler.start()
    cpu, max_rss, status = 0.0, 0, 0
    for proc in procs:
        _, wait_status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped here: Popen must not wait again
        cpu += usage.ru_utime + usage.ru_stime
        max_rss = max(max_rss, usage.ru_maxrss)  # KiB on Linux
        status = status or proc.returncode
    wall = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    return Sample(wall, cpu, max_rss / 1024, sampler.peak / 2**20, status)


def environment_python(checkout: Path, entry: str) -> Path:
    python = checkout / ".nox" / dir_name(checkout / ".nox", entry) / "bin" / "python"
    if not python.exists():
        raise HarnessError(f"{python} does not exist: the benchmark measures a warm checkout. Run `nox -s upgrade` "
                           "once first (it makes the baseline's and the candidate's environments).")
    return python


def floor_commands(checkout: Path) -> list[list[str]]:
    return [[str(environment_python(checkout, e)), "-c", FLOOR_CODE] for e in (matrix.BASELINE, matrix.CANDIDATE)]


def upgrade_reports(checkout: Path) -> Path:
    """A temporary reports directory whose `.nox` is the checkout's: the warm environments, under the names
    nox gives them there too."""
    reports = Path(tempfile.mkdtemp(prefix="harness-bench-"))
    (reports / ".nox").symlink_to(checkout / ".nox", target_is_directory=True)
    for entry in (matrix.BASELINE, matrix.CANDIDATE):
        if dir_name(reports / ".nox", entry) != dir_name(checkout / ".nox", entry):
            shutil.rmtree(reports, ignore_errors=True)
            raise HarnessError(f"nox would name {entry}'s environment differently under {reports}/.nox than under "
                               f"{checkout}/.nox (a path length rule); set TMPDIR to a shorter directory")
    return reports


def upgrade_command(checkout: Path, reports: Path) -> list[str]:
    return [sys.executable, "-m", "nox", "-f", str(checkout / "noxfile.py"), "-s", "upgrade", "--", "--fresh",
            "--reports", str(reports), "--envs-size-limit", "off"]


def _env() -> dict[str, str]:
    """The caller's environment without another run's harness variables; JAX on the CPU, as entries run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    return env | {"JAX_PLATFORMS": "cpu"}


def _row(label: str, s: Sample) -> str:
    return (f"{label:22s} {s.wall_s:8.1f} {s.cpu_s:8.1f} {s.max_rss_mib:10.0f} {s.tree_rss_mib:10.0f}"
            + (f"   exit status {s.status}" if s.status else ""))


def _median(samples: list[Sample]) -> Sample:
    return Sample(*(statistics.median(getattr(s, f.name) for s in samples) for f in dataclasses.fields(Sample)
                    if f.name != "status"), status=max(s.status for s in samples))


HEADER = f"{'':22s} {'wall s':>8s} {'cpu s':>8s} {'max RSS MiB':>10s} {'tree RSS MiB':>10s}"


def run(checkout: Path, runs: int, log_path: Path) -> tuple[Sample, Sample]:
    """`runs` pairs, floor then upgrade each time; the medians (floor, upgrade), printed as it goes."""
    floors, upgrades = [], []
    env = _env()
    print(f"benchmark: {runs} runs of the floor then the upgrade; their output in {log_path}\n{HEADER}", flush=True)
    with open(log_path, "w") as log:
        for i in range(1, runs + 1):
            floors.append(measure(floor_commands(checkout), env, checkout, log))
            print(_row(f"run {i}: floor", floors[-1]), flush=True)
            reports = upgrade_reports(checkout)
            try:
                upgrades.append(measure([upgrade_command(checkout, reports)], env, checkout, log))
            finally:
                shutil.rmtree(reports, ignore_errors=True)  # the link, never what it points to
            print(_row(f"run {i}: upgrade", upgrades[-1]), flush=True)
    floor, upgrade = _median(floors), _median(upgrades)
    print(_row("median: floor", floor))
    print(_row("median: upgrade", upgrade))
    print(f"{'upgrade / floor':22s} {upgrade.wall_s / floor.wall_s:8.1f} {upgrade.cpu_s / floor.cpu_s:8.1f} "
          f"{upgrade.max_rss_mib / floor.max_rss_mib:10.1f} {upgrade.tree_rss_mib / floor.tree_rss_mib:10.1f}")
    return floor, upgrade


def main(argv: list[str], checkout: Path) -> int:
    parser = argparse.ArgumentParser(prog="nox -s benchmark --", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="pairs measured (default 3); medians are printed")
    parser.add_argument("--log", type=Path, default=None,
                        help="where the runs' output goes (default: a temporary file, named when it starts)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        log = args.log or Path(tempfile.mkstemp(prefix="harness-bench-", suffix=".log")[1])
        floor, upgrade = run(checkout, args.runs, log)
    except HarnessError as exc:
        print(f"benchmark: {exc}", file=sys.stderr)
        return exc.exit_status
    return 0 if not (floor.status or upgrade.status > 1) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], Path(__file__).resolve().parents[1]))
