"""The PR comment of a team's bump says what concerns the team (issue 59): each built-in change in the tests of a
callable its code calls is marked with the call site, and the "Next:" line follows the pull request from the bump
(`accept`) to the accepted branch (nothing to do, its re-recorded values counted in the headline with the reason).
A team's repository in git with its built-in contracts reported (tests/support/pull_request_driver.py), every
command the real one in-process, only the process boundary faked (simulated_stack, golden_stack)."""

from __future__ import annotations

import re

import pytest

from support import golden_stack, sequence_driver, simulated_stack as sim
from support.pull_request_driver import Repository


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Repository:
    sessions = sequence_driver.install_boundary(monkeypatch, golden_stack.Sessions(sim.templates()))
    made = Repository(tmp_path, sessions)
    made.git("switch", "-q", "-c", "bump-optax")
    made.write_pins(dict(sim.BASELINE, optax="1.4.0"), dict(sim.BASELINE, optax="1.4.0"))
    made.relock()
    made.commit("bump optax")
    return made


def _comment(repo: Repository) -> str:
    return (repo.project / "reports" / "upgrade-summary.md").read_text()


def _call_line(repo: Repository, name: str) -> int:
    """The line of the team's code that calls `name`, read from the file itself."""
    lines = (repo.project / "trainer" / "optim.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if f"{name}(" in line)


def _built_in_rows(comment: str) -> dict[str, list[str]]:
    """The built-in section's rows of the comment, by contract."""
    section = comment.split("### Built-in contracts changed on", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("| **"):
            rows.setdefault(re.search(r"`([^`]+)`", line).group(1), []).append(line)
    return rows


def test_the_comment_of_a_bump_marks_the_built_in_rows_of_what_the_teams_code_calls_then_follows_the_accept(repo):
    said = repo.upgrade(repo.layout.pr_check)
    assert said.code in (0, 1), said.out
    comment = _comment(repo)
    site = f"trainer/optim.py:{_call_line(repo, 'optax.MultiSteps')}"
    calls = said.summary["team_calls"]
    assert any(c["callable"] == "optax.MultiSteps" and c["where"] == site for c in calls), calls
    rows = _built_in_rows(comment)
    taken = {t.split("[", 1)[0] for c in calls for t in c["tests"]}  # a test, or one check of it ("...[optax.sgd]")
    marked = [contract for contract, lines in rows.items() if all("your code: trainer/optim.py:" in r for r in lines)]
    assert marked and all(contract in taken for contract in marked), rows
    assert any(f"your code: {site} (optax.MultiSteps)" in r for contract in marked for r in rows[contract])
    # Every built-in row of a test some call takes is marked; the others are not.
    assert all(("your code:" in r) == (contract in taken) for contract, lines in rows.items() for r in lines)
    assert '**Next: to adopt this bump, `upgrade-harness upgrade && upgrade-harness accept --reason "..."`' in comment

    accepted = repo.accept()
    assert accepted.code == 0, accepted.out
    repo.commit("accept")
    after = repo.upgrade(repo.layout.pr_check)
    assert after.code == 0, after.out
    comment = _comment(repo)
    assert "**Next: nothing to do.**" in comment
    headline = comment.splitlines()[0]
    assert headline.startswith("## ✅ Upgrade verdict: OK") and "golden values against main's: " in headline
    assert "(reason: the judged candidate" in headline  # accept's reason: the verdict it adopted
