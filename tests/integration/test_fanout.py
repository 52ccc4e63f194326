"""An upgrade's steps one by one (CI's matrix jobs) and `judge DIR`: the same follow-ups and the same verdict as
`nox -s upgrade`, from real reports of the default matrix (upgrade_reports) written where and as each entry's
session writes them; a missing, foreign or corrupt report stops the judge naming the file and the fix."""

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import upgrade_reports
from harness import env_vars
from harness.model import entry_job
from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.pins import matrix, plan
from harness.stack.commands import fanout
from harness.stack.entry_side import entry_jobs, rollback as rollback_runs
from harness.stack.run import entry_runs
from unit.stack.commands.test_fanout import CHECKOUT, libraries  # noqa: F401 (shared with it)

ROOT = Path(__file__).resolve().parents[2]
PROPERTY = "accumulation/test_property_emits_mean_and_zeros"  # passes on the baseline fixture
ROLLBACK = [f"{rollback_runs.PREFIX}layout[bfloat16]", f"{rollback_runs.PREFIX}continuation[bfloat16]"]
ROLLS_BACK_CHANGED = ("candidate", "optax-only")  # whose checkpoints the baseline restores with a cast
SUMMARIES = ("upgrade-summary.md", "upgrade-summary.json", "upgrade-report.html")


def _with_property_regression(doc: dict) -> dict:
    """The candidate failing a property the baseline passes, with the example Hypothesis would print."""
    check = next(c for c in doc["checks"] if c["id"] == PROPERTY)
    check.update(outcome="failed", exception="ContractFailure", message="reference:emitted mean: off",
                 falsifying_example="grads=...", reproduce_failure="'6.170.17', b'AEICaQ=='")
    check["comparisons"][1]["passed"] = False
    return doc


def _rollback_check(check_id: str, failed: bool) -> dict:
    """A rollback check as a report holds it: passing (an entry reading its own checkpoints), or failing as
    the baseline restoring a checkpoint whose leaves it must cast."""
    check = next(c for c in upgrade_reports.load("baseline")["checks"] if c["id"] == PROPERTY)
    check.update(id=check_id, nodeid=f"harness/builtin/test_checkpoints.py::{check_id.split('/')[1]}",
                 family="checkpoints")
    if failed:
        check.update(outcome="failed", exception="ContractFailure", message="only works by casting for 1 leaf")
        check["comparisons"][0]["passed"] = False
    return check


def _with_rollback_checks(doc: dict) -> dict:
    """A report with the checkpoints family's rollback checks, each passing (its own checkpoints restored);
    an attribution entry's selection holds them."""
    selection = doc.get("selection")
    return dict(doc, checks=[*doc["checks"], *(_rollback_check(i, failed=False) for i in ROLLBACK)],
                selection=None if selection is None else [*selection, *ROLLBACK])


def _rollback_of(writer: str) -> dict:
    """The baseline's report of restoring `writer`'s checkpoints: its rollback checks only."""
    doc = upgrade_reports.load("baseline")
    return dict(doc, checks=[_rollback_check(i, failed=writer in ROLLS_BACK_CHANGED and "layout" in i)
                             for i in ROLLBACK], selection=ROLLBACK)


def _sources(changed: bool) -> dict[str, dict]:
    """Report documents by entry: the candidate changed (the fixture's 21 contracts and a failing property),
    or the baseline's own checks again (nothing changed); each with the rollback checks, and the baseline's
    rollback of each entry's checkpoints (a cast for the candidate and optax-only, when changed)."""
    found = {name: _with_rollback_checks(upgrade_reports.load(name)) for name in upgrade_reports.ENTRIES}
    found["candidate"] = _with_property_regression(found["candidate"]) if changed else found["baseline"]
    writers = ("candidate", "jax-only", "optax-only")
    found |= {rollback_runs.report_name(w): _rollback_of(w if changed else "baseline") for w in writers}
    return found


class Sessions:
    """What each entry's session writes: its report (run id, entry and pins as the plan told it)."""

    def __init__(self, sources: dict[str, dict], reused: bool = False):
        self.sources, self.runs, self.reused = sources, [], reused  # reused: every report taken from the cache
        self.waves: list[list[str]] = []  # the upgrade's follow-up processes, by name, wave by wave

    def write(self, directory: Path, entry: matrix.Entry, report: str, run_id: str) -> None:
        doc = json.loads(json.dumps(self.sources["baseline" if report == entry_runs.REPLAY else
                                                 report if report.startswith(rollback_runs.REPORT) else entry.name]))
        doc["entry"].update(name=entry.name, requested=dict(entry.pins))
        if self.reused:
            doc["reused"] = {"run_id": "20260101T000000-1-aaaaaa", "finished_at": doc.get("finished_at"), "key": "0" * 64,
                             "entry": entry.name}
        (directory / f"{report}.json").write_text(json.dumps(dict(doc, run_id=run_id)))
        self.runs.append(report)

    def run_entries(self, ws, entries, seed, only=None, replay=None, rollback=None, typed_in=None):  # upgrade's
        for entry in entries:
            report = entry_runs.REPLAY if replay else rollback_runs.report_name(rollback.name) if rollback else entry.name
            if rollback is not None:
                assert rollback == ws.reports / "checkpoints" / rollback.name and only.read_text().split() == ROLLBACK
            self.write(ws.reports, entry, report, ws.options.run_id)

    def run_sessions(self, ws, runs, seed, typed_in=None):  # the upgrade's follow-ups: one process a run, its reports
        self.waves.append([run.name for run in runs])
        for run in runs:
            if run.rollback:
                assert all(f == ws.reports / "checkpoints" / f.name for f in run.rollback)
                assert run.only.read_text().split() == ROLLBACK
            for report in run.reports:
                self.write(ws.reports, run.entry, report, ws.options.run_id)

    def run_rows(self, directory: Path, rows: list[dict], run_id: str) -> None:  # one CI job per row
        for row in rows:  # each session told its job file (HARNESS_JOB), as the workflow's rows tell it
            for job in (row["job"], row["then_job"]):  # then: in the same job, after the row's entry
                if job:
                    told = entry_job.read(Path(job))
                    assert told.options.run_id == run_id and told.options.reports_dir == directory
                    self.write(directory, entry_jobs.entry_of(told), told.options.report_name, run_id)


def _checkout(reports: Path) -> Workspace:
    """This checkout, its reports in `reports`."""
    return Workspace.of(paths.SOURCE, reports)


def _follow_ups(argv, invoked_from):
    return fanout.follow_ups(CHECKOUT, argv, invoked_from)


def _plan(unused: Path):
    """The plan step as its session calls it, in a workspace whose reports `--reports` replaces."""
    return lambda argv, invoked_from: fanout.plan(_checkout(unused), argv, invoked_from)


def _local(tmp_path, monkeypatch, sessions: Sessions) -> tuple[int, Path]:
    """`nox -s upgrade` on the default matrix, its entries' sessions writing `sessions`' reports."""
    reports = tmp_path / "local"
    reports.mkdir()
    monkeypatch.setattr(upgrade, "run_entries", sessions.run_entries)
    monkeypatch.setattr(upgrade, "run_sessions", sessions.run_sessions)
    return upgrade.upgrade(_checkout(reports), []), reports


@pytest.fixture(scope="module")
def changed_run(tmp_path_factory) -> tuple[int, Path]:
    """One upgrade of a changed candidate (made once: the tests judge copies of its directory)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _local(tmp_path_factory.mktemp("changed"), monkeypatch, Sessions(_sources(changed=True)))


@pytest.fixture
def published(changed_run, tmp_path) -> tuple[int, Path]:
    """A copy of the changed run's published reports directory, without its verdict."""
    code, local = changed_run
    copy = tmp_path / "published"
    shutil.copytree(local, copy, ignore=shutil.ignore_patterns(*SUMMARIES))
    return code, copy


def _step(step, argv, capsys, tmp_path, monkeypatch) -> tuple[int, dict, dict]:
    """Run a step as its CI job does: its exit status, the matrix it printed last, its $GITHUB_OUTPUT."""
    output = tmp_path / "github-output"
    output.unlink(missing_ok=True)
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code = step(argv, None)
    printed = capsys.readouterr().out.strip().splitlines()
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return code, json.loads(printed[-1]) if code == 0 else {}, outputs


def _row(entry: str, report: str, directory: Path, then: dict | None = None):
    """A matrix row as the steps print it ("" for none): its entry, report and job file in `directory`; `then`:
    the run that follows in the same job."""
    row = {"entry": entry, "report": report, "job": str(directory / "jobs" / f"{report}.json")}
    return row | {f"then_{k}": v for k, v in (then or dict.fromkeys(row, "")).items()}


def _ci(tmp_path, monkeypatch, capsys, sessions: Sessions) -> tuple[Path, dict, list[dict]]:
    """plan, the baseline and candidate jobs, followups, the follow-up jobs: the directory the judge job
    downloads every artifact into, the plan's outputs and the follow-up rows."""
    ci = tmp_path / "ci"
    # the steps are told their directory
    code, first, out = _step(_plan(tmp_path / "unused"), ["--reports", str(ci)], capsys, tmp_path, monkeypatch)
    assert code == 0 and out["count"] == "2" and out["run_id"] and out["seed"].isdigit()
    assert json.loads(out["matrix"]) == first
    assert first["include"] == [_row(e, e, ci) for e in ("baseline", "candidate")]
    jobs = [entry_job.read(Path(row["job"])) for row in first["include"]]
    assert [(j.entry.name, j.options.seed, j.options.only, j.options.rollback_from) for j in jobs] == [
        (e, int(out["seed"]), None, ()) for e in ("baseline", "candidate")]  # one seed, every check
    sessions.run_rows(ci, first["include"], out["run_id"])
    monkeypatch.setenv(env_vars.RUN_ID, out["run_id"])
    code, follow, follow_out = _step(_follow_ups, [str(ci)], capsys, tmp_path, monkeypatch)
    assert code == 0 and follow_out["count"] == str(len(follow["include"])) and follow_out["run_id"] == out["run_id"]
    sessions.run_rows(ci, follow["include"], out["run_id"])
    return ci, out, follow["include"]




def test_a_rollback_change_is_blamed_on_the_bump_whose_checkpoints_the_baseline_cannot_restore(changed_run):
    """The candidate's rollback check changes; optax-only's checkpoints restored by the baseline change it too,
    jax-only's do not: the change is optax's, not "only with the bumps together"."""
    _, local = changed_run
    verdict = json.loads((local / "upgrade-summary.json").read_text())
    text = json.dumps(verdict)
    assert ROLLBACK[0] in text
    rows = {e["name"]: {c["check_id"]: c["mark"] for c in e["changes"]} for e in verdict["entries"]}
    assert rows["candidate"][ROLLBACK[0]] == rows["optax-only"][ROLLBACK[0]] != "unchanged"
    assert rows["jax-only"].get(ROLLBACK[0], "unchanged") == "unchanged"
    contract = {e["name"]: {c["check_id"] for c in e["changes"] if c["mark"] not in ("unchanged", "bits changed")}
                for e in verdict["entries"]}
    together = contract["candidate"] - contract["optax-only"] - contract["jax-only"]
    assert ROLLBACK[0] not in together and f", {len(together)} only with the bumps together" in verdict["headline"]


def test_judge_on_a_published_reports_directory_copied_elsewhere_gives_the_upgrades_verdict(changed_run, tmp_path):
    code, local = changed_run
    copied = tmp_path / "downloaded"
    copied.mkdir()
    for report in [*local.glob("*.json"), local / "upgrade-plan.json"]:
        if not report.name.startswith("upgrade-summary"):
            shutil.copy(report, copied / report.name)
    assert fanout.judge_directory(CHECKOUT, [str(copied)], None) == code == 1
    for name in SUMMARIES:
        assert (copied / name).read_text() == (local / name).read_text(), name


def test_an_unchanged_candidate_has_only_its_rollback_to_follow_and_judges_clean(tmp_path, monkeypatch, capsys):
    """Whether the baseline can read the candidate's checkpoints is asked even when no check changed."""
    local_code, local = _local(tmp_path, monkeypatch, Sessions(_sources(changed=False)))
    capsys.readouterr()
    ci, out, rows = _ci(tmp_path, monkeypatch, capsys, Sessions(_sources(changed=False)))
    told = [entry_job.read(Path(r["job"])) for r in rows]  # what each row's session is told
    assert [(t.options.report_name, t.options.rollback_from) for t in told] == [
        ("baseline-rollback-candidate", (ci / "checkpoints" / "candidate",))]
    assert not any((ci / name).exists() for name in ("attribution-selection.txt", "replay-selection.txt"))
    assert fanout.judge_directory(CHECKOUT, [str(ci)], None) == local_code == 0
    assert (ci / "upgrade-summary.json").read_text() == (local / "upgrade-summary.json").read_text()


def test_the_nox_session_judges_a_directory_with_the_verdicts_exit_status(published):
    _, local = published
    # The package's sessions, as `upgrade-harness judge` runs them; DIR from the directory it was typed in.
    done = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "harness" / "stack" / "sessions.py"),
                           "-s", "judge", "--", local.name], capture_output=True, text=True, cwd=local.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert all((local / name).is_file() for name in SUMMARIES)


def _drop(name):
    return lambda d: (d / name).unlink()


def _foreign_run(d):
    doc = json.loads((d / "candidate.json").read_text())
    (d / "candidate.json").write_text(json.dumps(dict(doc, run_id="20260101T000000-1-aaaaaa")))


@pytest.mark.parametrize("spoil, words", [
    (_drop("upgrade-plan.json"), ["upgrade-plan.json is missing", "gh run download"]),
    (_drop("candidate.json"), ["candidate.json is missing", "candidate's report", "gh run download"]),
    (_drop("optax-only.json"), ["optax-only.json is missing", "attribution entry optax-only", "nox -s optax-only"]),
    (_drop("baseline-replay.json"), ["baseline-replay.json is missing", "baseline replay"]),
    (lambda d: (d / "candidate.json").write_text("{not json"), ["candidate's report is unusable", "unreadable",
                                                                "re-run its job"]),
    (_foreign_run, ["candidate.json is from run 20260101T000000-1-aaaaaa", "another run"]),
    (lambda d: shutil.copy(d / "baseline.json", d / "candidate.json"),
     ["candidate.json is not this plan's candidate", "it ran entry baseline"]),
    (lambda d: (d / "upgrade-plan.json").write_text("[]"), ["plans no baseline and no candidate"]),
])
def test_a_missing_foreign_or_corrupt_report_cannot_be_judged(published, capsys, spoil, words):
    _, local = published
    spoil(local)
    assert fanout.judge_directory(CHECKOUT, [str(local)], None) == 2
    err = capsys.readouterr().err
    assert err.startswith("judge: ") and all(w in err for w in words), err
    assert not any((local / name).exists() for name in SUMMARIES)


def test_a_candidate_that_does_not_resolve_stops_the_plan_and_the_judge_says_why(tmp_path, monkeypatch, capsys):
    from harness.errors import HarnessError
    from harness.stack.run import run_plan

    def unresolvable(*args, **kwargs):
        raise HarnessError("jax 0.0.404 is not on the index")

    monkeypatch.setattr(run_plan.plan, "build", unresolvable)
    ci = tmp_path / "ci"  # --reports sets it
    code, _, outputs = _step(_plan(tmp_path / "unused"), ["--reports", str(ci), "--candidate", "jax==0.0.404"], capsys,
                             tmp_path, monkeypatch)
    assert code == 2 and outputs == {} and not (ci / plan.PLAN_FILE).exists()
    assert json.loads((ci / "candidate.json").read_text())["run_id"]  # of the run that could not plan
    assert fanout.judge_directory(CHECKOUT, [str(ci)], None) == 2
    err = capsys.readouterr().err
    assert "upgrade-plan.json is missing" in err and "its candidate does not resolve (jax 0.0.404 is not on" in err


def test_an_attribution_entry_the_plan_could_not_resolve_is_reported_not_run(tmp_path, monkeypatch, capsys):
    ci, out, _ = _ci(tmp_path, monkeypatch, capsys, Sessions(_sources(changed=True)))
    entries = plan.read(ci / plan.PLAN_FILE)
    entries["optax-only"] = dataclasses.replace(entries["optax-only"], problem="optax 0.2.8 needs a newer jax")
    plan.write(list(entries.values()), ci / plan.PLAN_FILE)
    for name in ("optax-only.json", "attribution-selection.txt"):
        (ci / name).unlink()
    code, follow, _ = _step(_follow_ups, [str(ci)], capsys, tmp_path, monkeypatch)
    assert code == 0 and [row["report"] for row in follow["include"]] == ["baseline-replay", "baseline-rollback-candidate",
                                                                     "jax-only"]
    written = json.loads((ci / "optax-only.json").read_text())
    assert (written["status"], written["problem"], written["run_id"]) == (
        "unresolvable", "optax 0.2.8 needs a newer jax", out["run_id"])
    assert fanout.judge_directory(CHECKOUT, [str(ci)], None) == 1  # a partial attribution, said in the verdict
    assert "optax 0.2.8 needs a newer jax" in (ci / "upgrade-summary.md").read_text()


def test_upgrade_harness_judge_in_a_teams_project_judges_a_directory_from_the_shells_directory(
        published, tmp_path, monkeypatch):
    """`upgrade-harness judge DIR` typed in a subdirectory: DIR from there, though nox runs in the project's root."""
    from harness import cli
    from harness.stack.commands import init

    code, run = published
    project = tmp_path / "team"
    project.mkdir()
    pins = upgrade_reports.load("baseline")["entry"]["requested"]
    (project / "requirements.txt").write_text("".join(f"{k}=={v}\n" for k, v in pins.items()))
    assert init.main([], project) == 0
    (project / "ci").mkdir()
    shutil.copytree(run, project / "ci" / "downloaded")
    monkeypatch.chdir(project / "ci")
    monkeypatch.delenv(env_vars.INVOKED_FROM, raising=False)
    assert cli.main(["judge", "downloaded"]) == code == 1
    assert all((project / "ci" / "downloaded" / name).is_file() for name in SUMMARIES)
    assert not (project / "downloaded").exists()


def test_the_plan_step_refuses_bisect_and_bad_arguments(tmp_path, monkeypatch, capsys):
    unused = _checkout(tmp_path / "unused")
    assert fanout.plan(unused, ["--reports", str(tmp_path / "ci"), "--bisect"], None) == 2
    assert "the steps one by one do not bisect" in capsys.readouterr().err
    assert not (tmp_path / "ci" / plan.PLAN_FILE).exists()
    assert fanout.plan(unused, ["--frobnicate"], None) == 2
    assert "nox -s plan: bad arguments" in capsys.readouterr().err
