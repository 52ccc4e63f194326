"""The API diff of a run (harness.stack.run.api_diff, reader, sources): read under the matrix's Python in an
environment of its own (a 3.12-only module is read), cached by what it depends on; from the wheels of the
versions the reports ran when an entry's environment is gone or holds others, the same diff either way;
the verdict's exit rule in report mode; the section in HTML."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from support import upgrade_reports
from support.fake_libraries import Libraries
from harness.model import report_io
from harness.model.api_diff import ApiChange, ApiChangeKind as K, ApiDiff, PackageApiDiff
from harness.model.enums import BuiltinMode
from harness.stack import paths
from harness.stack.run import api_diff as for_run
from harness.stack.api import reader, sources
from harness.stack.pins import matrix
from harness.stack.workspace import Workspace
from harness.verdict import compare, html

ENTRIES = [matrix.Entry("baseline", {}, "b"), matrix.Entry("candidate", {}, "c")]


@pytest.fixture
def run(tmp_path, monkeypatch) -> tuple[Workspace, Path, Libraries]:
    """A run's reports directory (the versions of the default matrix's reports), its entries' made-up
    libraries in their environments, this checkout's contracts."""
    directory = tmp_path / "reports"
    directory.mkdir()
    for name in ("baseline", "candidate"):  # whole reports: the run reads them typed (its verdict judges them)
        (directory / f"{name}.json").write_text(json.dumps(upgrade_reports.load(name)))
    libraries = Libraries(tmp_path / "libraries")
    libraries.envs = True
    monkeypatch.setattr(for_run, "site_packages", libraries.site_packages)
    monkeypatch.setattr(sources, "fetch", libraries.fetch)
    monkeypatch.setattr(for_run, "CACHE", str(libraries.root / "cache"))
    return Workspace.of(paths.SOURCE, directory), directory, libraries


def test_the_cache_key_follows_versions_python_and_every_file(tmp_path):
    contract = tmp_path / "test_mine.py"
    contract.write_text("import optax\n")
    versions = ({"optax": "0.2.6"}, {"optax": "0.2.8"})
    key = for_run._key(versions, "3.12", [(tmp_path, [contract])])
    assert key == for_run._key(versions, "3.12", [(tmp_path, [contract])])
    assert key != for_run._key(({"optax": "0.2.6"}, {"optax": "0.2.7"}), "3.12", [(tmp_path, [contract])])
    assert key != for_run._key(versions, "3.13", [(tmp_path, [contract])])
    contract.write_text("import optax  # edited\n")
    assert key != for_run._key(versions, "3.12", [(tmp_path, [contract])])
    assert for_run.reader_python([dataclasses.replace(ENTRIES[0], python="3.12"),
                                  dataclasses.replace(ENTRIES[1], python="3.13")]) == "3.13"


def test_an_environment_holding_other_versions_than_its_report_is_not_read(run, monkeypatch, capsys):
    ws, directory, libraries = run
    doc = json.loads((directory / "candidate.json").read_text())
    doc["environment"]["versions"]["optax"] = "0.2.7"  # the report ran another optax than the env holds
    (directory / "candidate.json").write_text(json.dumps(doc))
    read = []
    monkeypatch.setattr(reader, "run",
                        lambda homes, python, request, offline=False: read.append(request["sites"]) or _diff())
    assert for_run.compute(ws, directory, ENTRIES) is None  # no index here: said, not raised
    err = capsys.readouterr().err
    assert "note: no API diff" in err and "no package index in this test" in err
    assert read == [] and not (directory / "api-diff.json").exists()
    libraries.wheels = True
    assert for_run.compute(ws, directory, ENTRIES) == directory / "api-diff.json"
    assert libraries.fetched == ["candidate"] and len(read) == 1  # the baseline's environment holds what its report ran


def test_an_entry_that_ran_no_stack_has_no_api_diff_and_no_note(run, monkeypatch, capsys):
    """A candidate that could not install or start its suite (a TPU another entry held) reports no versions:
    there is nothing to read, and no note about a package index (uv was asked for no package at all)."""
    ws, directory, _ = run
    doc = json.loads((directory / "candidate.json").read_text())
    doc["environment"]["versions"] = {}
    (directory / "candidate.json").write_text(json.dumps(doc))
    monkeypatch.setattr(sources, "fetch", lambda *args, **kwargs: pytest.fail("nothing to fetch"))
    assert for_run.compute(ws, directory, ENTRIES) is None
    assert "no API diff" not in capsys.readouterr().err and not (directory / "api-diff.json").exists()


def test_without_griffe_the_diff_is_a_note_not_a_crash(run, monkeypatch, capsys):
    """`judge DIR` and `followups` have no preflight: a host without griffe says what to install."""
    ws, directory, _ = run
    real = reader.metadata.version

    def version(name: str) -> str:
        if name == "griffe":
            raise reader.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(reader.metadata, "version", version)  # nothing uninstalled
    assert for_run.compute(ws, directory, ENTRIES) is None
    err = capsys.readouterr().err
    assert "note: no API diff:" in err and "griffe is not installed" in err
    assert "`.venv/bin/pip install -r locks/runner.txt`" in err


def _diff() -> ApiDiff:
    return ApiDiff(1, "candidate", [PackageApiDiff("optax", "public API", "0.2.6", "0.2.7", [])], 0.1)


def test_index_options_come_from_the_entrys_lock(tmp_path):
    lock = tmp_path / "candidate.txt"
    lock.write_text("--index-url https://mirror.example/simple\n--extra-index-url https://b.example\noptax==0.2.8\n")
    entry = dataclasses.replace(ENTRIES[1], lock_file=str(lock))
    assert sources.index_options(entry) == ["--index-url", "https://mirror.example/simple", "--extra-index-url",
                                            "https://b.example"]
    assert sources.index_options(ENTRIES[1]) == []


@pytest.fixture(scope="module")
def baseline():
    return report_io.parse(upgrade_reports.load("baseline"), "baseline")


def _removed(**used) -> ApiDiff:
    gone = ApiChange("optax", K.REMOVED, "optax.MultiSteps", **used)
    return ApiDiff(1, "candidate", [PackageApiDiff("optax", "public API", "0.2.6", "0.2.8", [gone])], 0.5)


def test_in_report_mode_only_the_teams_contracts_and_code_make_a_removal_a_change(baseline):
    """builtin = "report": a removed name the built-in contracts call is said, not counted."""
    mine = dataclasses.replace(baseline, own_families=["accumulation"],  # the team's family
                               checks=[dataclasses.replace(c, own=c.family == "accumulation" or None)
                                       for c in baseline.checks])
    builtin_only = _removed(used_by_checks=["test_clipping.py::test_guide_case"])
    assert compare.judge(mine, [mine], builtin=BuiltinMode.REPORT, api=builtin_only).exit_status == 0
    assert compare.judge(mine, [mine], builtin=BuiltinMode.JUDGE, api=builtin_only).exit_status == 1
    own = compare.judge(mine, [mine], builtin=BuiltinMode.REPORT,
                        api=_removed(used_by_checks=["test_accumulation.py::test_state_layout"]))
    assert own.exit_status == 1 and "optax.MultiSteps removed, which 1 contract calls" in own.headline
    code = compare.judge(mine, [mine], builtin=BuiltinMode.REPORT, api=_removed(used_by_project=["t/train.py:3"]))
    assert code.exit_status == 1 and "your code calls (t/train.py:3)" in code.headline


def test_the_section_in_html(baseline):
    acc = ApiChange("optax", K.PARAMETER_ADDED, "optax.MultiSteps", "accumulator_dtype", new="jnp.float32",
                    doc="the <dtype> of the accumulator", used_by_checks=["test_accumulation.py::test_state_layout"])
    diff = ApiDiff(1, "candidate", [
        PackageApiDiff("optax", "public API", "0.2.6", "0.2.8", [ApiChange("optax", K.MODULE_REMOVED, "optax.old"), acc]),
        PackageApiDiff("jax", "the 2 jax names the contracts use", "0.11.2", "0.12.0.1", [], unread=["jax.jit"])], 0.5)
    page = html.page(compare.judge(baseline, [baseline], api=diff), [baseline])
    section = page.split("<h2 id='api'>")[1]
    assert section.startswith("API changes, candidate vs baseline (informational, except a removed name")
    assert "<h3>optax 0.2.6 → 0.2.8: 1 breaking, 1 added</h3>" in section
    items = section.split("<h3>optax")[1].split("<h3>")[0]
    assert items.index("<li class=''>BREAKING module removed: optax.old</li>") < items.index("parameter added")
    assert ("<li class=''>parameter added: optax.MultiSteps(accumulator_dtype=jnp.float32): the &lt;dtype&gt; of "
            "the accumulator</li><li class='detail'>1 contract calls it</li>") in items
    assert "<h3>jax 0.11.2 → 0.12.0.1, the 2 jax names the contracts use: no change</h3>" in section
    assert "not compared (1: their source could not be read): jax.jit" in section


def test_the_projects_files_are_found_without_walking_hidden_folders_or_environments(tmp_path, monkeypatch):
    """A team's project holds its .nox/ (tens of thousands of files): never walked, nor a venv, nor `skip`."""
    from harness.stack.selection import usage

    for rel in ("pkg/train.py", "pkg/sub/model.py", ".nox/env/lib/x.py", "venv/lib/y.py", "reports/z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "pkg" / "sub")
    (tmp_path / "pkg" / "sub" / "loop").symlink_to(tmp_path / "pkg")  # a cycle: not followed
    for a, b in (("side_a", "side_b"), ("side_b", "side_a")):  # two folders linking to each other: a loop too
        (tmp_path / a).mkdir(exist_ok=True)
        (tmp_path / a / "to").symlink_to(tmp_path / b)
    walked = []
    real_walk = usage.os.walk

    def walk(root, **kwargs):
        for folder, dirs, files in real_walk(root, **kwargs):
            walked.append(Path(folder).name)
            yield folder, dirs, files

    monkeypatch.setattr(usage.os, "walk", walk)
    found = usage.python_files(tmp_path, (tmp_path / "reports",))
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "linked/model.py", "pkg/sub/model.py", "pkg/train.py"]
    assert not {".nox", "venv", "reports"} & set(walked)
    assert walked.count("to") <= 2  # each of the two links entered once


def test_an_offline_upgrade_fetches_nothing_for_its_api_diff(run, monkeypatch, tmp_path):
    """`upgrade --offline` never uses the network: the API diff's sources and its reader environment are
    installed by uv offline (once UV_OFFLINE in the host's environment said so; now the run's options)."""
    ws, directory, _ = run
    ws = dataclasses.replace(ws, root=tmp_path / "project", options=dataclasses.replace(ws.options, offline=True))
    monkeypatch.undo()  # the real fetch, from uv
    monkeypatch.setattr(for_run, "site_packages", lambda env: None)
    monkeypatch.setattr(for_run, "CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(for_run, "inputs", lambda ws: ([], [], ws.root))
    monkeypatch.setattr(reader, "uv_binary", lambda: "uv")
    monkeypatch.setattr(reader, "requirement", lambda: "griffe==1")
    monkeypatch.setattr(sources, "find_python", lambda version: "python3")
    told = []

    def uv(cmd, **kwargs):
        told.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "offline: not cached")

    monkeypatch.setattr(reader.subprocess, "run", uv)
    assert for_run.compute(ws, directory, ENTRIES) is None  # a note: no API diff
    assert told and all("--offline" in cmd for cmd in told), told
