"""`upgrade-harness accept` in a team's project: with its pins file still on the judged baseline, the
whole flow printed as one block and nothing changed (exit 2); once the file pins the judged candidate,
the lock and the team's golden values recorded all at once (exit 0); pins that are neither, refused.
Locking and recording are fakes writing into the staged copy (accept_child.Fakes)."""

from __future__ import annotations

import copy
import json
import subprocess
import textwrap

import pytest

from support.accept_child import Fakes
from harness import env_vars
from harness.stack.commands import accept
from harness.stack.pins import branch_hint
from harness.stack.workspace import Workspace
from integration.test_accept import BASE, CAND, _as_entry


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout


def _requirements(pins: dict[str, str]) -> str:
    return "".join(f"{p}=={v}\n" for p, v in pins.items())


@pytest.fixture
def team(tmp_path, recorded_suite, pytester, monkeypatch):
    """A team's git project judged by a verdict: baseline BASE, candidate CAND (one golden value moved)."""
    _, base = recorded_suite()
    golden = pytester.path / "golden" / "demo.json"
    golden.write_text(golden.read_text().replace("0.10000000149011612", "0.125"))
    _, cand = recorded_suite()
    root = tmp_path / "team"
    for folder in ("contracts", "golden", "locks", "reports"):
        (root / folder).mkdir(parents=True)
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "team"

        [tool.upgrade-harness]
        baseline-from = "requirements.txt"
        contracts = ["contracts"]
        builtin = "report"
    """))
    (root / "requirements.txt").write_text(_requirements(BASE))
    (root / "golden" / "demo.json").write_text('{"values": {"a": 1}}\n')
    (root / "locks" / "baseline.txt").write_text("# the old baseline's lock\n")
    (root / ".gitignore").write_text("reports/\n")
    (root / "reports" / "baseline.json").write_text(json.dumps(_as_entry(base, "baseline", BASE)))
    (root / "reports" / "candidate.json").write_text(json.dumps(_as_entry(cand, "candidate", CAND)))
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "start")
    monkeypatch.setenv(env_vars.PROJECT, str(root))
    return root


def _files(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts and "reports" not in p.parts}


def test_before_the_pins_are_bumped_the_whole_flow_is_printed_and_nothing_changes(team, capsys):
    before, fakes = _files(team), Fakes()
    assert accept.accept_team(Workspace.from_environment(), [], steps=fakes.steps()) == 2
    out = capsys.readouterr().out
    assert "1. in requirements.txt, pin jax==0.12.0.1, jaxlib==0.12.0.1, optax==0.2.8" in out
    assert "2. upgrade-harness accept" in out and "3. commit requirements.txt, the lock and golden/" in out
    assert _files(team) == before and not fakes.locked and not fakes.recorded


def test_once_the_pins_file_pins_the_candidate_the_lock_and_golden_values_are_recorded_at_once(team, capsys):
    (team / "requirements.txt").write_text(_requirements(CAND))  # the bump, as the pull request makes it
    fakes = Fakes()
    assert accept.accept_team(Workspace.from_environment(), [], steps=fakes.steps()) == 0
    assert [e.pins["optax"] for e in fakes.locked] == ["0.2.8"] and len(fakes.recorded) == 1
    assert (team / "locks" / "baseline.txt").read_text().startswith("# lock of baseline")
    assert (team / "golden" / "demo.json").read_text() == '{"values": {"a": 2}}\n'
    assert not (team / "reports" / ".staged").exists()
    assert "commit requirements.txt, locks/ and golden/ together" in capsys.readouterr().out


def test_a_failed_recording_changes_nothing(team, capsys):
    (team / "requirements.txt").write_text(_requirements(CAND))
    before = _files(team)
    assert accept.accept_team(Workspace.from_environment(), [], steps=Fakes(golden_status=1).steps()) == 2
    err = capsys.readouterr().err
    assert "Nothing was changed" in err
    assert _files(team) == before
    # Said in the team's terms: its command, its contracts (not the checkout's nox session and harness/builtin).
    assert "`upgrade-harness golden --accept-changes` exited 1" in err and "nox -s" not in err, err
    assert "harness/builtin" not in err and "your contracts" in err
    assert "golden:   demo/test_exact: KeyError: 'x'" in err  # each failing check's reason, as golden said it


def test_pins_that_are_neither_side_are_refused(team, capsys):
    (team / "requirements.txt").write_text(_requirements(dict(CAND, optax="0.2.7")))
    assert accept.accept_team(Workspace.from_environment(), [], steps=Fakes().steps()) == 2
    err = capsys.readouterr().err
    assert "neither the judged baseline" in err
    # What judges these pins against the committed baseline: a plain `upgrade` would take them as the baseline
    # (and refuse: the committed lock no longer matches them).
    branch = branch_hint.default_branch(team) or "HEAD"  # the committed baseline: the default branch's
    assert f"--baseline-from {branch}:requirements.txt --candidate-from requirements.txt" in err, err


def test_the_departures_the_recording_made_are_listed(team, capsys):
    """A statement of the team's contracts that the new baseline breaks is recorded as its departure: accept
    names each one, with its size, beside the files it wrote."""
    (team / "requirements.txt").write_text(_requirements(CAND))
    assert accept.accept_team(Workspace.from_environment(), [], steps=Fakes(departs=True).steps()) == 0
    out = capsys.readouterr().out
    assert "accept: departures recorded (1): statements the new baseline breaks" in out
    assert ("  `demo/test_update`: reference:half the gradient departs from its stated float64 formula (3 of 4 "
            "elements outside 64 ulp; max abs err 0.25 (4.19e+06 ulp))\n") in out


def test_accept_says_the_verdict_the_upgrade_gave_under_the_tables_builtin_mode(team, capsys):
    """builtin = "report": the team's own check holds and only a built-in one moved, so the upgrade said OK;
    accept adopts that verdict, not the built-in contracts' CHANGED judged as if they decided."""
    for name in ("baseline", "candidate"):
        path = team / "reports" / f"{name}.json"
        doc = json.loads(path.read_text())
        passing = next(c for c in doc["checks"] if c["outcome"] == "passed")
        doc["checks"].append(dict(copy.deepcopy(passing), id="mine/test_mine", family="mine", own=True,
                                  nodeid="contracts/test_mine.py::test_mine"))
        doc["own_families"] = ["mine"]
        path.write_text(json.dumps(doc))
    (team / "requirements.txt").write_text(_requirements(CAND))
    assert accept.accept_team(Workspace.from_environment(), [], steps=Fakes().steps()) == 0
    said = next(line for line in capsys.readouterr().out.splitlines() if "pins the judged candidate" in line)
    assert "; OK: your contracts hold on candidate" in said and "CHANGED" not in said.split("; ", 1)[1].split(
        "built-in", 1)[0], said


@pytest.mark.parametrize("mode, said", [
    ("report", "accept: built-in contracts (reported only): their golden values are not recorded again (the tool's, "
               "or your copy in golden/builtin/); where the new baseline fails them, every later check judges each "
               "one against the baseline's own values on the same host, baseline against candidate\n"),
    ("judge", "where the new baseline fails them the check cannot judge (exit 2): record your copy from it with "
              "`upgrade-harness golden --record-builtin --accept-changes --reason \"...\"` and commit golden/builtin/ "
              "too\n"),
    ("false", None)])
def test_accept_says_what_becomes_of_the_builtin_contracts(team, capsys, mode, said):
    """Accept records only the team's own values: it says how the later checks judge the built-in ones, whose golden
    values were recorded on another stack (issue 59)."""
    table = (team / "pyproject.toml").read_text()
    (team / "pyproject.toml").write_text(table.replace('builtin = "report"', f"builtin = {json.dumps(mode)}"
                                                       if mode != "false" else "builtin = false"))
    (team / "requirements.txt").write_text(_requirements(CAND))
    assert accept.accept_team(Workspace.from_environment(), [], steps=Fakes().steps()) == 0
    out = capsys.readouterr().out
    if said is None:
        assert "built-in contracts" not in out, out
    else:
        assert said in out, out
