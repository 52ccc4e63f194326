"""`nox -s accept`: its refusals, matrix.toml's rewrite, and golden/CHANGELOG.md, in a temporary git
checkout with small reports from the synthetic suite. Locking and golden recording are fakes here
(the end-to-end run on a scratch clone exercises the real ones). Accept killed at any step leaves the
checkout as before or (once the next start finished its commit) as after, never between."""

import collections
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import accept_child
from support.accept_child import KILLED, Fakes, Killing
from harness.model import report_io
from harness.stack import paths, staging
from harness.stack.commands import accept, upgrade
from harness.stack.pins import matrix
from harness.stack.workspace import Workspace
from harness.verdict import compare
from unit.stack.commands.test_accept import BASE, CAND, HEADER, MATRIX  # noqa: F401 (shared with it)


OLD_CHANGELOG = "# Golden values changelog\n\n## 2020-01-01 00:00 UTC: an earlier acceptance\n\n- Reason: kept as is\n"


def _as_entry(doc: dict, name: str, versions: dict[str, str]) -> dict:
    doc = copy.deepcopy(doc)
    doc["entry"].update(name=name, python="3.12", requested=dict(versions), locked=True)
    doc["environment"]["versions"].update(versions, python="3.12.1")
    return doc


@pytest.fixture
def docs(recorded_suite, pytester):
    """A clean baseline report and a candidate whose golden value moved (one regressed check)."""
    _, base = recorded_suite()
    golden = pytester.path / "golden" / "demo.json"
    golden.write_text(golden.read_text().replace("0.10000000149011612", "0.125"))
    _, cand = recorded_suite()
    cand["checks"] = [dict(c, message=c["message"] + " and more" * 60) if c["outcome"] == "failed" else c
                      for c in cand["checks"]]
    return _as_entry(base, "baseline", BASE), _as_entry(cand, "candidate", CAND)


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def checkout(tmp_path):
    """A git checkout with matrix.toml, a committed golden file and an earlier changelog entry."""
    root = tmp_path / "checkout"
    (root / "golden").mkdir(parents=True)
    (root / "reports").mkdir()
    (root / "harness").mkdir()
    (root / paths.MATRIX_FILE).write_text(MATRIX)
    (root / "locks").mkdir()
    (root / "locks" / "baseline.txt").write_text("# the old baseline's lock\n")
    (root / "golden" / "demo.json").write_text('{"values": {"a": 1}}\n')
    (root / "golden" / "CHANGELOG.md").write_text(OLD_CHANGELOG)
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    _git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start")
    return root


def _write(root, base: dict, cand: dict) -> None:
    (root / "reports" / "baseline.json").write_text(json.dumps(base))
    (root / "reports" / "candidate.json").write_text(json.dumps(cand))


def _refused(checkout, capsys, words: str) -> None:
    fakes = Fakes()
    assert accept.accept(Workspace.checkout(checkout), [], steps=fakes.steps()) == 2
    err = capsys.readouterr().err
    assert "refused" in err and words in err, err
    assert (checkout / paths.MATRIX_FILE).read_text() == MATRIX and not fakes.locked and not fakes.recorded
    assert (checkout / "golden" / "CHANGELOG.md").read_text() == OLD_CHANGELOG


def test_refuses_without_reports(checkout, capsys):
    _refused(checkout, capsys, "run `nox -s upgrade` first")


def test_refuses_while_an_upgrade_is_writing_the_reports(checkout, docs, capsys):
    from harness.stack.run import run_directory

    _write(checkout, *docs)
    with run_directory.hold(checkout / "reports", ["nox", "-s", "upgrade"]):
        _refused(checkout, capsys, "another upgrade is writing to")


def test_refuses_a_stale_verdict(checkout, docs, capsys):
    base, cand = docs
    base["environment"]["versions"]["optax"] = "0.2.5"  # the matrix's baseline moved since the upgrade
    _write(checkout, base, cand)
    _refused(checkout, capsys, "the verdict is stale: reports/baseline.json ran optax 0.2.5 (matrix.toml: 0.2.6)")


def test_refuses_a_verdict_that_could_not_judge(checkout, docs, capsys):
    base, cand = docs
    base["checks"][0]["outcome"] = "failed"  # the baseline fails its own check: CANNOT JUDGE
    _write(checkout, base, cand)
    _refused(checkout, capsys, "could not judge the candidate (CANNOT JUDGE")


def test_refuses_an_incomplete_candidate(checkout, docs, capsys):
    base, cand = docs
    cand.update(status="partial", problem="interrupted by a test")
    _write(checkout, base, cand)
    _refused(checkout, capsys, "the candidate's report is partial (interrupted by a test)")


@pytest.mark.parametrize("change", ["modified", "untracked"])
def test_refuses_uncommitted_golden_changes(checkout, docs, capsys, change):
    _write(checkout, *docs)
    target = checkout / "golden" / ("demo.json" if change == "modified" else "new.json")
    target.write_text('{"values": {"a": 3}}\n')
    fakes = Fakes()
    assert accept.accept(Workspace.checkout(checkout), [], steps=fakes.steps()) == 2
    err = capsys.readouterr().err
    assert "golden/ has uncommitted changes" in err and target.name in err and "Commit or discard" in err
    assert (checkout / paths.MATRIX_FILE).read_text() == MATRIX and not fakes.locked


def test_accept_adopts_the_candidate_and_appends_to_the_changelog(checkout, docs, capsys):
    _write(checkout, *docs)
    fakes = Fakes()
    assert accept.accept(Workspace.checkout(checkout), ["--reason", "optax 0.2.8 dtype changes\nare intended"],
                         steps=fakes.steps()) == 0
    assert matrix.load_pins(checkout / paths.MATRIX_FILE) == matrix.Pins("3.12", CAND, CAND)
    assert (checkout / paths.MATRIX_FILE).read_text().startswith(HEADER + "\n\n")
    assert {e.name: e.pins for e in fakes.locked} == {"baseline": CAND, "candidate": CAND, "jaxlib-skew": CAND}
    assert fakes.recorded == [checkout]
    assert (checkout / "locks" / "jaxlib-skew.txt").read_text().startswith("# lock of jaxlib-skew\n")
    assert not staging.Stage(checkout).dir.exists()  # moved into place, the staging directory removed
    log = (checkout / "golden" / "CHANGELOG.md").read_text()
    assert log.startswith(OLD_CHANGELOG + "\n## ")  # the earlier entry is kept, byte for byte
    entry = log[len(OLD_CHANGELOG):]
    assert re.search(r"^## \d{4}-\d\d-\d\d \d\d:\d\d UTC: jax 0.11.2 → 0.12.0.1, jaxlib 0.11.2 → 0.12.0.1, "
                     r"optax 0.2.6 → 0.2.8$", entry, re.M)
    assert "- From: python 3.12, jax 0.11.2, jaxlib 0.11.2, optax 0.2.6, flax 0.12.12, numpy 2.5.5" in entry
    # The verdict's own words and marks (harness.verdict's to choose), on the same reports.
    verdict = compare.judge(*(report_io.parse(d) for d in docs[:1]), [report_io.parse(docs[1])])
    mark = next(c.mark for c in verdict.entries[0].changes if c.check_id == "demo/test_golden_value")
    assert f"- Verdict: {verdict.headline}\n" in entry and verdict.exit_status == 1
    assert "- Reason: optax 0.2.8 dtype changes are intended" in entry
    assert "- Accepted changes (1):" in entry
    change = next(line for line in entry.splitlines() if "test_golden_value" in line)
    # In the verdict's user terms: before → after and the size, not the harness's label prefix.
    assert change.startswith(f"  - `demo/test_golden_value`: {mark.value}: [0.125, 0.200000003] → [0.100000001, ")
    assert "golden:" not in change and len(change.split(f": {mark.value}: ", 1)[1]) <= 200
    assert "golden/demo.json | 2 +-" in entry
    assert "next: review `git diff`, then commit harness/matrix.toml locks/ golden/" in capsys.readouterr().out


def test_the_departures_the_recording_made_are_listed_and_logged(checkout, docs, capsys):
    """A statement the new baseline breaks is recorded as its departure (harness.contract.departures): accept
    names each one (check, statement, size) where its reviewer reads, and so does its changelog entry."""
    _write(checkout, *docs)
    assert accept.accept(Workspace.checkout(checkout), ["--reason", "adopt"], steps=Fakes(departs=True).steps()) == 0
    out = capsys.readouterr().out
    said = ("`demo/test_update`: reference:half the gradient departs from its stated float64 formula (3 of 4 "
            "elements outside 64 ulp; max abs err 0.25 (4.19e+06 ulp))")
    assert "accept: departures recorded (1): statements the new baseline breaks" in out and f"  {said}\n" in out
    entry = (checkout / "golden" / "CHANGELOG.md").read_text()[len(OLD_CHANGELOG):]
    assert "- Departures recorded (1): statements the new baseline breaks" in entry and f"  - {said}\n" in entry


def test_a_changelog_is_created_with_its_header(checkout, docs):
    _write(checkout, *docs)
    (checkout / "golden" / "CHANGELOG.md").unlink()
    _git(checkout, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "no changelog")
    assert accept.accept(Workspace.checkout(checkout), [], steps=Fakes().steps()) == 0
    log = (checkout / "golden" / "CHANGELOG.md").read_text()
    assert log.startswith(accept.HEADER + "\n## ") and "- Reason: (none given)" in log


def test_a_failed_recording_says_what_state_things_are_in(checkout, docs, capsys):
    _write(checkout, *docs)
    fakes = Fakes(golden_status=1)
    assert accept.accept(Workspace.checkout(checkout), [], steps=fakes.steps()) == 2
    err = capsys.readouterr().err
    assert "`nox -s golden -- --accept-changes` exited 1" in err and "    1 failed, 5 passed" in err
    assert "1 checks did not pass while recording: demo/test_exact\ngolden:   demo/test_exact: KeyError: 'x'\n" in err
    assert "change those contracts in harness/builtin first" in err
    # Everything was prepared aside: nothing in the checkout moved, and the staged copy is gone.
    assert "Nothing was changed" in err and "NOT done" not in err
    assert (checkout / paths.MATRIX_FILE).read_text() == MATRIX
    assert (checkout / "golden" / "CHANGELOG.md").read_text() == OLD_CHANGELOG
    assert (checkout / "locks" / "baseline.txt").read_text() == "# the old baseline's lock\n"
    assert not staging.Stage(checkout).dir.exists()


def test_a_candidate_on_the_baseline_versions_has_nothing_to_accept(checkout, docs, capsys):
    base, _ = docs
    _write(checkout, base, _as_entry(base, "candidate", BASE))
    fakes = Fakes()
    assert accept.accept(Workspace.checkout(checkout), [], steps=fakes.steps()) == 0
    assert "nothing to accept" in capsys.readouterr().out
    assert (checkout / paths.MATRIX_FILE).read_text() == MATRIX and not fakes.locked and not fakes.recorded


def test_reports_dir_is_taken_from_where_the_command_was_typed(checkout, docs, capsys, tmp_path):
    """`accept -- --reports DIR` adopts the verdict `upgrade -- --reports DIR` wrote, DIR taken from the
    shell's directory; a DIR without a verdict is refused naming it, and nothing is changed."""
    shell = tmp_path / "elsewhere"
    (shell / "runs" / "one").mkdir(parents=True)
    base, cand = docs
    (shell / "runs" / "one" / "baseline.json").write_text(json.dumps(base))
    (shell / "runs" / "one" / "candidate.json").write_text(json.dumps(cand))
    fakes = Fakes()
    assert accept.accept(Workspace.checkout(checkout), ["--reports", "runs"], steps=fakes.steps(), invoked_from=shell) == 2
    err = capsys.readouterr().err
    assert f"({shell / 'runs' / 'baseline.json'} and {shell / 'runs' / 'candidate.json'} missing)" in err, err
    assert f"`nox -s accept -- --reports {shell / 'runs'}`" in err
    assert accept.accept(Workspace.checkout(checkout), ["--reports", "nowhere"], steps=fakes.steps(), invoked_from=shell) == 2
    assert f"{shell / 'nowhere'} is not a directory" in capsys.readouterr().err
    assert (checkout / paths.MATRIX_FILE).read_text() == MATRIX and not fakes.locked and not fakes.recorded
    assert accept.accept(Workspace.checkout(checkout), ["--reports", "runs/one"], steps=fakes.steps(), invoked_from=shell) == 0
    assert matrix.load_pins(checkout / paths.MATRIX_FILE).baseline == CAND and fakes.recorded == [checkout]


# --- accept killed part-way ---------------------------------------------------------------------------

def _files(root: Path) -> dict[str, bytes]:
    """Every file accept may change, by its path in the checkout: harness/matrix.toml, locks/, golden/."""
    found = {}
    for top in ("harness", "locks", "golden"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


SOURCE = Path(accept.__file__).resolve().parents[3]  # this harness, not an installed one
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), str(Path(accept_child.__file__).parent)])}


def _killed_child(root: Path, at: tuple[int, str]) -> int:
    """accept in a child process that accept_child's Killing ends at `at`; the child's exit status."""
    done = subprocess.run([sys.executable, accept_child.__file__, str(root), str(at[0]), at[1]], env=CHILD_ENV,
                          cwd=root, capture_output=True, text=True, check=False)
    return done.returncode if done.returncode == KILLED else (done.returncode, done.stdout, done.stderr)


def _after_and_steps(checkout, tmp_path) -> tuple[dict[str, bytes], Killing]:
    """The full after-state of an uninterrupted accept (on a copy of the checkout), and its counted steps."""
    whole = tmp_path / "whole"
    shutil.copytree(checkout, whole, symlinks=True)
    counting = Killing()
    assert accept.accept(Workspace.checkout(whole), [], steps=counting.steps()) == 0
    return _files(whole), counting


def test_accept_killed_at_any_step_leaves_the_checkout_as_before_or_after(checkout, docs, tmp_path, capsys):
    _write(checkout, *docs)
    before = _files(checkout)
    after, counting = _after_and_steps(checkout, tmp_path)
    assert after != before and counting.names.count("replace") == 6  # matrix, 3 locks, demo.json, CHANGELOG.md
    ends = collections.Counter()
    for at in [(n, when) for n in range(1, counting.calls + 1) for when in ("before", "after")]:
        work = tmp_path / f"killed-{at[0]}-{at[1]}"
        shutil.copytree(checkout, work, symlinks=True)
        assert _killed_child(work, at) == KILLED, at
        committing = staging.Stage(work).journal.exists()  # killed in the commit phase: its journal is there
        assert committing or _files(work) == before, at
        capsys.readouterr()
        # The next start finishes (or clears) what was left; then the checkout is the whole after-state.
        code = accept.accept(Workspace.checkout(work), [], steps=Fakes().steps())
        out, err = capsys.readouterr()
        assert _files(work) == after, at
        assert not staging.Stage(work).dir.exists(), at
        if committing:  # rolled forward: the pins moved, so the verdict on the old ones is stale now
            assert code == 2 and "the verdict is stale" in err, (at, err)
            assert out.count("accept: finished an interrupted accept or golden recording: moved ") == 1, (at, out)
            ends["rolled forward"] += 1
        else:
            assert code == 0, (at, err)
            ends["redone"] += 1
            ends["stage cleared"] += ("accept: removed the staged files of an accept or golden recording that was "
                                      "stopped") in out
    # 6 moves: killed before any of them (journal written), between them, and after the last: 12 points.
    assert ends["rolled forward"] == 12 and ends["redone"] == 2 * counting.calls - 12
    assert ends["stage cleared"] >= 1, ends


def test_an_upgrade_start_finishes_an_interrupted_accept(checkout, docs, tmp_path, capsys):
    """`upgrade` rolls forward too, before it reads the pins (here it then refuses its bad argument)."""
    _write(checkout, *docs)
    before = _files(checkout)
    after, counting = _after_and_steps(checkout, tmp_path)
    second_move = [i for i, name in enumerate(counting.names, 1) if name == "replace"][1]
    assert _killed_child(checkout, (second_move, "before")) == KILLED
    assert _files(checkout) not in (before, after)  # one file moved: only the journal makes this whole
    assert staging.Stage(checkout).journal.exists()
    capsys.readouterr()
    assert upgrade.upgrade(Workspace.checkout(checkout), ["--no-such-option"]) == 2
    out, err = capsys.readouterr()
    assert out.count("finished an interrupted accept or golden recording: moved 5 staged files into place") == 1, out
    assert "bad arguments" in err and _files(checkout) == after


_CHILD = """
import os, sys
from pathlib import Path
from harness.stack.commands import accept
from harness.stack.workspace import Workspace

root, gate, where = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
moved = []

def wait_for_the_kill():
    with open(gate) as fifo:  # opens once the test holds the fifo's other end, then blocks: killed here
        fifo.read()

def record(stage, reason=None):
    stage.copy_of(root / "golden" / "demo.json").write_text('{"values": {"a": 2}}\\n')
    if where == "recording":
        wait_for_the_kill()
    return 0

def replace(src, dst):
    os.replace(src, dst)
    moved.append(dst)
    if where == "commit" and len(moved) == 2:
        wait_for_the_kill()

sys.exit(accept.accept(Workspace.checkout(root), [], steps=accept.Steps(
    lock=lambda stage, entries: None, record_golden=record, replace=replace)))
"""


@pytest.mark.parametrize("where", ["recording", "commit"])
def test_accept_sigkilled_in_its_own_session(checkout, docs, tmp_path, capsys, where):
    """A real accept process (its own session, as a terminal's Ctrl-C or a CI timeout kills it) gets SIGKILL
    for its whole process group at a point it announces itself: while recording, or between two moves."""
    _write(checkout, *docs)
    before = _files(checkout)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(checkout), str(gate), where], cwd=checkout,
                             env=CHILD_ENV, start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    while True:  # the child opens the fifo for reading once it is at its point; until then there is no reader
        try:
            held = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert child.poll() is None, f"accept ended before the point it should be killed at:\n{child.stdout.read()}"
            time.sleep(0.01)
    os.killpg(child.pid, signal.SIGKILL)
    output = child.communicate()[0]
    os.close(held)
    assert child.returncode == -signal.SIGKILL, output
    assert (_files(checkout) == before) == (where == "recording"), output
    assert staging.Stage(checkout).journal.exists() == (where == "commit")
    code = accept.accept(Workspace.checkout(checkout), [], steps=Fakes().steps())
    out, err = capsys.readouterr()
    if where == "recording":  # nothing had moved: the staged files are cleared and accept runs again
        assert code == 0 and "removed the staged files of an accept or golden recording that was stopped" in out, \
            err
    else:  # the journal was written: the other moves are made, then the verdict is stale
        assert code == 2 and "finished an interrupted accept or golden recording: moved " in out and "the verdict is stale" in err
    assert matrix.load_pins(checkout / paths.MATRIX_FILE).baseline == CAND
    assert (checkout / "golden" / "demo.json").read_text() == '{"values": {"a": 2}}\n'
    assert (checkout / "golden" / "CHANGELOG.md").read_text().startswith(OLD_CHANGELOG + "\n## ")
    assert not staging.Stage(checkout).dir.exists()
