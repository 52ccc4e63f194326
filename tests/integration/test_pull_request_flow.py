"""The pull-request flow as a state machine: a team's repository in git (main and bump branches), driven through
the commands a team runs, and after every pull-request check (and every plain `upgrade` on a bump branch) the
answer a reviewer needs, computed from the model of the repository alone (tests/support/pull_request_oracle.py;
the answers read in tests/support/pull_request_answers.py):

- pins files that disagree (requirements.in or pyproject.toml edited, its lock not made again): exit 2, naming
  both files and the pin;
- golden values accepted on the branch (`accept`), no code change since: exit 0, every check the base fails only
  because of that listed as accepted (ACCEPTED rows, "accepted on this branch" in the headline), with the bump
  that makes the base differ;
- a code change since the golden values were recorded: exit 1, the failures the team's code's, not the stack's;
- a bump that changes a check and was not accepted: exit 1, the change attributed to the bump's package;
- plain `upgrade` on a bump branch judges as the pull-request check does (the same verdict, and it says so) and
  never points at `lock`;
- every golden value the branch changed since it left main listed; under the table's default (re-recorded =
  "fail"), exit 1 while one was recorded without a reason (accept always gives one).

Rules (the commands, tests/support/pull_request_driver.py), on a team whose pins are requirements.in compiled into
requirements.txt or a pyproject.toml locked by uv.lock or (in Poetry's syntax) by poetry.lock, its built-in contracts reported (what `init` writes: each
entry's report in two parts, the built-in and the team's, joined): on main, a code change and `golden`; on either branch, a
line added to golden/CHANGELOG.md; a bump branch made from main (optax and/or jax bumped, the harness's lock
re-locked or left stale); on the branch, `accept` (after the check, as a team runs it), a code change, `golden
--accept-changes` with or without a reason, after an accept a third stack pinned and re-locked, an edit of the
declared pins without making the lock again; the branch merged into main (when it holds main's commits); the pull-request check (`upgrade --baseline-from main:PINS
--candidate-from PINS`, the generated workflow's) on main, and on the branch after every push to it (each branch
rule), and plain `upgrade` on the branch. Only the process boundary is faked (simulated_stack, golden_stack).
HARNESS_SEQUENCE_EXAMPLES=<n> runs n sequences instead of 25 (and shrinks a failing one); derandomized unless
HARNESS_PROFILE names a random profile.
"""
from __future__ import annotations

import collections
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from hypothesis.stateful import run_state_machine_as_test

from support import golden_stack, pull_request_oracle as oracle, sequence_driver, simulated_stack as sim
from support.pull_request_answers import JUDGING, assert_answer, disagreement, judgement
from support.pull_request_driver import LAYOUTS, Repository
from harness.stack.run import report_key

LONGER = os.environ.get("HARNESS_SEQUENCE_EXAMPLES")
EXAMPLES = int(LONGER or "25")
STEPS = 10
OPTAX = ["1.0.0", "1.1.0", "1.3.0", "1.4.0"]  # 1.2.0 does not import with jax 0.6.0: another test's subject
REACHED = {f"PR check: {what}" for what in ("refused", "accepted listed", "green, accepted listed", "the team's code",
                                            "the bump", "re-recorded listed", "re-recorded without a reason fails",
                                            "re-recorded with a reason, green")} | {
    f"plain upgrade exit {code}" for code in (0, 1, 2)} | {f"layout {name}" for name in LAYOUTS}


class PullRequestFlow(RuleBasedStateMachine):
    """The commands a team runs on its repository; the oracle's answer after every check (flow_machine binds it)."""

    base: Path  # where each sequence's repository is made
    sessions: golden_stack.Sessions  # the faked entries' sessions, shared
    tally: collections.Counter  # what the sequences did and saw

    @initialize(layout=st.sampled_from(sorted(LAYOUTS)), optax=st.sampled_from(OPTAX), jax=st.booleans(),
                relock=st.booleans())
    def repository(self, layout, optax, jax, relock):
        """The team's repository (its pins a requirements pair, uv's or Poetry's), golden values recorded on main, and a
        first bump branch made from it."""
        self.repo, self.branch, self.made = Repository(self.base, self.sessions, LAYOUTS[layout]), None, 0
        self.tally["sequences"] += 1
        self.tally[f"layout {layout}"] += 1
        self.bump_branch(optax, jax, relock)

    def model(self, name: str) -> oracle.Branch:
        return self.repo.branches[name]

    def check(self, name: str, kind: str) -> Said:
        """The pull-request check on branch `name`, asserted against the oracle."""
        head = self.repo.switch(name)
        said = self.repo.upgrade(self.repo.layout.pr_check)
        want = oracle.expected(self.model("main"), head)
        assert_answer(said, want, head, self.repo.layout)
        self.tally[f"{kind} exit {said.code}"] += 1
        self.tally.update(f"{kind}: {what}" for what, seen in (
            ("refused", want.refused), ("accepted listed", want.accepted),
            ("green, accepted listed", want.accepted and not want.exit_status),
            ("the team's code", want.failing_on_baseline), ("the bump", want.changed),
            ("re-recorded listed", want.rerecorded),
            ("re-recorded without a reason fails", want.unexplained and not (want.failing_on_baseline or want.changed)),
            ("re-recorded with a reason, green", want.rerecorded and not want.exit_status)) if seen)
        return said

    def pushed(self) -> None:
        """The branch pushed: the generated workflow runs the pull-request check on it."""
        self.tally["checks on a push"] += 1
        self.check(self.branch, "PR check")

    @rule(steps=st.integers(0, 3))
    def main_code_change(self, steps):
        self.repo.switch("main")
        self.repo.edit_code(steps)
        self.repo.commit("a code change")
        self.model("main").code = self.repo.code()
        self.tally["main code changes"] += 1

    @rule()
    def main_golden(self):
        """`upgrade-harness golden` on main (its session faked: support.golden_stack.record on the lock's pins)."""
        main = self.repo.switch("main")
        pins = self.repo.locked()
        golden_stack.record(self.repo.project / "golden", self.repo.project, pins)
        self.repo.commit("golden values")
        main.recorded(pins, None)
        self.tally["golden on main"] += 1

    @rule(optax=st.sampled_from(OPTAX), jax=st.booleans(), relock=st.booleans())
    def bump_branch(self, optax, jax, relock):
        main = self.repo.switch("main")
        pins = dict(main.pins, optax=optax, **({"jax": "0.6.0", "jaxlib": "0.6.0"} if jax else {}))
        if pins == main.pins:
            pins["optax"] = "1.4.0"
        self.made += 1
        self.branch = f"bump-{self.made}"
        self.repo.git("switch", "-q", "-c", self.branch)
        self.repo.on = self.branch
        self.repo.write_pins(pins, pins)
        if relock:  # `upgrade-harness lock` in the branch; else the lock is main's, stale
            self.repo.relock()
        self.repo.commit("bump")
        self.repo.branches[self.branch] = oracle.Branch(pins, dict(pins), main.code, dict(main.golden_pins),
                                                        main.golden_code, dict(main.writers),
                                                        fork=(dict(main.golden_pins), main.golden_code))
        self.tally["branches"] += 1
        self.pushed()

    @precondition(lambda self: not self.model(self.branch).stale
                  and self.model(self.branch).pins != self.model("main").pins)  # a bump to accept (not merged yet)
    @rule()
    def accept(self):
        """The check, then `upgrade-harness accept`, then the lock and golden/ committed."""
        head = self.model(self.branch)
        self.check(self.branch, "PR check")
        said = self.repo.accept()
        assert said.code == 0, said.out
        locked = self.repo.locked()  # the lock re-made from the branch's pins
        assert {p: locked.get(p) for p in head.pins} == head.pins, said.out
        recorded = self.repo.golden_stacks()  # the provenance: the candidate's stack
        assert recorded and all(v == golden_stack.stack(head.pins) for v in recorded.values()), said.out
        self.repo.commit("accept")
        head.recorded(head.pins, ("accept", "the judged candidate"))  # accept's reason: the verdict it adopts
        self.tally["accepts"] += 1
        self.pushed()  # green, each check the base fails only by the accept listed

    @precondition(lambda self: not self.model(self.branch).stale)
    @rule(reason=st.booleans())
    def branch_rerecord(self, reason):
        """`upgrade-harness golden --accept-changes [--reason ...]` on the branch (after a code change, to make its
        checks pass again), committed: the check lists every value it changed, and fails while one has no reason."""
        head = self.repo.switch(self.branch)
        pins, accepted = self.repo.locked(), ("golden --accept-changes", "the decay doubled" if reason else None)
        golden_stack.record(self.repo.project / "golden", self.repo.project, pins, accepted=accepted)
        self.repo.commit("golden values re-recorded")
        head.recorded(pins, accepted)
        self.tally[f"re-recordings on a branch{' with a reason' if reason else ''}"] += 1
        self.pushed()

    @precondition(lambda self: (lambda h: h.golden_pins == h.pins and not h.stale)(self.model(self.branch)))
    @rule(optax=st.sampled_from(OPTAX))
    def third_stack(self, optax):
        """After an accept, the branch bumped again and re-locked: a third stack, judged against main's."""
        head = self.repo.switch(self.branch)
        other = next(v for v in (optax, "1.1.0", "1.3.0") if v != head.pins["optax"])
        pins = dict(head.pins, optax=other)
        self.repo.write_pins(pins, pins)
        self.repo.relock()
        self.repo.commit("a third stack")
        head.pins, head.declared = pins, dict(pins)
        self.tally["third stacks"] += 1
        self.pushed()

    @precondition(lambda self: not self.model(self.branch).stale and self.repo.holds_main(self.branch))
    @rule()
    def merge(self):
        """The branch merged into main (up to date with it, as a required check asks): main is the branch's state,
        and the branch's values are main's (nothing left to list)."""
        head = self.model(self.branch)
        main = self.repo.switch("main")
        self.repo.git("merge", "-q", "--no-ff", "-m", f"merge {self.branch}", self.branch)
        main.pins, main.declared, main.code = dict(head.pins), dict(head.declared), head.code
        main.golden_pins, main.golden_code, main.writers = dict(head.golden_pins), head.golden_code, dict(head.writers)
        head.fork = (dict(head.golden_pins), head.golden_code)
        self.tally["merges"] += 1
        self.check("main", "PR check")

    @rule(on_main=st.booleans())
    def changelog(self, on_main):
        """A line added to golden/CHANGELOG.md (why the values are what they are), committed: it answers nothing."""
        self.repo.switch("main" if on_main else self.branch)
        with (self.repo.project / "golden" / "CHANGELOG.md").open("a") as log:
            log.write(f"- note {self.tally['changelog edits']}\n")
        self.repo.commit("the changelog")
        self.tally["changelog edits"] += 1
        if not on_main:
            self.pushed()

    @rule(steps=st.integers(0, 3))
    def branch_code_change(self, steps):
        head = self.repo.switch(self.branch)
        self.repo.edit_code(steps)
        self.repo.commit("a code change")
        head.code = self.repo.code()
        self.tally["branch code changes"] += 1
        self.pushed()

    @rule(optax=st.sampled_from(OPTAX))
    def stale_lock(self, optax):
        """requirements.in edited, requirements.txt not compiled again."""
        head = self.repo.switch(self.branch)
        self.tally["stale edits"] += 1
        head.declared = dict(head.declared, optax=optax if optax != head.pins["optax"] else "1.1.0"
                             if head.pins["optax"] != "1.1.0" else "1.3.0")
        self.repo.write_pins(head.declared, None)
        self.repo.commit("a pin edited")
        self.pushed()

    @rule(on_main=st.booleans())
    def pull_request_check(self, on_main):
        self.tally[f"PR checks on {'main' if on_main else 'the branch'}"] += 1
        self.check("main" if on_main else self.branch, "PR check")

    @precondition(lambda self: self.model(self.branch).declared != self.model("main").pins)  # a bump (not merged)
    @rule()
    def plain_upgrade(self):
        """`upgrade` without options on the bump branch: the check's answer, and the same verdict."""
        head = self.repo.switch(self.branch)
        said = self.repo.upgrade([])
        assert_answer(said, oracle.expected(self.model("main"), head), head, self.repo.layout)
        self.tally[f"plain upgrade exit {said.code}"] += 1
        checked = self.check(self.branch, "PR check")
        if head.stale:  # nothing judged: both refuse, naming the same pins
            assert disagreement(said.out, self.repo.layout) == disagreement(checked.out, self.repo.layout) != [], \
                said.out
        else:
            assert JUDGING in said.out, said.out
            assert judgement(said) == judgement(checked), said.out

    @invariant()
    def committed(self):
        if hasattr(self, "repo"):
            self.tally["steps"] += 1
            assert not self.repo.uncommitted(), self.repo.uncommitted()


def flow_machine(base: Path, sessions: golden_stack.Sessions, tally: collections.Counter) -> type[PullRequestFlow]:
    """The machine over one fresh repository per sequence, its faked boundary `sessions` shared."""
    return type("PullRequestFlow", (PullRequestFlow,), {"base": base, "sessions": sessions, "tally": tally})


def test_the_pull_request_flow_answers_what_a_reviewer_needs(tmp_path, monkeypatch, record_property):
    """Random sequences of a team's commands (derandomized under the `ci` profile), the oracle's answer after
    every check."""
    derandomize = report_key.profile_of(os.environ) == "ci"  # read before the boundary clears the harness's variables
    sessions = sequence_driver.install_boundary(monkeypatch, golden_stack.Sessions(sim.templates()))
    tally, started = collections.Counter(), time.perf_counter()
    try:
        run_state_machine_as_test(flow_machine(tmp_path, sessions, tally), settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
            derandomize=derandomize, report_multiple_bugs=False,
            phases=list(Phase) if LONGER else [p for p in Phase if p != Phase.shrink],
            suppress_health_check=list(HealthCheck)))
    finally:
        seen = ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()) if k not in ("steps", "sequences"))
        summary = (f"pull-request flow: {tally['steps']} steps in {tally['sequences']} sequences, "
                   f"{time.perf_counter() - started:.1f} s, {len(sessions.ran)} entry sessions simulated; {seen}")
        record_property("pull_request_flow_summary", summary)
        print(summary, file=sys.stderr)
    if derandomize and not LONGER:  # the default sequences reach every answer (a change of the rules may lose one)
        lost = sorted(REACHED - set(tally))
        assert not lost, f"the default sequences no longer reach {lost}: change EXAMPLES or the rules"


# --- what it found, as a plain sequence; and each answer's assertion catches the defect it is about ---------

@pytest.fixture
def flow(tmp_path, monkeypatch):
    """One sequence's machine, its rules called in order; its repository's first branch bumps both groups
    (optax 1.4.0, jax 0.6.0) with the harness's lock left main's."""
    sessions = sequence_driver.install_boundary(monkeypatch, golden_stack.Sessions(sim.templates()))
    machine = flow_machine(tmp_path, sessions, collections.Counter())()
    machine.repository(layout="requirements", optax="1.4.0", jax=True, relock=False)
    return machine


def test_accepted_checks_are_listed_with_the_bump_that_makes_the_base_differ(flow):
    """The machine's first find: each accepted row named both bumps ("each alone"), where one alone made the base
    differ (a single entry that still fails the check, as the base does, was counted as moving it)."""
    flow.accept()  # and the check on its push
    flow.plain_upgrade()


def test_a_verdict_blind_to_where_the_golden_values_were_recorded_is_caught(flow, monkeypatch):
    from harness.verdict import own

    monkeypatch.setattr(own, "accepted", lambda base, candidate, check: False)
    with pytest.raises(AssertionError, match="exit status 1 .published 1., the oracle's 0"):
        flow.accept()  # the check on its push: CHANGED by the base's failures


def test_a_plain_upgrade_that_ignores_the_branchs_bump_is_caught(flow, monkeypatch):
    """Judging the table's candidate against the working tree's pins, with the lock main's: not the bump."""
    from harness.stack.pins import branch_hint

    monkeypatch.setattr(branch_hint, "bump", lambda ws, invoked_from: None)
    with pytest.raises(AssertionError, match="upgrade-harness lock"):
        flow.plain_upgrade()


def test_pins_files_that_disagree_judged_anyway_are_caught(flow, monkeypatch):
    from harness.stack.pins import agreement

    monkeypatch.setattr(agreement, "check", lambda path, files: None)
    with pytest.raises(AssertionError, match=r"exit status 1, the oracle's 2 \(refused\)"):
        flow.stale_lock(optax="1.3.0")  # the check on its push: judged


def test_a_code_change_blamed_on_the_stack_is_caught(flow, monkeypatch):
    """The baseline's own failures said as the stack's doing in the headline."""
    from harness.verdict import own

    real = own.headline_part
    monkeypatch.setattr(own, "headline_part", lambda found: (real(found) or "").replace("your code", "the stack"))
    flow.main_code_change(steps=3)
    with pytest.raises(AssertionError, match="the headline does not say the team's code changed"):
        flow.pull_request_check(on_main=True)


def test_a_verdict_blind_to_re_recorded_golden_values_is_caught(flow, monkeypatch):
    """A code change on the branch, its golden values re-recorded without a reason and committed: a verdict that
    does not list them (the check judged against the branch's own new values) is caught."""
    from harness.verdict import rerecorded

    monkeypatch.setattr(rerecorded, "applied", lambda verdict, changes, reports: verdict)
    flow.branch_code_change(steps=3)
    with pytest.raises(AssertionError, match="golden values listed"):
        flow.branch_rerecord(reason=False)  # the check on its push


def test_after_an_accept_the_next_checks_judge_the_builtin_contracts(flow):
    """Issue 59: after `accept` of a bump, every later check headed "not judged, the baseline fails N of them" once
    the bump was the baseline. The next upgrade on the branch and, once merged, on main exits 0, and the built-in
    checks the new baseline fails against their golden values (the stand-in stack's changes) are judged against its
    own values instead."""
    flow.accept()  # the check, accept, the check on its push (each against the oracle)
    on_branch = flow.repo.upgrade([])
    assert on_branch.code == 0 and "not judged" not in on_branch.out, on_branch.out
    flow.merge()  # and the check on main
    on_main = flow.repo.upgrade([])
    assert on_main.code == 0, on_main.out
    assert "not judged" not in on_main.out and "failing on the baseline itself" not in on_main.out, on_main.out
    headline = next(line for line in on_main.out.splitlines() if line.startswith("VERDICT"))
    assert "built-in contracts (reported only): unchanged (" in headline, headline
    assert "judged against the baseline's own values on this host" in headline, headline
