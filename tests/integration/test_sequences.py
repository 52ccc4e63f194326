"""Reuse never changes an answer: sequences of commands on one project (upgrades with several candidates,
--bisect, --fresh, --reports DIR, contract edits, edits of the team's code (the built-in part of each report kept
and reused apart, or its selection grown), a numerics variable, damaged cache records, killed entries, a stopped
run), checked after every step (tests/support/sequence_driver.py):

- every finished run's judgement (headline, per-check marks, bisection answers) equals that of the same
  command with --fresh on the same state;
- a reports directory holds its last finished judgement: a run that could not start or was stopped
  never displaces it, and nothing a finished run published is lost (the next one moves it to previous/);
- a report whose checks could not run (partial, or with modules that could not be collected) is never
  kept for reuse nor reused.

Only the process boundary is faked (tests/support/simulated_stack.py): child sessions, resolver, index.
HARNESS_SEQUENCE_EXAMPLES=<n> runs n sequences instead of 25 and shrinks a failing one (a nightly job's
longer run); derandomized
unless HARNESS_PROFILE names a random profile (as the harness's own runs choose theirs).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time

import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from support import sequence_driver as drive
from harness.stack.run import report_cache, report_key

LONGER = os.environ.get("HARNESS_SEQUENCE_EXAMPLES")
EXAMPLES = int(LONGER or "25")
STEPS = 12  # at most, per sequence: 25 sequences gave 285 steps (about 15 s here)

candidates = st.sampled_from(sorted(drive.CANDIDATES))


def sequences_machine(base, sessions, tally: dict) -> type[RuleBasedStateMachine]:
    """The state machine over one fresh project per sequence, its faked boundary `sessions` shared."""

    class Sequences(RuleBasedStateMachine):
        @initialize()
        def project(self):
            self.seq = drive.Sequence(base, sessions)
            tally["sequences"] += 1

        @rule(candidate=candidates, bisect=st.booleans(), elsewhere=st.booleans())
        def upgrade(self, candidate, bisect, elsewhere):
            self.seq.upgrade(candidate, bisect=bisect, elsewhere=elsewhere)

        @rule(candidate=candidates, bisect=st.booleans())
        def upgrade_fresh(self, candidate, bisect):
            self.seq.upgrade(candidate, bisect=bisect, fresh=True)

        @rule(module=st.sampled_from(["alpha", "beta"]), scale=st.integers(0, 3))
        def edit_contract(self, module, scale):
            self.seq.edit_contract(module, scale)

        @rule(steps=st.integers(0, 3), more_calls=st.booleans())
        def edit_code(self, steps, more_calls):
            self.seq.edit_code(steps, more_calls)

        @rule(flags=st.sampled_from(drive.XLA_FLAGS))
        def set_xla_flags(self, flags):
            self.seq.set_xla_flags(flags)

        @rule(which=st.integers(0, 50), how=st.sampled_from(drive.DAMAGES), elsewhere=st.booleans())
        def damage_cache(self, which, how, elsewhere):
            self.seq.damage_cache(which, how, elsewhere)

        @rule(candidate=candidates, entry=st.sampled_from(["baseline", "candidate"]),
              how=st.sampled_from(["no report", "partial"]))
        def upgrade_killed(self, candidate, entry, how):
            self.seq.upgrade_killed(candidate, entry, how)

        @rule(candidate=candidates, after=st.integers(0, 3), bisect=st.booleans())
        def upgrade_interrupted(self, candidate, after, bisect):
            self.seq.upgrade_interrupted(candidate, after, bisect)

        @invariant()
        def holds(self):
            if hasattr(self, "seq"):
                tally["steps"] += 1
                self.seq.check()

    return Sequences


def test_reuse_never_changes_an_answer(tmp_path, monkeypatch, record_property):
    """Random sequences of commands (derandomized under the `ci` profile), every invariant after every step."""
    derandomize = report_key.profile_of(os.environ) == "ci"  # read before the boundary clears the harness's variables
    sessions = drive.install_boundary(monkeypatch)
    tally, started = {"sequences": 0, "steps": 0}, time.perf_counter()
    machine = sequences_machine(tmp_path, sessions, tally)
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
            derandomize=derandomize, report_multiple_bugs=False,
            # Shrinking a failing sequence can take Hypothesis's full five minutes: the default run reports
            # the sequence as found (12 steps at most); the longer run shrinks it.
            phases=list(Phase) if LONGER else [p for p in Phase if p != Phase.shrink],
            suppress_health_check=list(HealthCheck)))
    finally:
        summary = (f"sequences of commands: {tally['steps']} steps in {tally['sequences']} sequences, "
                   f"{time.perf_counter() - started:.1f} s, {len(sessions.ran)} entry sessions simulated")
        record_property("sequence_summary", summary)
        print(summary)


# --- the defects it found, each a plain regression test ------------------------------------------------

@pytest.fixture
def seq(tmp_path, monkeypatch) -> drive.Sequence:
    return drive.Sequence(tmp_path, drive.install_boundary(monkeypatch))


def test_a_bisection_after_a_candidate_that_cannot_import_bridges_as_a_fresh_one_does(seq):
    """optax 1.2.0 cannot import with the candidate's jax: its probe there is that earlier candidate's stack.
    Its kept report (no check observed) must not answer for the probe, which then names 1.2.0 as where
    every check first changed; run fresh, the probe is not importable and the release is bridged."""
    seq.upgrade("cannot import")
    seq.upgrade("changes checks", bisect=True)  # compared with --fresh inside


def test_a_candidate_that_cannot_import_is_run_again_not_reused(seq):
    """Its modules were never collected: nothing of it was observed that a later run could reuse."""
    seq.upgrade("cannot import")
    seq.upgrade("cannot import")
    seq.check()


def test_a_mistyped_candidate_leaves_the_last_verdict_in_place(seq):
    """A candidate that does not resolve could not start: the last finished run's verdict and files stay."""
    seq.upgrade("changes checks")
    seq.upgrade("mistyped")
    assert seq.last.code == 2
    seq.check()


def test_the_last_runs_locks_stay_beside_its_plan_in_previous(seq):
    """previous/upgrade-plan.json names its entries' locks relative to itself (locks/<entry>.txt): a new run
    replaces reports/locks/ whole, and the last run's locks must not go with it."""
    seq.upgrade("changes checks")
    seq.upgrade("optax alone")  # another candidate: other locks
    plan = json.loads((seq.project / "reports" / "previous" / "upgrade-plan.json").read_text())
    named = [row["lock_file"] for row in plan if row["lock_file"] and not row["lock_file"].startswith("/")]
    assert named and all((seq.project / "reports" / "previous" / name).is_file() for name in named), named


# --- each invariant catches the defect it is about (the defect put in on purpose) -----------------------

def test_reuse_that_ignores_a_numerics_variable_is_caught(seq, monkeypatch):
    """Reuse across an XLA_FLAGS change answers for another computation: the --fresh comparison says so."""
    real = report_key.run_environment
    monkeypatch.setattr(report_key, "run_environment", lambda environ: {
        k: v for k, v in real(environ).items() if k != "XLA_FLAGS"})
    seq.upgrade("changes checks")
    seq.set_xla_flags(drive.XLA_FLAGS[1])
    with pytest.raises(AssertionError, match="reuse changed an answer"):
        seq.upgrade("changes checks")


def test_a_partial_report_kept_for_reuse_is_caught(seq, monkeypatch):
    """A killed candidate's half report kept (as complete) and reused: the --fresh comparison says so."""
    real = report_cache.store

    def keeps_partial(cache, key, report_file, log_file, folder=None, **how):
        text = report_file.read_text() if report_file.exists() else ""
        if '"partial"' in text:
            report_file.write_text(text.replace('"status": "partial"', '"status": "complete"'))
            try:
                return real(cache, key, report_file, log_file, folder, **how)
            finally:
                report_file.write_text(text)
        return real(cache, key, report_file, log_file, folder, **how)

    monkeypatch.setattr(report_cache, "store", keeps_partial)
    seq.upgrade_killed("changes checks", "candidate", "partial")
    seq.check()  # kept as if complete: only what it answers next tells
    with pytest.raises(AssertionError, match="reuse changed an answer"):
        seq.upgrade("changes checks")


def test_a_run_that_drops_the_last_runs_files_is_caught(seq, monkeypatch):
    """A run that loses a file of the last one instead of moving it to previous/."""
    from harness.stack.commands import upgrade

    seq.upgrade("changes checks")
    monkeypatch.setattr(upgrade.run_directory, "keep_previous", lambda reports, names, folders=(): [
        (reports / name).unlink() for name in ("baseline.log",) if (reports / name).exists()])
    seq.upgrade("the baseline")  # its own locks: none of the last run's is replaced
    with pytest.raises(AssertionError, match=r"are gone .*'baseline\.log'"):
        seq.check()


def test_a_stopped_run_that_writes_into_the_reports_directory_is_caught(seq, monkeypatch):
    """Without its own run directory, a stopped run leaves its entries' reports among the last run's."""
    from harness.stack.commands import upgrade

    seq.upgrade("changes checks")
    seq.set_xla_flags(drive.XLA_FLAGS[1])  # nothing to reuse: the entries run, and the first is stopped
    monkeypatch.setattr(upgrade.run_directory, "start", lambda ws, run_id: ws)
    assert seq.upgrade_interrupted("optax alone", after=1).code is None
    with pytest.raises(AssertionError, match="files changed or moved"):
        seq.check()


# --- a report in parts: the built-in part reused across edits of the team's code -------------------------

def test_an_edit_of_the_teams_code_runs_its_contracts_alone_and_reuses_the_built_in_part(seq):
    """After a code-only edit (the same callables called) each entry runs only the team's contracts: its
    built-in part is the earlier run's, and the verdict says so; the answer is the fresh one. A call of another
    callable grows the selection: the built-in part runs again, with the new tests."""
    def upgrade() -> list[tuple[str, str]]:
        """The parts the run's sessions ran; its judgement checked against the same command's with --fresh."""
        seq.sessions.parts_ran.clear()
        run = seq.upgrade("optax alone", compare=False)
        ran = list(seq.sessions.parts_ran)
        assert (drive.judgement(run.reports, seq.project), run.code) == seq.fresh_twin("optax alone", False)
        seq.check()
        return ran

    assert {("baseline", "builtin"), ("baseline", "own"), ("candidate", "builtin"), ("candidate", "own")} <= set(
        upgrade())
    seq.edit_code(steps=2, more_calls=False)
    ran = upgrade()
    assert ran and {part for _, part in ran} == {"own"}, ran
    summary = json.loads((seq.project / "reports" / "upgrade-summary.json").read_text())
    assert summary["baseline"]["reused"] is None and set(summary["baseline"]["reused_parts"]) == {"builtin"}
    assert "the built-in contracts not run, their report reused from run" in (
        seq.project / "reports" / "upgrade-summary.md").read_text()
    seq.edit_code(steps=2, more_calls=True)  # clip_by_global_norm and chain now called: more built-in tests
    assert ("baseline", "builtin") in upgrade()
    baseline = json.loads((seq.project / "reports" / "baseline.json").read_text())
    assert any(c["id"].startswith("clipping/") for c in baseline["checks"]) and not baseline.get("reused_parts")


def test_reuse_of_a_built_in_part_keyed_with_no_selection_is_caught(seq, monkeypatch):
    """A built-in part's key that left out which tests run (the selection the code's calls decide) would serve
    the part of fewer tests after a call of another callable: the --fresh comparison says so."""
    real = report_key._suite
    monkeypatch.setattr(report_key, "_suite", lambda ws, found, environ, part: real(
        ws, dataclasses.replace(found, selection=None), environ, part))
    seq.upgrade("optax alone")
    seq.edit_code(steps=0, more_calls=True)
    with pytest.raises(AssertionError, match="reuse changed an answer"):
        seq.upgrade("optax alone")
