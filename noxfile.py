"""Sessions of upgrade-harness's own checkout. `nox -l` lists them with their pins.

  nox -s upgrade                 baseline vs candidate (+ single-package entries), then the verdict
  nox -s upgrade -- --candidate "jax==X jaxlib==X optax==Y flax==Z"
  nox -s baseline                one matrix entry's contracts -> reports/baseline.json
  nox -s golden                  record golden values from the baseline (shows what changed)
  nox -s tests                   the harness's own tests (all layers) and the contracts on the baseline, natively
                                 and on the hosts this machine emulates (harness/host_emulation.py)
  nox -s tests-fast              the unit layer only (tests/unit), in the tests session's environment (built
                                 first on a fresh clone): seconds
  nox -s docs                    the documentation site (mkdocs.yml, docs/) built with --strict into site/
  nox -s sequences               the sequences users run, on the real stacks: reuse never changes an answer
  nox -s benchmark -- --runs 3   a warm `upgrade --fresh` against the floor (both stacks imported), medians
  nox -s lock                    regenerate locks/<entry>.txt for every matrix entry
  nox -s accept -- --reason ".." adopt the judged candidate as the baseline: pins, locks, golden values
  nox -s plan / followups / judge -- DIR   the upgrade's steps one by one: CI runs each entry as a job
  nox -l --json -t matrix        the matrix entries as JSON

Every session but `tests`, `tests-fast`, `docs` and `sequences` is the package's (harness/stack/sessions.py), the
same ones a team's project runs; harness/matrix.toml is the single source of the entries and their pins.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import env_vars  # noqa: E402
from harness.contract import shared_compilation_cache  # noqa: E402  (stdlib only: the variable's name)
from harness.stack.commands import frame  # noqa: E402
from harness.stack.entry_side import emulated, entry as stack_entry  # noqa: E402
from harness.stack.environments import chromium  # noqa: E402
from harness.stack.pins import matrix
from harness.stack.workspace import Workspace  # noqa: E402
from harness.stack.sessions import ENTRIES, require_python, stack_session  # noqa: E402,F401 (registers them)


@stack_session("tests")
@frame.session  # bad input (no Python 3.12): its message and exit 2
def tests(session: nox.Session) -> None:
    """Layer contracts, the contracts in the baseline stack (on this machine, then on another host of each kind it
    emulates), then the harness's own tests (CI runs this)."""
    import uv  # the runner's own; here, so a nox without it reaches `upgrade`'s preflight, which says so

    require_python(session)
    ws = Workspace.from_environment()
    stack_entry.install_entry(session, ws, ENTRIES[matrix.BASELINE])
    session.install("-r", "locks/tests.txt")
    session.install("-r", "locks/sensitivity.txt")  # its tests build cosmic-ray sessions (test_sensitivity.py)
    session.install("-r", "locks/docs.txt")  # tests/integration/test_docs.py builds the documentation site
    chromium.ensure_chromium(session)
    # nox --install-only skips every run, and says so by returning None: the environment was all it was asked
    # for (tests-fast builds it this way on a fresh clone), so the contracts' run, whose report it cannot
    # read, does not follow.
    if session.run("lint-imports") is None:  # the layer contracts in pyproject.toml
        return
    # One compilation cache for every run of this session (harness.contract.shared_compilation_cache): the team
    # projects of the e2e tests load the baseline stack's programs the contracts below compiled, as a team's CI
    # that keeps one would.
    session.env[shared_compilation_cache.VARIABLE] = str(Path(session.virtualenv.location) / "shared-compilation-cache")
    # The contracts first: the harness's tests read their report (every allowance named).
    # Spread over the cores by pytest-xdist (this environment has it; the report is one process's: harness.contract.
    # workers), the data-parallel family's process beside it.
    stack_entry.run_entry(session, ws, ENTRIES[matrix.BASELINE], report_name="tests-baseline", install=False,
                          rollback_reads=False, main_args=stack_entry.SPREAD_OVER_CORES)
    # The same contracts on another host of each kind this machine emulates (a BLAS kernel, XLA's vector cap, no
    # fused multiply-add: harness.host_emulation): a golden value that holds on one CPU only fails here, not on a
    # user's machine.
    # Of them, the checks whose values the recording measured that host moving, and a share of the others turning
    # with each commit (harness/stack/entry_side/host_map.py).
    emulated.run_tested(session, ws, ENTRIES[matrix.BASELINE],
                        stack_entry.report_path(ws.reports, ENTRIES[matrix.BASELINE], "tests-baseline"),
                        stack_entry.SPREAD_OVER_CORES)
    # Every layer (tests/unit, tests/integration, tests/e2e: pyproject's testpaths). One worker a core (at
    # most 4), whole files to a worker, in collection order: the long-running files first, longest first
    # (tests/conftest.py), spread over the workers.
    session.run("python", "-m", "pytest", "tests/unit", "tests/integration", "tests/e2e", "-q", "-n", "auto",
                "--maxprocesses", "4",
                "--dist", "loadfile", "--no-loadscope-reorder", *session.posargs,
                env={env_vars.BASELINE_REPORT: str(stack_entry.report_path(ws.reports, ENTRIES[matrix.BASELINE],
                                                                           "tests-baseline")),
                     env_vars.TEST_UV: uv.find_uv_bin()})  # the example's end-to-end test installs a tool with it


@nox.session(name="tests-fast", venv_backend="none")
def tests_fast(session: nox.Session) -> None:
    """The unit layer only (tests/unit: one module each, in-process, no contract run), in the environment of
    `nox -s tests`: the loop while editing. On a fresh clone it builds that environment first, with the tests
    session's own steps (`nox -s tests --install-only`); after that it only runs the tests. The other layers run
    in `nox -s tests`."""
    envdir = session.cache_dir.parent  # nox's envdir holds .cache and tests/
    python = envdir / "tests" / "bin" / "python"
    if not python.exists():
        session.log(f"{python} does not exist: building the tests session's environment once")
        session.run(sys.executable, "-m", "nox", "-f", __file__, "--envdir", str(envdir), "-s", "tests",
                    "--install-only", external=True)
    session.run(str(python), "-m", "pytest", "tests/unit", "-q", "-n", "auto", "--maxprocesses", "4",
                *session.posargs, external=True)


@stack_session("docs")
@frame.session  # bad input (no Python 3.12): its message and exit 2
def docs(session: nox.Session) -> None:
    """The documentation site (mkdocs.yml, pages in docs/) built into site/ with --strict: a link to a page or
    an anchor that does not exist fails the build."""
    require_python(session)
    session.install("-r", "locks/docs.txt")
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})  # Material's notice about MkDocs 2, printed on every build


@stack_session("sequences")
@frame.session  # bad input (no Python 3.12): its message and exit 2
def sequences(session: nox.Session) -> None:
    """The sequences users run, on the real stacks: each reused answer equals the fresh one (about 15
    minutes; the nightly runs it). The same invariants on made-up stacks run in `nox -s tests`."""
    require_python(session)
    ws = Workspace.from_environment()
    stack_entry.install_entry(session, ws, ENTRIES[matrix.BASELINE])  # pytest, as the tests session has it
    session.run("python", "-m", "pytest", "tests/real_stacks", "-q", "-s", "-p", "no:cacheprovider", *session.posargs)


@nox.session(python=False)
def benchmark(session: nox.Session) -> None:
    """A warm `nox -s upgrade -- --fresh` against the floor (both stacks importing JAX side by side), N times in
    turn: medians of wall, CPU and peak memory (benchmarks/upgrade.py). Needs the environments (`nox -s upgrade`)."""
    from benchmarks import upgrade as upgrade_benchmark

    code = upgrade_benchmark.main(session.posargs, Path(__file__).resolve().parent)
    if code:
        session.error(f"the benchmark could not measure (exit status {code})")
