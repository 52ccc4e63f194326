"""An upgrade's steps one by one (CI's matrix jobs) and `judge DIR`: the same follow-ups and the same verdict as
`nox -s upgrade`, from real reports of the default matrix (upgrade_reports) written where and as each entry's
session writes them; a missing, foreign or corrupt report stops the judge naming the file and the fix.

Here: the tests that start real uv and nox processes; the others are in tests/integration/test_fanout.py."""

import json
import re
import shutil
from pathlib import Path

from support import upgrade_reports
from harness.model import entry_job
from harness.stack.run import api_diff as for_run
from harness.stack.environments import uv_program
from harness.stack.commands import fanout
from integration.test_fanout import (  # noqa: F401 (fixtures and helpers shared with it)
    CHECKOUT, PROPERTY, ROLLBACK, ROLLS_BACK_CHANGED, SUMMARIES, Sessions, _checkout, _ci, _follow_ups, _local,
    _plan, _rollback_check, _rollback_of, _row, _sources, _step, _with_property_regression, _with_rollback_checks,
    libraries,
)


def test_the_ci_steps_run_what_the_upgrade_runs_and_judge_gives_its_verdict(tmp_path, monkeypatch, capsys, libraries,
                                                                            uv_bin):
    monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)  # the API diff's reader environment is made with it
    local_sessions = Sessions(_sources(changed=True))
    libraries.envs = True  # `nox -s upgrade` has the entries' environments
    local_code, local = _local(tmp_path, monkeypatch, local_sessions)
    assert local_code == 1
    capsys.readouterr()
    # CI's jobs do not: the follow-ups job reads the reports' versions from their wheels, the judge from it
    libraries.envs, libraries.wheels = False, True
    shutil.rmtree(for_run.CACHE)  # computed again by the follow-ups job
    ci_sessions = Sessions(_sources(changed=True))
    ci, out, rows = _ci(tmp_path, monkeypatch, capsys, ci_sessions)
    assert libraries.fetched == ["baseline", "candidate"] and (ci / "api-diff.json").is_file()
    libraries.wheels = False
    def then_rollback_of(writer):
        report = f"baseline-rollback-{writer}"
        return dict(entry="baseline", report=report, job=str(ci / "jobs" / f"{report}.json"))

    assert rows == [
        _row("baseline", "baseline-replay", ci), _row("baseline", "baseline-rollback-candidate", ci),
        *(_row(e, e, ci, then=then_rollback_of(e)) for e in ("jax-only", "optax-only"))]
    # What each row's session (and the run after it in its job) is told: selection, replay, checkpoints restored.
    told = {job.options.report_name: job for job in
            (entry_job.read(Path(r[key])) for r in rows for key in ("job", "then_job") if r[key])}
    rollback = ci / "rollback-selection.txt"
    assert {name: (job.entry.name, job.options.only, job.options.replay, job.options.rollback_from)
            for name, job in told.items()} == {
        "baseline-replay": ("baseline", ci / "replay-selection.txt", ci / "replay-examples.json", ()),
        **{f"baseline-rollback-{w}": ("baseline", rollback, None, (ci / "checkpoints" / w,))
           for w in ("candidate", "jax-only", "optax-only")},
        **{e: (e, ci / "attribution-selection.txt", None, ()) for e in ("jax-only", "optax-only")}}
    assert sorted(ci_sessions.runs) == sorted(local_sessions.runs)  # the same reports; CI, a job a row
    # The upgrade: the replay and the attribution entries together, then one process for every rollback.
    assert local_sessions.waves == [["baseline-replay", "jax-only", "optax-only"], ["baseline-rollback"]]
    assert {f"baseline-rollback-{w}" for w in ("candidate", "jax-only", "optax-only")} <= set(ci_sessions.runs)
    assert (ci / "rollback-selection.txt").read_text().split() == ROLLBACK
    assert (ci / "replay-selection.txt").read_text() == f"{PROPERTY}\n"
    assert json.loads((ci / "replay-examples.json").read_text()) == {PROPERTY: "'6.170.17', b'AEICaQ=='"}
    attributed = set((ci / "attribution-selection.txt").read_text().split())
    changed_before = {c["check_id"] for c in upgrade_reports.verdict_before()["entries"][0]["changes"]
                      if c["mark"] != "unchanged"}
    assert PROPERTY in attributed and changed_before <= attributed
    assert set(ROLLBACK) <= attributed  # whether they change is known only after the rollback
    for name in ("attribution-selection.txt", "replay-selection.txt", "replay-examples.json", "rollback-selection.txt"):
        assert (ci / name).read_text() == (local / name).read_text(), name
    assert fanout.judge_directory(CHECKOUT, [str(ci)], None) == local_code
    summary = (local / "upgrade-summary.md").read_text()
    assert "API changes, candidate vs baseline" in summary and "optax.MultiSteps(accumulator_dtype=None)" in summary
    assert "jax.jit(donate_argnums=None)" in summary  # a 3.12-only module, read under the matrix's Python
    for name in SUMMARIES:
        assert _timeless((ci / name).read_text()) == _timeless((local / name).read_text()), name


def _timeless(text: str) -> str:
    """The summary less the time the API diff took (computed twice here: by the upgrade and by CI's job)."""
    return re.sub(r'"seconds": [0-9.]+', '"seconds": 0', text)


def _api_section(reports: Path) -> dict:
    """The verdict's API diff as upgrade-summary.json holds it, less the seconds it took."""
    found = json.loads((reports / "upgrade-summary.json").read_text())["api_diff"]
    return found and {k: v for k, v in found.items() if k != "seconds"}


def test_a_run_of_reused_reports_has_the_fresh_runs_api_section(tmp_path, monkeypatch, libraries, uv_bin):
    """A run whose entries were all reused needs no environment, so .nox/ may hold none (never made here,
    or pruned): its API section is the fresh run's all the same, read from the reports' versions' wheels."""
    monkeypatch.setattr(uv_program, "uv", lambda: uv_bin)
    libraries.envs = True
    (tmp_path / "fresh").mkdir()
    fresh_code, fresh = _local(tmp_path / "fresh", monkeypatch, Sessions(_sources(changed=True)))
    libraries.envs, libraries.wheels = False, True
    shutil.rmtree(for_run.CACHE)  # .nox/ emptied: no environment, no computed diff
    (tmp_path / "reused").mkdir()
    again_code, again = _local(tmp_path / "reused", monkeypatch, Sessions(_sources(changed=True), reused=True))
    assert again_code == fresh_code == 1
    assert all(json.loads((again / f"{e}.json").read_text())["reused"] for e in ("baseline", "candidate"))
    assert _api_section(fresh)["packages"] and _api_section(again) == _api_section(fresh)
