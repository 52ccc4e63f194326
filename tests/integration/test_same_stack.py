"""One stack, one run: entries of one upgrade that install the same stack (equal report keys: the same
resolved lock, the same Python; the key leaves the entry's name out) run once, the second served from
the first's report, and the verdict says so in one line."""

import dataclasses
import json
from pathlib import Path

import pytest

from support import upgrade_reports
from harness.model import report_io
from harness.stack import paths
from harness.stack.commands import upgrade
from harness.stack.pins import current, matrix, plan
from harness.stack.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]

# A fake entry session: counts its runs (entry and report name) and writes the baseline's real report as its own.
FAKE_NOXFILE = '''
import json, os
from pathlib import Path
import nox
from harness.stack.workspace import Workspace


def _run(name):
    told = Workspace.from_environment().options  # from the session's job, as a real session reads it
    report = told.report_name or name
    with open("@COUNT@", "a") as fh:
        fh.write(f"{name} {report}\\n")
    doc = json.loads(Path("@REPORT@").read_text())
    doc.update(run_id=told.run_id, entry=dict(doc["entry"], name=name))
    Path(told.reports_dir, f"{report}.json").write_text(json.dumps(doc))


@nox.session(python=False)
def baseline(session):
    _run("baseline")


@nox.session(python=False)
def candidate(session):
    _run("candidate")
'''


@pytest.fixture
def same_stack(tmp_path, monkeypatch):
    """A checkout whose candidate pins the baseline's stack (its lock is the baseline's), and fake sessions
    that count their runs: the workspace, and the file the runs are counted in."""
    (tmp_path / "baseline.json").write_text(json.dumps(upgrade_reports.load("baseline")))
    count = tmp_path / "runs.txt"
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FAKE_NOXFILE.replace("@COUNT@", str(count)).replace("@REPORT@", str(tmp_path / "baseline.json")))
    ws = dataclasses.replace(Workspace.of(paths.SOURCE, tmp_path / "reports"), noxfile=noxfile)

    def accepted(*args, **kwargs):  # as after `nox -s accept`: the candidate is the baseline's stack
        base, cand = matrix.upgrade_plan(current.entries(ws))[:2]
        return [base, dataclasses.replace(cand, pins=dict(base.pins), locked=False,
                                          lock_file=str(ROOT / "locks" / "baseline.txt"))]

    monkeypatch.setattr(plan, "build", accepted)
    return ws, count


def test_two_entries_that_install_the_same_stack_run_once(same_stack, capsys):
    ws, count = same_stack
    assert upgrade.upgrade(ws, []) == 0
    assert count.read_text().splitlines() == ["baseline baseline"]  # one run, not two
    reports = ws.reports
    served = report_io.load(reports / "candidate.json")
    ran = report_io.load(reports / "baseline.json")
    assert served.entry.name == "candidate" and served.run_id == ran.run_id
    assert (served.reused.entry, served.reused.run_id) == ("baseline", ran.run_id)  # from this run's baseline
    assert served.checks == ran.checks
    out = capsys.readouterr().out
    assert "VERDICT  OK: no contract changed" in out
    line = "candidate installs the same stack as baseline: ran once"
    assert line in out
    assert "[complete, baseline's report (same stack)] no change" in out  # the candidate's row
    assert "candidate    waits     for baseline, which installs the same stack" in out
    assert line in (reports / "upgrade-summary.md").read_text()
    summary = json.loads((reports / "upgrade-summary.json").read_text())
    assert summary["headline"].startswith("OK: no contract changed")
    assert summary["same_stack"] == [{"entry": "candidate", "same_as": "baseline"}]


def test_with_fresh_the_same_stack_still_runs_once(same_stack, capsys):
    """--fresh reuses no earlier run's report; one run's own twin still serves."""
    ws, count = same_stack
    assert upgrade.upgrade(ws, []) == 0
    count.unlink()
    assert upgrade.upgrade(ws, ["--fresh"]) == 0
    assert count.read_text().splitlines() == ["baseline baseline"]
    served = report_io.load(ws.reports / "candidate.json")
    assert served.reused.run_id == report_io.load(ws.reports / "baseline.json").run_id
    assert "candidate installs the same stack as baseline: ran once" in capsys.readouterr().out

    # Again without --fresh: both reused from that run's report, still one stack, and said so.
    count.unlink()
    assert upgrade.upgrade(ws, []) == 0
    assert not count.exists()
    assert "candidate installs the same stack as baseline: ran once" in capsys.readouterr().out


def test_a_twin_whose_report_was_not_kept_runs_itself(same_stack, tmp_path):
    """The first entry's run gave no result to reuse (pytest could not finish): its twin runs, after it."""
    ws, count = same_stack
    doc = json.loads((tmp_path / "baseline.json").read_text())
    (tmp_path / "baseline.json").write_text(json.dumps(dict(doc, exit_status=3)))
    upgrade.upgrade(ws, [])
    assert count.read_text().splitlines() == ["baseline baseline", "candidate candidate"]
    assert report_io.load(ws.reports / "candidate.json").reused is None


def test_entries_of_other_stacks_run_side_by_side(same_stack, monkeypatch):
    ws, count = same_stack
    monkeypatch.setattr(plan, "build", lambda *a, **k: matrix.upgrade_plan(current.entries(ws))[:2])
    upgrade.upgrade(ws, [])
    assert sorted(count.read_text().splitlines()) == ["baseline baseline", "candidate candidate"]
    assert report_io.load(ws.reports / "candidate.json").reused is None
