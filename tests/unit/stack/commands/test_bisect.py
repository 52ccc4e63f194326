"""`upgrade -- --bisect`: the joint binary search finds each check's first release, a release that
cannot be judged turns the answer into a range naming it, the release list holds only stable releases
strictly between, and a release that does not import with the baseline's pins is retried with the
candidate's; one that imports with neither side's jax is judged against its neighbour at the newest
older jax with which both import, or says why not. No network and no suite: the index, the resolver and the runner are fakes; the probes'
reports are the real reports of the default matrix (tests/fixtures/upgrade-reports)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from packaging.version import Version

from harness.errors import HarnessError
from harness.model import bisection, report_io
from harness.model.codec import from_json, to_json
from harness.model.report import Report
from harness.stack.run import report_cache
from harness.model.enums import CheckKind, Mark, Status
from harness.model.verdict import Change
from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.commands import bisect, bisect as bridge
from harness.stack.pins import matrix, plan, resolve
from harness.verdict import cli, compare, groups

from support import upgrade_reports

BASE = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}
CAND = dict(BASE, jax="0.12.0.1", jaxlib="0.12.0.1", optax="0.2.8")
EARLY = "shapes/test_mismatched_grads["  # in the fakes below, these cases change at the first release probed


# The joint search, on an oracle: release i changes check c when i >= FIRST[c] (7 = the candidate).

FIRST = {"a": 2, "b": 4, "c": 7, "d": 1, "e": 4}


def oracle(calls, unknown=()):
    def probe(index, checks):
        calls.append((index, sorted(checks)))
        if index in unknown:
            return bisect.Seen({}, f"release {index} not installable")
        return bisect.Seen({c: index >= FIRST[c] for c in checks})
    return probe


def test_joint_search_finds_each_checks_first_release_probing_each_release_at_most_once():
    calls = []
    spans = bisect.search(6, sorted(FIRST), oracle(calls))
    assert {c: (s.first, s.last) for c, s in spans.items()} == {c: (i, i) for c, i in FIRST.items()}
    probed = [i for i, _ in calls]
    assert len(probed) == len(set(probed)) <= 6  # one run per release at most, all checks of it at once
    assert calls[0][1] == sorted(FIRST)  # the first run holds every check


def test_an_unjudgeable_release_makes_the_answer_a_range_that_names_it():
    calls = []
    spans = bisect.search(6, sorted(FIRST), oracle(calls, unknown={4}))
    assert (spans["b"].first, spans["b"].last) == (4, 5)  # changed at 5, release 4 unknown
    assert spans["b"].unknown == {4: "release 4 not installable"}
    assert (spans["a"].first, spans["a"].last, spans["a"].unknown) == (2, 2, {})  # release 4 did not matter
    assert [i for i, _ in calls].count(4) == 1


def test_no_release_between_means_the_candidates_own():
    assert bisect.search(0, ["a"], oracle([])) == {"a": bisect.Span(1, 1, {}, {})}


# The release list.

def files(yanked=False):
    return [{"filename": "x.whl", "yanked": yanked}]


INDEX = {"releases": {"0.2.5": files(), "0.2.6": files(), "0.2.6.post1": files(), "0.2.7rc1": files(),
                      "0.2.7": files(), "0.2.7.1": files(yanked=True), "0.2.7.2": [], "0.2.8.dev1": files(),
                      "0.2.8": files(), "0.2.10": files(), "not-a-version": files()}}


def test_release_list_is_stable_releases_strictly_between_in_version_order():
    assert bisect.releases("optax", "0.2.6", "0.2.8", fetch=lambda p: INDEX) == ["0.2.6.post1", "0.2.7"]
    assert bisect.releases("optax", "0.2.6", "0.2.8", prerelease=True, fetch=lambda p: INDEX) == \
        ["0.2.6.post1", "0.2.7rc1", "0.2.7", "0.2.8.dev1"]
    assert bisect.releases("optax", "0.2.8", "0.2.6", fetch=lambda p: INDEX) == ["0.2.7", "0.2.6.post1"]
    assert bisect.releases("optax", "0.2.6", "0.2.10", fetch=lambda p: INDEX) == \
        ["0.2.6.post1", "0.2.7", "0.2.8"]


# Bisecting the default matrix's reports: optax 0.2.6 -> 0.2.8, jax 0.11.2 -> 0.12.0.1.

def raw(name):
    return upgrade_reports.load(name)


def mixed(early_only: bool) -> dict:
    """optax-only's report with the checks not in EARLY (when early_only) as the baseline ran them."""
    doc, base = raw("optax-only"), {c["id"]: c for c in raw("baseline")["checks"]}
    doc["checks"] = [c if c["id"].startswith(EARLY) or not early_only else base[c["id"]] for c in doc["checks"]]
    return doc


@pytest.fixture
def reports(tmp_path):
    for name in upgrade_reports.ENTRIES:
        (tmp_path / f"{name}.json").write_text(json.dumps(raw(name)))
    return tmp_path


def _checkout(reports):
    """This checkout, its reports (the run's directory) in `reports`."""
    return Workspace.of(paths.SOURCE, reports)


def entries():
    base = matrix.Entry(matrix.BASELINE, dict(BASE), "baseline", "3.12")
    cand = matrix.Entry(matrix.CANDIDATE, dict(CAND), "candidate", "3.12")
    return [base, cand, *matrix.single_package_entries(base, cand)]


def fake_stack(monkeypatch, reports, installs, runs):
    """resolve: installs[(optax, jax)] is False (no resolution) or the probe report to write; the runner
    writes it, after checking that the child session will find its entry in the plan file."""
    def fake_resolve(ws, named, defaults, python, prerelease=False, held=()):
        pins = {**defaults, **named}
        if installs.get((pins["optax"], pins["jax"])) is False:
            raise HarnessError(f"cannot resolve optax=={pins['optax']} with jax=={pins['jax']}")
        return resolve.Resolution(pins, "", [], "2026-01-01T00:00:00Z")

    def fake_run(ws, to_run, seed, only=None, typed_in=None):
        assert ws.reports == reports  # the run's workspace, handed on
        for entry in to_run:
            assert entry.name in plan.read(reports / plan.PLAN_FILE)
            runs.append((entry.name, only.read_text().split()))
            (reports / f"{entry.name}.json").write_text(json.dumps(installs[(entry.pins["optax"], entry.pins["jax"])]))
        return {}

    monkeypatch.setattr(resolve, "resolve", fake_resolve)
    return fake_run


def index(optax_between):
    jax = {"0.11.2": files(), "0.12.0": files(), "0.12.0.1": files()}
    return lambda package: {"releases": {"optax": {v: files() for v in ["0.2.6", *optax_between, "0.2.8"]},
                                         "jax": jax, "jaxlib": jax}[package]}


@pytest.mark.parametrize("first_try", ["not importable", "not installable"])
def test_a_release_that_fails_with_the_baselines_jax_is_probed_with_the_candidates(reports, monkeypatch, first_try):
    runs = []
    installs = {("0.2.7", "0.11.2"): raw("candidate-optax-0.2.7") if first_try == "not importable" else False,
                ("0.2.7", "0.12.0.1"): mixed(early_only=True)}
    run = fake_stack(monkeypatch, reports, installs, runs)
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1, run, fetch=index(["0.2.7"])))
    candidate = compare.compare_entry(*(report_io.load(reports / f"{n}.json") for n in ("baseline", "candidate")))
    changed = sorted({c.check_id for c in candidate.contract_changes})
    assert sorted(r.check_id for r in found.checks) == changed  # all from optax: jax-only changed bits only
    why = f"(0.2.7 probed with jax 0.12.0.1: {first_try} with jax 0.11.2)"  # said of 0.2.7 changed or not
    for result in found.checks:
        assert result.text == (f"optax 0.2.7 {why}" if result.check_id.startswith(EARLY) else f"optax 0.2.8 {why}")
    assert found.releases == {"optax": ["0.2.7"]}
    assert [(p.entry, p.outcome) for p in found.probes] == [("bisect-optax-0.2.7", first_try),
                                                            ("bisect-optax-0.2.7-candidate-pins", "judged")]
    assert [name for name, _ in runs] == [p.entry for p in found.probes if p.pins]
    assert all(ids == changed for _, ids in runs)  # only the changed checks ran


def test_a_release_installable_nowhere_gives_a_range_naming_it(reports, monkeypatch):
    runs = []
    installs = {("0.2.7", "0.11.2"): False, ("0.2.7", "0.12.0.1"): False, ("0.2.7.1", "0.11.2"): mixed(True)}
    run = fake_stack(monkeypatch, reports, installs, runs)
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1, run,
                                      fetch=index(["0.2.7", "0.2.7.1"])))
    early = [r for r in found.checks if r.check_id.startswith(EARLY)]
    assert early and all(r.text == "optax 0.2.7–0.2.7.1 (0.2.7 not installable with jax 0.11.2 nor with "
                                   "jax 0.12.0.1; no older jax imports both optax 0.2.7 and 0.2.6 (the package "
                                   "index lists none))" and not r.exact for r in early)
    assert all(r.text == "optax 0.2.8" and r.exact for r in found.checks if r not in early)
    assert [name for name, _ in runs] == ["bisect-optax-0.2.7.1"]


def test_the_verdict_says_where_each_contract_first_changed(reports, monkeypatch, capsys):
    installs = {("0.2.7", "0.11.2"): raw("candidate-optax-0.2.7"), ("0.2.7", "0.12.0.1"): mixed(early_only=True)}
    found = bisect.run(_checkout(reports), entries(), 1, fake_stack(monkeypatch, reports, installs, []),
                       fetch=index(["0.2.7"]))
    capsys.readouterr()
    md = reports / "summary.md"
    cli.main([str(reports / f"{n}.json") for n in upgrade_reports.ENTRIES] + ["--bisect", str(found),
                                                                               "--markdown", str(md)])
    text = capsys.readouterr().out
    assert "first changed in optax 0.2.7 (0.2.7 probed with jax 0.12.0.1: not importable with jax 0.11.2)" in text
    assert "first changed in optax 0.2.8 (0.2.7 probed" in text
    rows = [line for line in md.read_text().splitlines() if "`shapes/test_mismatched_grads`" in line]
    assert rows and all("first changed in optax 0.2.7" in row for row in rows)


def test_blame_follows_the_single_package_entries(reports):
    loaded = {n: report_io.load(reports / f"{n}.json") for n in upgrade_reports.ENTRIES}
    candidate, jax_only, optax_only = (compare.compare_entry(loaded["baseline"], loaded[n])
                                       for n in ("candidate", "jax-only", "optax-only"))
    changed = sorted({c.check_id for c in candidate.contract_changes})
    assert bisect.blame(candidate, {"jax": jax_only, "optax": optax_only}, ["jax", "optax"]) == {"optax": changed}
    assert bisect.blame(candidate, {"jax": jax_only, "optax": None}, ["jax", "optax"]) == {}
    assert bisect.blame(candidate, {}, ["optax"]) == {"optax": changed}  # one group bumped: it is to blame
    assert bisect.blame(candidate, {}, ["jax", "optax"]) == {}


def change(check_id):
    return Change(check_id, "f", CheckKind.GOLDEN, Mark.VALUE_CHANGED, "", None, None, [])


def test_a_group_shows_each_distinct_first_release_of_its_cases():
    group = groups.group([change("f/test_x[a]"), change("f/test_x[b]"), change("f/test_x[c]")])[0]
    assert groups.first_changed(group, {}) == ""
    assert groups.first_changed(group, dict.fromkeys(["f/test_x[a]", "f/test_x[b]"], "optax 0.2.7")) == "optax 0.2.7"
    assert groups.first_changed(group, {"f/test_x[a]": "optax 0.2.7", "f/test_x[b]": "optax 0.2.8",
                                        "f/test_x[c]": "optax 0.2.7"}) == "optax 0.2.7 (2 cases); optax 0.2.8 (1 case)"


def test_last_runs_bisection_reports_are_found_for_keep_previous(tmp_path):
    for name in ("bisect-optax-0.2.7.json", "bisect-optax-0.2.7.log", "bisect-optax-0.2.7.junit.xml",
                 "bisect-jax-0.12.0-candidate-pins.json", "bisect-selection.txt", "bisect.json"):
        (tmp_path / name).write_text("")
    assert bisect.report_names(tmp_path) == ["bisect-jax-0.12.0-candidate-pins", "bisect-optax-0.2.7"]


def test_a_retried_probe_is_unknown_for_checks_the_candidates_other_pins_change_on_their_own(reports, monkeypatch):
    """jax-only changes the EARLY checks too: optax 0.2.7 judged only with jax 0.12.0.1 cannot tell optax's
    part of them, so they stay a range naming 0.2.7; checks jax leaves alone are judged there as before."""
    jax_only = raw("jax-only")
    optax_only = {c["id"]: c for c in raw("optax-only")["checks"]}
    jax_only["checks"] = [optax_only[c["id"]] if c["id"].startswith(EARLY) else c for c in jax_only["checks"]]
    (reports / "jax-only.json").write_text(json.dumps(jax_only))
    runs = []
    installs = {("0.2.7", "0.11.2"): raw("candidate-optax-0.2.7"), ("0.2.7", "0.12.0.1"): mixed(early_only=True)}
    jax = {"0.11.2": files(), "0.12.0.1": files()}  # no jax release between: jax's answer needs no probe
    fetch = lambda package: {"releases": {"optax": {v: files() for v in ["0.2.6", "0.2.7", "0.2.8"]},  # noqa: E731
                                          "jax": jax, "jaxlib": jax}[package]}
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1,
                                      fake_stack(monkeypatch, reports, installs, runs), fetch=fetch))
    optax = [r for r in found.checks if r.group == "optax"]
    early = [r for r in optax if r.check_id.startswith(EARLY)]
    assert early and len(early) < len(optax)
    for result in early:
        assert not result.exact and result.text == ("optax 0.2.7–0.2.8 (0.2.7 not judged: not importable with "
                                                     "jax 0.11.2, and jax 0.12.0.1 changes the check on its own)")
    for result in optax:
        if result not in early:  # unchanged at 0.2.7 with jax 0.12.0.1, which leaves them alone: 0.2.8
            assert result.exact and result.text == ("optax 0.2.8 (0.2.7 probed with jax 0.12.0.1: not importable "
                                                    "with jax 0.11.2)")


def test_offline_bisection_never_asks_the_index(reports, monkeypatch, capsys):
    asked = []
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1,
                                      fake_stack(monkeypatch, reports, {}, []),
                                      fetch=lambda package: asked.append(package) or {}, offline=True))
    assert asked == [] and found.checks == [] and found.probes == []
    assert found.notes[0].startswith("optax not bisected: --offline: the releases of optax between baseline and "
                                     "candidate come from the package index") and "with network access" in found.notes[0]
    assert "optax not bisected: --offline" in capsys.readouterr().out


# Across an import gap: optax 0.2.7 imports with neither side's jax; it is run beside 0.2.6 at an older jax.

def bridge_stack(monkeypatch, reports, installs, runs):
    """fake_stack, where flax 0.12.12 (the baseline's) does not resolve below jax 0.11.1 and moves to 0.12.8,
    and a pair (optax, jax) not in `installs` does not resolve."""
    fake_run = fake_stack(monkeypatch, reports, installs, runs)
    plain = resolve.resolve

    def moving_flax(ws, named, defaults, python, prerelease=False, held=()):
        if installs.get((named["optax"], named.get("jax", defaults["jax"])), False) is False:
            raise HarnessError("does not resolve")
        found = plain(ws, named, defaults, python, prerelease)
        old = Version(found.pins["jax"]) < Version("0.11.1") and found.pins["flax"] == "0.12.12"
        return dataclasses.replace(found, pins=dict(found.pins, flax="0.12.8")) if old else found

    monkeypatch.setattr(resolve, "resolve", moving_flax)
    return fake_run


def gap_index(older_jax):
    jax = {v: files() for v in [*older_jax, "0.11.2", "0.12.0", "0.12.0.1"]}
    return lambda package: {"releases": {"optax": {v: files() for v in ["0.2.6", "0.2.7", "0.2.8"]},
                                         "jax": jax, "jaxlib": jax}[package]}


GAP = {("0.2.7", "0.11.2"): raw("candidate-optax-0.2.7"), ("0.2.7", "0.12.0.1"): raw("candidate-optax-0.2.7")}
NOWHERE = "0.2.7 not importable with jax 0.11.2 nor with jax 0.12.0.1"


def bisect_gap(reports, monkeypatch, installs, older_jax):
    runs = []
    run = bridge_stack(monkeypatch, reports, {**GAP, **installs}, runs)
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1, run, fetch=gap_index(older_jax)))
    return found, runs


def test_a_release_importable_with_neither_sides_jax_is_judged_against_its_neighbour_at_an_older_jax(
        reports, monkeypatch, capsys):
    """At jax 0.10.2 the EARLY checks tell 0.2.6 and 0.2.7 apart: 0.2.7. The others pass on both, and tell
    0.2.7 and 0.2.8 apart at that jax: 0.2.8."""
    installs = {("0.2.7", "0.11.1"): raw("candidate-optax-0.2.7"),  # not importable there either
                ("0.2.7", "0.10.2"): mixed(early_only=True), ("0.2.6", "0.10.2"): raw("baseline"),
                ("0.2.8", "0.10.2"): raw("optax-only")}
    found, runs = bisect_gap(reports, monkeypatch, installs, ["0.9.2", "0.10.2", "0.11.0", "0.11.1"])
    early = [r for r in found.checks if r.check_id.startswith(EARLY)]
    assert early and len(early) < len(found.checks)
    for result in found.checks:
        assert result.bridge.tried == ["0.11.1: 0.2.7 not importable", "0.11.0: 0.2.7 not installable",
                                       "0.10.2: both import"]
        assert result.exact and result.judged_at == "0.10.2"
        if result in early:
            assert result.first == "0.2.7" and result.text == (
                f"optax 0.2.7 (judged against optax 0.2.6 at jax 0.10.2, where 0.2.7 imports; {NOWHERE})")
        else:
            assert result.first == "0.2.8" and result.text == (
                "optax 0.2.8 (judged against optax 0.2.7 at jax 0.10.2, where 0.2.7 imports; there 0.2.7 does not "
                f"differ from 0.2.6; {NOWHERE})")
    # newest older jax first; the releases at the same jax, jaxlib and (moved) flax; 0.9.2 never needed
    assert [name for name, _ in runs] == ["bisect-optax-0.2.7", "bisect-optax-0.2.7-candidate-pins",
                                          "bisect-optax-0.2.7-jax-0.11.1", "bisect-optax-0.2.7-jax-0.10.2",
                                          "bisect-optax-0.2.6-jax-0.10.2", "bisect-optax-0.2.8-jax-0.10.2"]
    at = dict(BASE, jax="0.10.2", jaxlib="0.10.2", flax="0.12.8")
    assert [p.pins for p in found.probes if p.entry.endswith("-jax-0.10.2")] == [
        dict(at, optax="0.2.7"), dict(at, optax="0.2.6"), dict(at, optax="0.2.8")]
    assert early[0].bridge.pins == dict(at, optax="0.2.7")
    capsys.readouterr()
    cli.main([str(reports / f"{n}.json") for n in upgrade_reports.ENTRIES] + ["--bisect", str(reports / "bisect.json")])
    out = capsys.readouterr().out
    assert "first changed in optax 0.2.7 (judged against optax 0.2.6 at jax 0.10.2, where 0.2.7 imports" in out
    assert "first changed in optax 0.2.8 (judged against optax 0.2.7 at jax 0.10.2, where 0.2.7 imports" in out


def served_to_a_selection(doc: dict) -> dict:
    """A report as the cache served it to a probe's selection (a complete run's, filtered to the checks asked
    for): for an import failure, none of them."""
    report = from_json(Report, doc)
    selection = sorted(c["id"] for c in raw("baseline")["checks"])
    return to_json(report_cache._filtered(dataclasses.replace(report, status=Status.COMPLETE), selection))


def test_a_probe_whose_checks_were_never_observed_could_not_run_and_is_bridged_as_a_fresh_run_is(
        reports, monkeypatch):
    """The sequence `upgrade --candidate optax==0.2.7` then `upgrade --bisect`: the probe of 0.2.7 at the
    baseline's jax had the import failure's report served, filtered to its selection: none of its checks
    ran. That is "could not run", never "changed" (which named 0.2.7 for every check): the bisection goes on
    to the bridge and gives the answer the fresh run gives (the test above)."""
    gap = {pins: served_to_a_selection(doc) for pins, doc in GAP.items()}
    installs = {("0.2.7", "0.11.1"): served_to_a_selection(raw("candidate-optax-0.2.7")),
                ("0.2.7", "0.10.2"): mixed(early_only=True), ("0.2.6", "0.10.2"): raw("baseline"),
                ("0.2.8", "0.10.2"): raw("optax-only")}
    runs = []
    run = bridge_stack(monkeypatch, reports, {**gap, **installs}, runs)
    found = bisection.read(bisect.run(_checkout(reports), entries(), 1, run,
                                      fetch=gap_index(["0.9.2", "0.10.2", "0.11.0", "0.11.1"])))
    assert [(p.entry, p.outcome) for p in found.probes][:2] == [("bisect-optax-0.2.7", "could not run"),
                                                                ("bisect-optax-0.2.7-candidate-pins", "could not run")]
    early = [r for r in found.checks if r.check_id.startswith(EARLY)]
    assert early and len(early) < len(found.checks)
    nowhere = "0.2.7 could not run with jax 0.11.2 nor with jax 0.12.0.1"
    for result in found.checks:
        assert result.bridge.tried == ["0.11.1: 0.2.7 could not run", "0.11.0: 0.2.7 not installable",
                                       "0.10.2: both import"]
        assert result.exact and result.judged_at == "0.10.2"
        assert result.first == ("0.2.7" if result in early else "0.2.8")
    assert early[0].text == f"optax 0.2.7 (judged against optax 0.2.6 at jax 0.10.2, where 0.2.7 imports; {nowhere})"


@pytest.mark.parametrize("later", ["unchanged there", "not installable there"])
def test_a_change_the_releases_do_not_show_at_that_jax_stays_unknown_and_says_so(reports, monkeypatch, later):
    """The checks outside EARLY pass on 0.2.6 and 0.2.7 at jax 0.10.2, and on 0.2.8 too (or it cannot be
    installed there): not visible at that jax."""
    installs = {("0.2.7", "0.10.2"): mixed(early_only=True), ("0.2.6", "0.10.2"): raw("baseline")}
    if later == "unchanged there":
        installs[("0.2.8", "0.10.2")] = mixed(early_only=True)
    found, _ = bisect_gap(reports, monkeypatch, installs, ["0.10.2"])
    hidden = [r for r in found.checks if not r.check_id.startswith(EARLY)]
    assert hidden
    beyond = " nor 0.2.7 and 0.2.8" if later == "unchanged there" else ""
    for result in hidden:
        assert not result.exact and result.judged_at is None and result.bridge.visible is False
        assert result.text == (f"optax 0.2.7–0.2.8 ({NOWHERE}; at jax 0.10.2, where 0.2.7 imports, the check does "
                               f"not tell optax 0.2.6 and 0.2.7 apart{beyond}: the change is not visible there, "
                               "unknown)")
    assert hidden[0].bridge.tried[-1] == ("0.10.2: both import" if beyond else "0.10.2: 0.2.8 not installable")


def test_no_older_jax_that_imports_both_is_said_with_the_jax_releases_tried(reports, monkeypatch):
    older = [f"0.{minor}.0" for minor in range(1, 11)] + ["0.11.0", "0.11.1"]  # 12 older: 8 are tried
    installs = {("0.2.7", "0.11.1"): raw("candidate-optax-0.2.7"), ("0.2.7", "0.10.0"): mixed(early_only=True),
                ("0.2.6", "0.10.0"): raw("candidate-optax-0.2.7"),  # the neighbour does not import there
                **{("0.2.7", v): raw("candidate-optax-0.2.7") for v in older[:7]}}
    found, runs = bisect_gap(reports, monkeypatch, installs, older)
    tried = ["0.11.1: 0.2.7 not importable", "0.11.0: 0.2.7 not installable", "0.10.0: 0.2.6 not importable",
             "0.9.0: 0.2.7 not installable", "0.8.0: 0.2.7 not installable", "0.7.0: 0.2.7 not importable",
             "0.6.0: 0.2.7 not importable", "0.5.0: 0.2.7 not importable"]
    assert found.checks and len(tried) == bridge.MAX_JAX
    for result in found.checks:
        assert not result.exact and result.bridge.jax is None and result.bridge.tried == tried
        assert result.text == (f"optax 0.2.7–0.2.8 ({NOWHERE}; no older jax imports both optax 0.2.7 and 0.2.6 "
                               f"(tried {'; '.join(tried)}))")
    assert "bisect-optax-0.2.7-jax-0.4.0" not in [name for name, _ in runs]


def test_a_pair_differs_when_a_check_passes_on_one_only_or_fails_on_both_with_other_values(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(raw("optax-only")))
    (tmp_path / "b.json").write_text(json.dumps(raw("baseline")))
    failed, passed = (report_io.load(tmp_path / n) for n in ("a.json", "b.json"))
    check = next(c for c in failed.checks if c.id.startswith(EARLY))
    assert check.outcome.value == "failed" and passed.check(check.id).outcome.value == "passed"
    assert bridge.differs(passed.check(check.id), check) is True
    assert bridge.differs(check, check) is False
    assert bridge.differs(passed.check(check.id), passed.check(check.id)) is False
    comparisons = [dataclasses.replace(c, observed=["another"]) if not c.passed else c for c in check.comparisons]
    assert bridge.differs(check, dataclasses.replace(check, comparisons=comparisons)) is True
    assert bridge.differs(check, None) is None
