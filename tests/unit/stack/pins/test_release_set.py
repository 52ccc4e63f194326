"""The nightly's release set: an unchanged set is not judged twice, any change (or no record, or a garbled
one) is judged, and the CLI resolves the newest releases against the baseline without any network here."""

import json

import pytest

from harness.errors import HarnessError
from harness.stack.commands import latest_cli
from harness.stack.pins import current, matrix, release_set, resolve
from harness.stack.pins.release_set import Action, ReleaseSet
TONIGHT = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "optax": "0.2.8", "flax": "0.12.12", "numpy": "2.5.5"}
TONIGHT_LABEL = "jax 0.12.0.1, optax 0.2.8, flax 0.12.12, numpy 2.5.5, Python 3.12"
PINS = matrix.Pins(python="3.12",
                   baseline={"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.9", "numpy": "2.5.5"},
                   candidate={"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "optax": "0.2.8", "flax": "0.12.12",
                              "numpy": "2.5.5"})


def _set(resolved_at="2026-12-01T03:20:00+00:00", python="3.12", **changes):
    return ReleaseSet.of({**TONIGHT, **changes}, python, resolved_at)


# --- the decision ---------------------------------------------------------------------------------------

def test_the_same_set_again_skips_the_suites_and_says_when_it_was_judged():
    last = _set(resolved_at="2026-11-30T03:21:09+00:00")
    decision = release_set.decide(_set(), last)
    assert decision.action is Action.SAME_AS_LAST and not decision.runs
    assert decision.text == f"Same release set as last judged on 2026-11-30: {TONIGHT_LABEL}. The suites did not run."


@pytest.mark.parametrize("package, old", [("jax", "0.12.0"), ("jaxlib", "0.12.0"), ("optax", "0.2.7"),
                                          ("flax", "0.12.11"), ("numpy", "2.5.4")])
def test_any_version_that_differs_is_judged_and_named(package, old):
    decision = release_set.decide(_set(), _set(resolved_at="2026-11-29T03:20:00+00:00", **{package: old}))
    assert decision.action is Action.NEW_SET and decision.runs
    assert f"{package} {old} → {TONIGHT[package]}" in decision.text and "2026-11-29" in decision.text
    assert decision.text.startswith(f"New release set: {TONIGHT_LABEL}")


def test_another_python_is_another_set():
    decision = release_set.decide(_set(), _set(python="3.11"))
    assert decision.runs and "Python 3.11 → 3.12" in decision.text


def test_no_judged_set_on_record_is_judged():
    decision = release_set.decide(_set(), None)
    assert decision.runs and "no release set was judged before" in decision.text


def test_the_interpreters_patch_release_is_not_a_new_set():
    assert _set(python="3.12.1").python == "3.12"
    assert not release_set.decide(_set(python="3.12.1"), _set(python="3.12")).runs


def test_the_label_names_jaxlib_only_when_it_does_not_follow_jax():
    assert _set().label == TONIGHT_LABEL
    assert _set(jaxlib="0.12.0").label.startswith("jax 0.12.0.1 (jaxlib 0.12.0), optax 0.2.8")


def test_a_set_without_one_of_the_packages_is_refused():
    versions = {k: v for k, v in TONIGHT.items() if k != "numpy"}
    with pytest.raises(HarnessError, match="missing numpy"):
        ReleaseSet.of(versions, "3.12", "2026-12-01")


# --- the state file -------------------------------------------------------------------------------------

def test_the_state_file_reads_back_the_set_it_was_written_with(tmp_path):
    path = tmp_path / "state" / "last-judged.json"
    release_set.write_state(path, _set(jaxlib="0.12.0"))
    assert release_set.read_state(path) == (_set(jaxlib="0.12.0"), None)
    assert json.loads(path.read_text())["versions"]["jaxlib"] == "0.12.0"


def test_no_state_file_is_no_judged_set_and_no_note(tmp_path):
    assert release_set.read_state(tmp_path / "missing.json") == (None, None)


GARBLED = {
    "truncated JSON": b'{"kind": "upgrade-harness release set", "vers',
    "not UTF-8": b"\xff\xfe\x00garbage",
    "empty": b"",
    "a list": b"[]",
    "another file": json.dumps({"kind": "something else", "version": 1}).encode(),
    "a newer format": json.dumps({"kind": "upgrade-harness release set", "version": 99}).encode(),
    "numpy missing": json.dumps({"kind": "upgrade-harness release set", "version": 1, "python": "3.12",
                                 "versions": {k: v for k, v in TONIGHT.items() if k != "numpy"},
                                 "resolved_at": "x"}).encode(),
    "a number for a version": json.dumps({"kind": "upgrade-harness release set", "version": 1, "python": "3.12",
                                          "versions": {**TONIGHT, "optax": 2.8}, "resolved_at": "x"}).encode(),
}


@pytest.mark.parametrize("content", GARBLED.values(), ids=GARBLED.keys())
def test_a_garbled_state_file_means_judging_with_a_note_not_a_crash(tmp_path, content):
    path = tmp_path / "last-judged.json"
    path.write_bytes(content)
    last, note = release_set.read_state(path)
    assert last is None and "garbled" in note and str(path) in note
    assert release_set.decide(_set(), last).runs


# --- the CLI --------------------------------------------------------------------------------------------

@pytest.fixture
def fake_resolve(monkeypatch, tmp_path):
    """resolve.resolve answering from TONIGHT (no uv, no network); the calls it got are recorded."""
    calls = []

    def fake(ws, named, defaults, python, prerelease=False, held=()):
        calls.append((dict(named), dict(defaults), python, prerelease))
        return resolve.Resolution(pins=dict(TONIGHT), lock="", notes=["optax latest = 0.2.8"],
                                  resolved_at="2026-12-01T03:20:00+00:00")

    monkeypatch.setattr(resolve, "resolve", fake)
    monkeypatch.setattr(current, "pins", lambda ws: PINS)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github-output"))
    return calls


def _outputs(tmp_path):
    path = tmp_path / "github-output"
    return dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}


def test_resolve_asks_for_the_newest_four_against_the_baseline(fake_resolve, tmp_path, capsys):
    out = tmp_path / "current.json"
    assert latest_cli.main(["resolve", "--state", str(tmp_path / "none.json"), "--out", str(out)]) == 0
    assert fake_resolve == [({"jax": "latest", "jaxlib": "latest", "optax": "latest", "flax": "latest"},
                             PINS.baseline, "3.12", False)]
    assert release_set.read_state(out) == (_set(), None)
    assert _outputs(tmp_path)["decision"] == "run" and _outputs(tmp_path)["release_set"] == TONIGHT_LABEL
    printed = capsys.readouterr().out
    assert "optax latest = 0.2.8" in printed and f"New release set: {TONIGHT_LABEL}" in printed


def test_resolve_with_pre_lets_latest_take_prereleases(fake_resolve, tmp_path):
    latest_cli.main(["resolve", "--state", str(tmp_path / "none.json"), "--out", str(tmp_path / "c.json"), "--pre"])
    assert [call[3] for call in fake_resolve] == [True]


def test_resolve_skips_the_set_judged_last(fake_resolve, tmp_path, capsys):
    state = tmp_path / "last-judged.json"
    release_set.write_state(state, _set(resolved_at="2026-11-30T03:19:00+00:00"))
    assert latest_cli.main(["resolve", "--state", str(state), "--out", str(tmp_path / "c.json")]) == 0
    outputs = _outputs(tmp_path)
    assert outputs["decision"] == "skip"
    assert outputs["summary"] == f"Same release set as last judged on 2026-11-30: {TONIGHT_LABEL}. The suites did not run."
    assert outputs["summary"] in capsys.readouterr().out


def test_resolve_judges_when_the_state_is_garbled_and_says_so(fake_resolve, tmp_path, capsys):
    state = tmp_path / "last-judged.json"
    state.write_text("{not json")
    assert latest_cli.main(["resolve", "--state", str(state), "--out", str(tmp_path / "c.json")]) == 0
    assert _outputs(tmp_path)["decision"] == "run"
    assert "garbled" in _outputs(tmp_path)["summary"] and "garbled" in capsys.readouterr().out


def test_resolve_failure_exits_2_with_the_reason_and_writes_nothing(fake_resolve, monkeypatch, tmp_path,
                                                                   capsys):
    def fails(*args, **kwargs):
        raise HarnessError("cannot resolve jax==latest for Python 3.12: no wheels")

    monkeypatch.setattr(resolve, "resolve", fails)
    out = tmp_path / "c.json"
    assert latest_cli.main(["resolve", "--state", str(tmp_path / "none.json"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot resolve the newest releases" in err and "no wheels" in err
    assert not out.exists() and _outputs(tmp_path) == {}


def test_resolve_outside_github_actions_only_prints(fake_resolve, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("GITHUB_OUTPUT")
    assert latest_cli.main(["resolve", "--state", str(tmp_path / "none.json"), "--out", str(tmp_path / "c.json")]) == 0
    assert TONIGHT_LABEL in capsys.readouterr().out and _outputs(tmp_path) == {}


def _report(path, versions):
    path.write_text(json.dumps({"schema_version": 3, "started_at": "2026-12-01T03:25:00+00:00",
                                "environment": {"versions": versions}}))
    return path


def test_record_writes_what_the_candidate_had_installed_and_the_next_night_skips(fake_resolve, tmp_path):
    report = _report(tmp_path / "candidate.json", {**TONIGHT, "python": "3.12.1", "hypothesis": "6.170.17"})
    state = tmp_path / "last-judged.json"
    assert latest_cli.main(["record", "--report", str(report), "--out", str(state)]) == 0
    assert release_set.read_state(state) == (_set(resolved_at="2026-12-01T03:25:00+00:00"), None)
    assert _outputs(tmp_path)["release_set"] == TONIGHT_LABEL
    (tmp_path / "github-output").unlink()
    latest_cli.main(["resolve", "--state", str(state), "--out", str(tmp_path / "c.json")])
    assert _outputs(tmp_path)["decision"] == "skip"


@pytest.mark.parametrize("content", ["", "{}", '{"environment": {"versions": []}}',
                                     '{"environment": {"versions": {"jax": "0.12.0.1", "python": "3.12.1"}}}'])
def test_record_without_readable_versions_exits_2_and_keeps_the_old_state(tmp_path, content, capsys):
    report = tmp_path / "candidate.json"
    report.write_text(content)
    state = tmp_path / "last-judged.json"
    release_set.write_state(state, _set(optax="0.2.6"))
    before = state.read_text()
    assert latest_cli.main(["record", "--report", str(report), "--out", str(state)]) == 2
    assert "cannot tell which release set was judged" in capsys.readouterr().err
    assert state.read_text() == before
