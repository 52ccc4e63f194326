"""`nox -s upgrade -- --harness-phases`: the whole upgrade's profile (preflight, resolution, each entry with
its own processes' phases, the follow-ups, the API diff, the verdict), printed at the end; and the option
changes no report key, no reuse and no verdict. On the simulated project (tests/support/simulated_stack.py:
only the child sessions, the resolver and the index are faked; the fake sessions write their phases as a
real entry's processes do). Structure and counts are asserted, never how long anything took."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from support import sequence_driver as drive
from support import simulated_stack as sim
from harness import env_vars
from harness.model import entry_job, phase_times
from harness.model.phase_times import ProcessPhases, Source, Timing
from harness.stack.commands import upgrade
from harness.stack.run import run_profile
from harness.stack.workspace import Workspace

CHANGES = drive.CANDIDATES["changes checks"]  # two groups bumped: attributed by jax-only and optax-only


def _suite_phases(checks: int) -> list[Timing]:
    """What a contract run's --harness-phases writes (harness.contract.phases), made up."""
    return [Timing("start-up (Python, pytest, plugins)", 0.5, 0.5),
            Timing("set-up (recorder, first report, JAX import)", 1.0, 1.0),
            Timing("collection (contract modules and their imports)", 1.0, 1.0),
            Timing(f"checks ({checks} items)", 10.0, 9.0, parts=[Timing("JAX tracing, lowering, compiling", 3.0)]),
            Timing("end (final report, summary, temporary files)", 0.2, 0.2),
            Timing("total", 12.7, 11.7),
            Timing("report writing (every write, within the phases above)", 0.3)]


@pytest.fixture
def sessions(monkeypatch):
    """The simulated boundary, each fake session also writing its phases where it is told to (and
    remembering the environments it was given)."""
    fake = drive.install_boundary(monkeypatch)
    popen, told, phases_told = fake.popen, [], []

    def with_phases(cmd, stdout=None, stderr=None, cwd=None, env=None, **kw):
        told.append(dict(env))
        directory = entry_job.read(Path(env[env_vars.JOB])).options.phases_dir  # as the session reads its job
        phases_told.append(directory)
        if directory:
            now = time.time()
            phase_times.write(directory, ProcessPhases(Source.SESSION, now - 3, now, 14.0, work_started_at=now - 2,
                                                       work_cpu_s=1.0))
            phase_times.write(directory, ProcessPhases(Source.SUITE, now - 1.5, now - 0.1, 11.7, _suite_phases(4)))
        return popen(cmd, stdout, stderr, cwd, env, **kw)

    drive.entry_runs.subprocess.Popen = with_phases
    fake.told, fake.phases_told = told, phases_told
    return fake


@pytest.fixture
def project(tmp_path):
    return sim.make_project(tmp_path / "project")


def _upgrade(project, *argv: str) -> int:
    return upgrade.upgrade(Workspace.of(project), list(argv), invoked_from=str(project.parent))


def _profile(out: str) -> list[str]:
    """The last profile printed."""
    lines = out.splitlines()
    return lines[len(lines) - 1 - lines[::-1].index(run_profile.HEADER):]


def _label(line: str) -> str:
    """A row's label with its indentation (the depth), the figures and the note cut off."""
    return re.match(r"^(\s*\S.*?)(?=\s{2,}|$)", line).group(1)


def test_the_profile_names_every_phase_and_each_entry_with_its_own(project, sessions, capsys):
    code = _upgrade(project, "--candidate", CHANGES, "--harness-phases")
    assert code == 1, capsys.readouterr()
    table = _profile(capsys.readouterr().out)
    top = [_label(line) for line in table[3:] if not line.startswith(" ")]
    assert top == ["preflight (options, interpreters, committed locks, golden files)",
                   "resolution (the plan's locks resolved and checked)",
                   "entries: baseline, candidate", "follow-ups", "API diff (the versions' public APIs)",
                   "verdict (compare, attribute, write summaries and the HTML page)",
                   "publishing the reports, pruning environments",
                   "between the phases (reports moved, messages, the rest)", "total"]
    labels = [_label(line) for line in table]
    # Each entry that ran once, under its phase, each with its session's and its suite's phases.
    for entry in ("baseline", "candidate", "jax-only", "optax-only"):
        assert labels.count(f"    {entry}" if entry.endswith("only") else f"  {entry}") == 1, "\n".join(table)
    assert "  entries: jax-only, optax-only (the selected checks)" in labels
    assert labels.count("    nox start-up (interpreter, nox, the environment found)") == 2  # baseline, candidate
    assert labels.count("    suite: checks (4 items)") == 2
    assert labels.count("      suite: checks (4 items)") == 2  # the attribution's, one level deeper
    assert labels.count("      JAX tracing, lowering, compiling") == 2
    # Every number a number: wall and CPU of each top-level phase.
    for line in table[3:]:
        if not line.startswith(" "):
            assert re.search(r"\s\d+\.\d\d\s+\d+\.\d\d$", line), line


def test_an_entry_row_shows_its_sessions_cpu_and_the_install_as_the_rest(project, sessions, capsys):
    _upgrade(project, "--candidate", CHANGES, "--harness-phases")
    table = _profile(capsys.readouterr().out)
    row = next(line for line in table if _label(line) == "  baseline")
    assert row.split()[2] == "14.00"  # the session's whole tree, as it wrote it
    install = next(line for line in table if _label(line).strip().startswith("install (uv pip sync"))
    # 14.0 in all, 1.0 by nox's start, 11.7 by the suite: the rest is the install's and the launch's.
    assert re.search(r"\s1\.30\s+cpu: the session's less its pytest runs' phases", install), install


def test_without_the_option_nothing_is_printed_and_no_entry_is_told(project, sessions, capsys):
    assert _upgrade(project, "--candidate", CHANGES) == 1
    assert run_profile.HEADER not in capsys.readouterr().out
    assert sessions.told and not any(env_vars.PHASES_DIR in env for env in sessions.told)
    assert not any(sessions.phases_told)  # nor in its job
    assert run_profile.stop() is None  # the run's profiler is gone with the run


def test_the_option_changes_no_key_no_reuse_and_no_verdict(project, sessions, capsys):
    assert _upgrade(project, "--candidate", CHANGES, "--harness-phases") == 1
    first = drive.judgement(project / "reports", project)
    ran = len(sessions.ran)
    assert _upgrade(project, "--candidate", CHANGES) == 1  # without it: every report reused
    assert len(sessions.ran) == ran
    assert drive.judgement(project / "reports", project) == first
    assert _upgrade(project, "--candidate", CHANGES, "--harness-phases") == 1  # with it again: reused too
    assert len(sessions.ran) == ran
    table = _profile(capsys.readouterr().out)
    assert "reused: not run" in next(line for line in table if _label(line) == "  baseline")


def test_a_wave_of_entries_is_labelled_by_what_it_runs(tmp_path):
    from pathlib import Path

    from harness.stack.run import entry_runs

    class E:
        def __init__(self, name):
            self.name = name

    base, cand, jax_only = E("baseline"), E("candidate"), E("jax-only")
    Run = entry_runs.Run
    assert entry_runs._label([Run(base), Run(cand)]) == "entries: baseline, candidate"
    assert entry_runs._label([Run(base, Path("s"), Path("x.json"))]) == \
        "replay: the baseline on the candidate's falsifying examples"
    assert entry_runs._label([Run(base, Path("s"), rollback=(Path("checkpoints/candidate"),
                                                             Path("checkpoints/jax-only")))]) == \
        "rollback: the baseline restores candidate, jax-only's checkpoints"
    assert entry_runs._label([Run(base, Path("s"), Path("x.json")), Run(jax_only, Path("s"))]) == \
        "replay: the baseline on the candidate's falsifying examples; jax-only (the selected checks)"