"""A code change whose golden values are re-recorded and committed: the pull-request check lists every value the
branch changed against the base branch's (before → after, what wrote it and why), and the team's table decides
what they do to the exit status: `re-recorded = "fail"` (the default) fails the check until they were recorded
with a reason, `"report"` lists them. A team's repository in git, only the process boundary faked
(tests/support/pull_request_driver.py: simulated entries, golden values recorded as the golden session writes them).
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess

import pytest

from support import golden_stack, sequence_driver, simulated_stack as sim
from support.pull_request_driver import Repository
from harness.stack.commands import fanout
from harness.stack.workspace import Workspace


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Repository:
    sessions = sequence_driver.install_boundary(monkeypatch, golden_stack.Sessions(sim.templates()))
    made = Repository(tmp_path, sessions)
    made.git("switch", "-q", "-c", "decay")
    made.on, made.branches["decay"] = "decay", made.branches["main"]  # the driver's model of it: unused here
    return made


def _changed_code(repo: Repository) -> None:
    """A code change that moves some of the team's checks (the simulated code's effect is a digest of it)."""
    for steps in range(1, 50):
        repo.edit_code(steps)
        moved = [c.id for c in sim.checks_of(repo.project / "contracts")
                 if golden_stack.code_effect(c.id, repo.code()) != golden_stack.code_effect(c.id, repo.branches["main"].code)]
        if len(moved) >= 2:
            return
    raise AssertionError("no code edit moves two checks")


def _rerecord(repo: Repository, reason: str | None) -> None:
    """`upgrade-harness golden --accept-changes [--reason R]` on the branch (its session faked), committed."""
    golden_stack.record(repo.project / "golden", repo.project, dict(sim.BASELINE),
                        accepted=("golden --accept-changes", reason))
    repo.commit("golden values re-recorded")


def _differing_keys(repo: Repository) -> set[tuple[str, str]]:
    """(family, key) of every golden value the branch's files hold otherwise than main's, read from git directly."""
    found = set()
    for path in sorted((repo.project / "golden").glob("*.json")):
        ours = json.loads(path.read_text())["values"]
        shown = subprocess.run(["git", "-C", str(repo.project), "show", f"main:golden/{path.name}"],
                               capture_output=True, text=True, check=True).stdout
        theirs = json.loads(shown)["values"]
        found |= {(path.stem, key) for key in set(ours) | set(theirs) if ours.get(key) != theirs.get(key)}
    return found


def _set_policy(repo: Repository, policy: str) -> None:
    pyproject = repo.project / "pyproject.toml"
    text = pyproject.read_text().replace('re-recorded = "fail"\n', "").replace('re-recorded = "report"\n', "")
    pyproject.write_text(text.replace("[tool.upgrade-harness]\n", f'[tool.upgrade-harness]\nre-recorded = "{policy}"\n'))
    repo.commit(f"re-recorded = {policy}")
    repo.ws = Workspace.of(repo.project)  # a command reads the table once (its workspace keeps it): a new command


def _listed(said) -> set[tuple[str, str]]:
    return {(v["family"], v["key"]) for v in said.summary["golden_changes"]["values"]}


def test_re_recorded_values_are_listed_and_fail_the_check_until_given_a_reason(repo):
    _changed_code(repo)
    before = repo.upgrade(repo.layout.pr_check)
    assert before.code == 1, before.out  # the team's code moved its checks: CHANGED, nothing re-recorded yet
    assert before.summary["golden_changes"] is None or not before.summary["golden_changes"]["values"]

    _rerecord(repo, reason=None)
    differing = _differing_keys(repo)
    assert len(differing) >= 2
    strict = repo.upgrade(repo.layout.pr_check)
    assert strict.code == 1, strict.out
    assert strict.summary["headline"].startswith(f"RE-RECORDED: {len(differing)} golden values changed against main's "
                                                 "without a reason; OK"), strict.summary["headline"]
    assert _listed(strict) == differing
    for family, key in differing:  # every key in the terminal, the PR comment and the HTML page
        assert f"CHANGED  {key}  " in strict.out
        assert f"`{key}`" in (repo.project / "reports" / "upgrade-summary.md").read_text()
        assert f"<code>{key}</code>" in (repo.project / "reports" / "upgrade-report.html").read_text().replace(
            "<wbr>", "")
    assert "written by `golden --accept-changes`, no reason given" in strict.out
    # CI's judge job: the plan job's golden-changes.json among the downloaded reports, judged the same
    published = json.loads((repo.project / "reports" / "upgrade-summary.json").read_text())
    with contextlib.redirect_stdout(io.StringIO()):
        assert fanout.judge_directory(Workspace.of(repo.project), [str(repo.project / "reports")],
                                      str(repo.project)) == 1
    judged = json.loads((repo.project / "reports" / "upgrade-summary.json").read_text())
    assert (judged["headline"], judged["golden_changes"]) == (published["headline"], published["golden_changes"])

    _set_policy(repo, "report")
    reported = repo.upgrade(repo.layout.pr_check)
    assert reported.code == 0, reported.out
    assert reported.summary["headline"].startswith("OK"), reported.summary["headline"]
    assert _listed(reported) == differing
    assert f"{len(differing)} without a reason (re-recorded = \"report\": listed, not failed)" in reported.out

    _set_policy(repo, "fail")
    _rerecord(repo, reason="the decay schedule doubled")  # as the strict check says: the same values, a reason
    explained = repo.upgrade(repo.layout.pr_check)
    assert explained.code == 0, explained.out
    assert _listed(explained) == differing
    assert "reason: the decay schedule doubled" in explained.out
    assert "(each recorded with a reason)" in explained.out


def test_a_value_edited_by_hand_is_said_so_and_needs_a_reason(repo):
    path = sorted((repo.project / "golden").glob("*.json"))[0]
    doc = json.loads(path.read_text())
    key = sorted(doc["values"])[0]
    doc["values"][key] = {"fact": "edited"}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    repo.commit("a golden value edited")
    said = repo.upgrade(repo.layout.pr_check)
    assert said.code == 1, said.out  # the check reads the edited value and fails too
    assert _listed(said) == {(path.stem, key)}
    assert "edited by hand (its values are not those its last recording wrote)" in said.out


def test_what_main_changed_since_the_branch_left_it_is_not_the_branchs(repo):
    """The branch is compared with where it left main (a pull request's diff), not with main's tip: golden values
    main re-recorded since are not listed as the branch's."""
    repo.switch("main")
    _changed_code(repo)
    _rerecord(repo, reason=None)
    repo.switch("decay")
    said = repo.upgrade(repo.layout.pr_check)
    compared = json.loads((repo.project / "reports" / "golden-changes.json").read_text())
    assert compared["base"] == "main" and compared["values"] == [], compared  # compared, and nothing is the branch's
    assert said.summary["golden_changes"] is None and "Golden values against" not in said.out, said.out




def test_an_unreadable_comparison_cannot_be_judged(repo, capsys):
    """The comparison decides the exit status under the strict policy: a file that cannot be read stops the verdict
    (exit 2, naming it), never an OK that lists nothing."""
    _changed_code(repo)
    _rerecord(repo, reason=None)
    assert repo.upgrade(repo.layout.pr_check).code == 1
    (repo.project / "reports" / "golden-changes.json").write_text("{not json")
    assert fanout.judge_directory(Workspace.of(repo.project), [str(repo.project / "reports")], str(repo.project)) == 2
    assert "golden-changes.json are unreadable" in capsys.readouterr().err


def test_a_shallow_clone_is_told_to_fetch_the_history(tmp_path):
    """Without the merge base, main's own re-recordings would read as the branch's: a shallow clone is refused with
    the fix, not judged against the base branch's tip."""
    from harness.errors import HarnessError
    from harness.stack.run.golden_changes import _fork_point

    origin = tmp_path / "origin"
    origin.mkdir()
    run = lambda where, *args: subprocess.run(["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t",
                                               *args], check=True, capture_output=True, text=True)
    run(origin, "init", "-q", "-b", "main")
    for n in range(3):  # main: three commits; the branch leaves it at the second
        (origin / "f").write_text(str(n))
        run(origin, "add", "f")
        run(origin, "commit", "-qm", f"c{n}")
    run(origin, "switch", "-qc", "branch", "HEAD~1")
    (origin / "g").write_text("x")
    run(origin, "add", "g")
    run(origin, "commit", "-qm", "branch")
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{origin}",
                    str(tmp_path / "shallow")], check=True, capture_output=True)
    with pytest.raises(HarnessError, match="shallow.*fetch-depth: 0"):
        _fork_point(tmp_path / "shallow", "origin/main")


def test_a_golden_file_whose_name_git_would_quote_is_read_at_the_revision(tmp_path):
    """`git ls-tree` quotes a name with non-ASCII letters unless told -z: the base's file would be missed and every
    value of it read as added (which needs no reason)."""
    from harness.stack.pins.pin_files import GitRevision
    from harness.stack.run.golden_changes import _documents_at

    (tmp_path / "golden").mkdir()
    (tmp_path / "golden" / "café.json").write_text(json.dumps({"family": "café", "values": {"k": {"fact": 1}}}))
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "golden"]):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)
    found = _documents_at(GitRevision(tmp_path.resolve(), "main"), tmp_path / "golden")
    assert list(found) == ["café.json"] and found["café.json"]["values"] == {"k": {"fact": 1}}
