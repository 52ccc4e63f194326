"""The golden store: exact round-trips, clear errors, merges that never lose a value."""

import json

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.contract.encoding import decode_array, encode_array
from harness.contract.families import Family
from harness.contract.golden import GoldenProblem, GoldenStore, dumps
from harness.model.host import Host, provenance


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(width=32, allow_nan=True, allow_infinity=True)))
def test_float32_bits_round_trip_through_json(arr):
    text = json.dumps(encode_array(arr))
    back = decode_array(json.loads(text)).astype(np.float32)
    same_bits = (back.view(np.uint32) == arr.view(np.uint32)) | (np.isnan(back) & np.isnan(arr))
    assert same_bits.all()


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16, np.float64])
def test_low_and_high_precision_round_trip(dtype):
    values = np.array([0.1, -0.0, 65504.0, 1e-3, np.inf, -np.inf], dtype=dtype)
    entry = json.loads(json.dumps(encode_array(values)))
    assert entry["dtype"] == np.dtype(dtype).name
    np.testing.assert_array_equal(decode_array(entry).astype(dtype), values)
    assert np.signbit(decode_array(entry)[1])  # -0.0 keeps its sign


def test_missing_file_entry_and_corrupt_file_name_the_fix(tmp_path):
    store = GoldenStore(tmp_path)
    with pytest.raises(GoldenProblem, match=r"does not exist.*nox -s golden"):
        store.get(Family("fam"), "key")
    store.record(Family("fam"), "key", encode_array(np.float32(1.5)))
    store.write({"entry": "baseline"})
    with pytest.raises(GoldenProblem, match=r"'other' is missing from .*fam.json.*nox -s golden"):
        GoldenStore(tmp_path).get(Family("fam"), "other")
    (tmp_path / "fam.json").write_text("{ broken")
    with pytest.raises(GoldenProblem, match=r"unreadable .*git checkout"):
        GoldenStore(tmp_path).get(Family("fam"), "key")


def test_malformed_entry_is_reported(tmp_path):
    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "key", {"dtype": "float32", "shape": [3], "values": [1.0]})
    store.write({})
    with pytest.raises(GoldenProblem, match="malformed"):
        GoldenStore(tmp_path).get_array(Family("fam"), "key")


def test_write_merges_and_reports_changes(tmp_path):
    first = GoldenStore(tmp_path)
    first.record(Family("fam"), "a", encode_array(np.float32(1)))
    first.record(Family("fam"), "b", encode_array(np.float32(2)))
    first.write({})
    second = GoldenStore(tmp_path)
    second.record(Family("fam"), "b", encode_array(np.float32(3)))
    second.record(Family("fam"), "c", encode_array(np.float32(4)))
    assert [(k, what) for _, k, what, _, _ in second.changes()] == [("b", "changed"), ("c", "added")]
    second.write({})
    values = json.loads((tmp_path / "fam.json").read_text())["values"]
    assert sorted(values) == ["a", "b", "c"]  # "a" was not recorded again and is kept


def test_unchanged_family_is_not_rewritten(tmp_path):
    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "a", encode_array(np.float32(1)))
    store.write({"entry": "baseline"})
    before = (tmp_path / "fam.json").read_text()
    again = GoldenStore(tmp_path)
    again.record(Family("fam"), "a", encode_array(np.float32(1)))
    assert again.write({"entry": "elsewhere"}) == []
    assert (tmp_path / "fam.json").read_text() == before


def test_file_has_one_line_per_value():
    doc = {"format": 1, "family": "f", "provenance": {}, "values": {
        "a": encode_array(np.arange(3, dtype=np.float32)), "b": {"error": None}}}
    text = dumps(doc)
    assert json.loads(text) == json.loads(json.dumps(doc))
    assert sum('"a": {' in line for line in text.splitlines()) == 1


def test_a_first_recording_counts_added_values_per_family_and_shows_every_change():
    from harness.contract import golden_recording

    said = []
    changes = [(Family("a"), f"k{i}", "added", None, {"values": [i]}) for i in range(45)]
    changes += [(Family("b"), "k", "added", None, {"values": [0]}),
                (Family("b"), "x", "changed", {"values": [1]}, {"values": [2]})]
    golden_recording.say_changes(said.append, changes)
    assert said == ['golden: changed b/x: [1] -> [2]', "golden: added   46 values: a 45, b 1"]
    said.clear()
    golden_recording.say_changes(said.append, changes[-2:])
    assert said == ["golden: added   b/k", 'golden: changed b/x: [1] -> [2]']


def test_a_long_changed_value_is_shown_by_the_items_that_differ_not_its_first_characters():
    """A team's optimizer-state fact of 16 items differing at items 14 and 15: the first 100 characters of
    old and new were the same; the change names the differing items, and an array how many values moved."""
    from harness.contract import golden_recording

    old = [[f"acc_grads/dense{i}/b", "bfloat16", [32]] for i in range(16)]
    new = [*old[:14], ["acc_grads/dense14/b", "float32", [32]], ["acc_grads/dense15/b", "float32", [32]]]
    said = []
    golden_recording.say_changes(said.append, [(Family("team"), "state", "changed", {"fact": old}, {"fact": new})])
    assert said == ["golden: changed team/state: 2 items differ: [14][1]: \"bfloat16\" -> \"float32\"; "
                    "[15][1]: \"bfloat16\" -> \"float32\""]
    values = [0.5] * 40
    said.clear()
    golden_recording.say_changes(said.append, [(Family("team"), "w", "changed",
                                                {"values": values, "dtype": "float32"},
                                                {"values": [*values[:39], 0.75], "dtype": "float32"})])
    assert said == ["golden: changed team/w: 1 of 40 values differ: [39]: 0.5 -> 0.75"]


def test_a_family_the_project_has_not_recorded_is_read_from_the_tools_own(tmp_path, monkeypatch):
    """A team's project judges the built-in contracts against the tool's golden values; its own copy,
    once recorded, comes first; recordings go to and are compared with the project's own files only."""
    tool, team = tmp_path / "tool", tmp_path / "team"
    shipped = GoldenStore(tool)
    shipped.record(Family("clipping"), "norm", encode_array(np.float32(5.0)))
    shipped.write({"entry": "baseline"})
    store = GoldenStore(team, fallback=tool)
    clipping = Family("clipping")
    assert store.get_array(clipping, "norm")[0] == 5.0 and store.source(clipping) == tool / "clipping.json"
    monkeypatch.setenv("HARNESS_PROJECT", str(tmp_path))
    with pytest.raises(GoldenProblem, match=r"team.mine\.json does not exist.*with `upgrade-harness golden`\.$"):
        store.get(Family("mine", own=True), "loss")
    with pytest.raises(GoldenProblem, match=r"'gone' is missing from .*tool.clipping\.json.*"
                                            r"`upgrade-harness golden --record-builtin`"):
        store.get(Family("clipping"), "gone")  # a key a newer tool added, say: the built-ins are recorded apart

    recording = GoldenStore(team, fallback=tool)
    recording.record(Family("clipping"), "norm", encode_array(np.float32(4.0)))
    assert [what for _, _, what, _, _ in recording.changes()] == ["added"]  # not "changed": the team's first copy
    recording.write({"entry": "baseline"})
    assert GoldenStore(tool).get_array(Family("clipping"), "norm")[0] == 5.0  # the tool's own is never written
    assert GoldenStore(team, fallback=tool).get_array(Family("clipping"), "norm")[0] == 4.0  # the team's copy first



def _tool_with(tool, family: str, **values: float) -> None:
    shipped = GoldenStore(tool)
    for key, value in values.items():
        shipped.record(Family(family), key, encode_array(np.float32(value)))
    shipped.write({"entry": "baseline"})


def test_a_teams_family_of_a_built_in_familys_name_is_another_family_with_its_own_file(tmp_path):
    """A team's contracts/test_training.py beside the built-in training family: the team's values go to
    golden/training.json (said to be its own), its copy of the built-in one's to golden/builtin/training.json;
    each reads its own, and the built-in one the tool's values until the team records a copy."""
    tool, team = tmp_path / "tool", tmp_path / "team"
    _tool_with(tool, "training", loss=5.0)
    mine, builtin = Family("training", own=True), Family("training")
    recording = GoldenStore(team, fallback=tool)
    recording.record(mine, "loss", encode_array(np.float32(1.0)))
    assert recording.write({"entry": "baseline"}) == [team / "training.json"]
    assert json.loads((team / "training.json").read_text())["own"] is True
    store = GoldenStore(team, fallback=tool)
    assert store.get_array(mine, "loss")[0] == 1.0 and store.get_array(builtin, "loss")[0] == 5.0
    assert store.source(builtin) == tool / "training.json"

    copying = GoldenStore(team, fallback=tool)  # `golden --record-builtin`
    copying.record(builtin, "loss", encode_array(np.float32(4.0)))
    copying.record(mine, "loss", encode_array(np.float32(1.0)))
    assert [(copying.label(f), what) for f, _, what, _, _ in copying.changes()] == [("builtin/training", "added")]
    assert copying.write({"entry": "baseline"}) == [team / "builtin" / "training.json"]
    store = GoldenStore(team, fallback=tool)
    assert store.get_array(mine, "loss")[0] == 1.0 and store.get_array(builtin, "loss")[0] == 4.0
    assert GoldenStore(tool).get_array(builtin, "loss")[0] == 5.0  # the tool's own is never written


def test_a_teams_earlier_copy_of_a_built_in_family_keeps_being_read(tmp_path):
    """Before copies had a folder, `golden --record-builtin` wrote golden/<family>.json (no own mark): it is
    still the built-in family's copy, unless an own family of that name runs; recording the built-in
    family again writes golden/builtin/<family>.json from it and leaves the earlier file as it is."""
    tool, team = tmp_path / "tool", tmp_path / "team"
    _tool_with(tool, "clipping", norm=5.0, other=1.0)
    earlier = {"format": 1, "family": "clipping", "provenance": {"entry": "baseline"},
               "values": {"norm": encode_array(np.float32(4.0)), "other": encode_array(np.float32(1.0))}}
    (team).mkdir()
    (team / "clipping.json").write_text(dumps(earlier))
    builtin = Family("clipping")
    assert GoldenStore(team, fallback=tool).get_array(builtin, "norm")[0] == 4.0
    claimed = GoldenStore(team, fallback=tool)
    claimed.own_names = frozenset({"clipping"})  # the team's own family of that name holds that file now
    assert claimed.get_array(builtin, "norm")[0] == 5.0

    again = GoldenStore(team, fallback=tool)
    again.record(builtin, "norm", encode_array(np.float32(4.0)))
    assert again.changes() == []  # the same values as its earlier copy: nothing to accept
    assert again.write({"entry": "baseline"}) == [team / "builtin" / "clipping.json"]
    assert GoldenStore(team, fallback=tool).get_array(builtin, "other")[0] == 1.0  # merged from the earlier copy
    assert json.loads((team / "clipping.json").read_text()) == json.loads(dumps(earlier))


HERE = Host(cpu="Intel(R) Xeon(R) Processor", machine="x86_64", numerics_features=["avx512_bf16", "fma"],
            vector="AVX512", fma=True, blas="SkylakeX")


def _check_on(tmp_path, monkeypatch, recorded_host, deferred=True):
    """A check of family `fam`, whose golden x = 1.5 was recorded on recorded_host, run on HERE."""
    from harness.contract import environment
    from harness.contract.checks import Check

    if recorded_host is not None:
        store = GoldenStore(tmp_path)
        store.record(Family("fam"), "x", encode_array(np.float32(1.5)))
        store.write({"entry": "baseline", "host": recorded_host if isinstance(recorded_host, dict)
                     else provenance(recorded_host)})
    monkeypatch.setattr(environment, "host", lambda: HERE)
    check = Check("fam/test_x", "fam", GoldenStore(tmp_path))
    check.defer_golden = deferred  # as the plugin sets it for a plain test; a Hypothesis property raises at once
    return check


def test_a_mismatch_against_values_recorded_on_another_cpu_says_so(tmp_path, monkeypatch):
    from harness.contract.checks import ContractFailure

    other = {"cpu": "Intel(R) Xeon(R) Platinum 8375C", "numerics_features": ["fma"]}
    check = _check_on(tmp_path, monkeypatch, other)
    check.golden("x", np.float32(1.75))
    with pytest.raises(ContractFailure, match=r"(?s)recorded on another host .*Platinum 8375C.*this machine has "
                                              r"avx512_bf16"):
        check.raise_mismatches()
    inside_a_property = _check_on(tmp_path, monkeypatch, other, deferred=False)
    with pytest.raises(ContractFailure, match=r"(?s)^golden:x .*recorded on .*Platinum 8375C"):
        inside_a_property.golden("x", np.float32(1.75))


def test_a_mismatch_on_the_recording_cpu_adds_nothing(tmp_path, monkeypatch):
    from harness.contract.checks import ContractFailure

    check = _check_on(tmp_path, monkeypatch, HERE)
    check.golden("x", np.float32(1.75))
    with pytest.raises(ContractFailure, match=r"^golden:x ") as failed:
        check.raise_mismatches()
    assert "recorded on" not in str(failed.value)


def test_a_mismatch_that_is_no_value_in_ulps_gets_no_host_note(tmp_path, monkeypatch):
    """The note says a value a few ulps off may be the machine: an error type, a fact or a dtype that changed is
    never that, recorded on another host or not (issue 59: 'DeprecationWarning' → 'TypeError' carried it)."""
    from harness.contract.checks import ContractFailure

    other = {"cpu": "Intel(R) Xeon(R) Platinum 8375C", "numerics_features": ["fma"]}
    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "warning", {"fact": "DeprecationWarning"})
    store.record(Family("fam"), "bad", {"error": "ValueError"})
    store.record(Family("fam"), "x", encode_array(np.float32(1.5)))
    store.write({"entry": "baseline", "host": other})
    for deferred in (True, False):  # a plain test's mismatches at its end; a property's at once
        for compare in (lambda c: c.golden_fact("warning", "TypeError"),
                        lambda c: c.error_contract("bad", lambda: {}["missing"]),
                        lambda c: c.golden("x", np.float64(1.1))):  # a float64 that is not a float32 value: dtype
            check = _check_on(tmp_path, monkeypatch, None, deferred)
            with pytest.raises(ContractFailure) as failed:
                compare(check)
                check.raise_mismatches()
            assert "recorded on another host" not in str(failed.value), str(failed.value)
    check = _check_on(tmp_path, monkeypatch, None)
    check.golden_fact("warning", "TypeError")
    check.golden("x", np.float32(1.75))  # beside a fact, a value in ulps: the note, once
    with pytest.raises(ContractFailure, match=r"(?s)^2 golden values differ.*recorded on another host") as failed:
        check.raise_mismatches()
    assert str(failed.value).count("recorded on another host") == 1


def test_a_comparison_with_another_entrys_values_needs_no_golden_file_and_gets_no_note(tmp_path, monkeypatch):
    """check.recorded compares with a value another entry of this run wrote (same machine): a family with no
    golden file fails with the comparison's own message, not a missing-file error."""
    from harness.contract.checks import ContractFailure

    other = {"cpu": "Intel(R) Xeon(R) Platinum 8375C", "numerics_features": ["fma"]}
    for recorded_host in (None, other):  # no golden file; one recorded on another CPU, not what it compares with
        check = _check_on(tmp_path / str(recorded_host is None), monkeypatch, recorded_host)
        check.recorded("restored", np.float32(1.75), np.float32(1.5))
        with pytest.raises(ContractFailure, match=r"^recorded:restored") as failed:
            check.raise_mismatches()
        assert "recorded on another host" not in str(failed.value)


def test_a_reason_given_later_is_written_into_a_file_an_acceptance_changed_without_one(tmp_path):
    """`golden --accept-changes` without --reason, then again with one (the strict pull-request check asks for it):
    the same values, so only the reason makes the file worth writing; a file never accepted is left as it is."""
    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "a", encode_array(np.float32(1)))
    store.record(Family("plain"), "a", encode_array(np.float32(1)))
    store.write({"entry": "baseline"})
    accepted = GoldenStore(tmp_path)
    accepted.record(Family("fam"), "a", encode_array(np.float32(2)))
    accepted.record(Family("plain"), "a", encode_array(np.float32(1)))
    assert accepted.write({"accepted": {"command": "golden --accept-changes", "reason": None}}) == [tmp_path / "fam.json"]
    again = GoldenStore(tmp_path)
    again.record(Family("fam"), "a", encode_array(np.float32(2)))
    again.record(Family("plain"), "a", encode_array(np.float32(1)))
    said = {"command": "golden --accept-changes", "reason": "decay doubled"}
    assert again.write({"accepted": said}) == [tmp_path / "fam.json"]
    assert json.loads((tmp_path / "fam.json").read_text())["provenance"]["accepted"] == said
    once_more = GoldenStore(tmp_path)  # a reason already there: nothing to write
    once_more.record(Family("fam"), "a", encode_array(np.float32(2)))
    assert once_more.write({"accepted": {"command": "golden --accept-changes", "reason": "another"}}) == []


def test_a_staged_recording_names_the_projects_file_not_its_staged_copy(tmp_path):
    """`golden` records into a staged copy (moved into place when it all succeeds): a message names the team's
    file, and the command that restores it works on that file."""
    staged, project = tmp_path / "reports" / ".staged" / "files" / "golden", tmp_path / "golden"
    staged.mkdir(parents=True)
    (staged / "fam.json").write_text("{broken")
    store = GoldenStore(staged, shown_as=project)
    with pytest.raises(GoldenProblem) as raised:
        store.get(Family("fam"), "key")
    assert f"golden file {project / 'fam.json'} is unreadable" in str(raised.value)
    assert f"`git checkout -- {project / 'fam.json'}`" in str(raised.value) and ".staged" not in str(raised.value)


def test_a_later_recording_keeps_the_acceptance_that_changed_the_values(tmp_path):
    """A plain `golden` after `golden --accept-changes --reason ...` (a new contract's value added, or noise measured
    anew) rewrites the file but changes no value: the acceptance's command and reason stay with the values."""
    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "a", encode_array(np.float32(1)))
    said = {"command": "golden --accept-changes", "reason": "decay doubled"}
    store.write({"entry": "baseline", "accepted": said})
    later = GoldenStore(tmp_path)
    later.record(Family("fam"), "a", encode_array(np.float32(1)))
    later.record(Family("fam"), "b", encode_array(np.float32(2)))  # a new contract's value
    assert later.write({"entry": "baseline"}) == [tmp_path / "fam.json"]
    assert json.loads((tmp_path / "fam.json").read_text())["provenance"]["accepted"] == said


def test_a_written_file_carries_the_digest_of_its_values_as_the_host_reads_them(tmp_path):
    """Values edited by hand after a recording no longer match the digest it wrote (the host says so per file,
    whatever recording wrote it before); measured noise is not part of it."""
    from harness import golden_layout

    store = GoldenStore(tmp_path)
    store.record(Family("fam"), "a", {**encode_array(np.float32(0.1)), "noise": 1e-9})
    store.record(Family("fam"), "b", {"fact": {"lr": "0.1"}})
    store.write({"entry": "baseline"})
    doc = json.loads((tmp_path / "fam.json").read_text())
    written = doc["provenance"][golden_layout.VALUES_DIGEST]
    assert written == golden_layout.values_digest(doc["values"])
    doc["values"]["a"]["noise"] = 2e-9  # noise measured anew: not an edit
    assert written == golden_layout.values_digest(doc["values"])
    doc["values"]["b"]["fact"]["lr"] = "0.2"
    assert written != golden_layout.values_digest(doc["values"])
