"""The report key changes with exactly the inputs that determine an entry's report: one test per part,
and the inputs that must not count (an entry's name, a comment in a lock, the host-only code, a seed
under a derandomized profile, the compilation cache's directory) leave it as it was."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from harness import env_vars
from harness.model.enums import BuiltinMode, ReportPart
from harness.stack import paths, project
from harness.stack.run import report_key
from harness.stack.pins.matrix import Entry
from harness.stack.selection.select import Scope, select
from harness.stack.selection.team_code import TeamCode, Use
from harness.stack.workspace import Workspace

LOCK = "# resolved for candidate at 2026-12-01\njax==0.11.2\njaxlib==0.11.2\noptax==0.2.6\n"


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A team's project and a harness package of a few files, with one entry locked in it."""
    package = tmp_path / "harness"
    for part in ("contract", "builtin", "model", "stack", "verdict"):
        (package / part).mkdir(parents=True)
        (package / part / "mod.py").write_text(f"# {part}\n")
    monkeypatch.setattr(paths, "PACKAGE", package)
    monkeypatch.setattr(paths, "BUILTIN_GOLDEN", package / "builtin" / "golden")
    monkeypatch.setattr(report_key, "find_python", lambda version: sys.executable)
    root = tmp_path / "team"
    for folder in ("contracts", "golden", "locks", "regressor", "reports/.cache", ".nox/baseline"):
        (root / folder).mkdir(parents=True)
    (root / "contracts" / "test_losses.py").write_text("def test_losses(check): ...\n")
    (root / "regressor" / "train.py").write_text("LR = 0.1\n")
    (root / "golden" / "losses.json").write_text('{"values": {}}\n')
    (root / "locks" / "baseline.txt").write_text(LOCK)
    found = project.Project(root=root, own_contracts=(root / "contracts",), golden=root / "golden",
                            locks=root / "locks", builtin=BuiltinMode.REPORT, baseline_from=None, pythonpath=(root,))
    entry = Entry("baseline", {"jax": "0.11.2"}, "", lock_file=str(root / "locks" / "baseline.txt"))
    return root, package, found, entry


def _key(found, entry, environ=None, seed=1, replay=None):
    return report_key.key_of(Workspace.of(found.root), entry, found, environ or {env_vars.PROFILE: "ci"}, seed, replay)


@pytest.mark.parametrize("edit, part", [
    (lambda root, package: (root / "locks/baseline.txt").write_text(LOCK + "numpy==2.5.5\n"), "lock"),
    (lambda root, package: (package / "contract/mod.py").write_text("# the plugin, changed\n"), "harness"),
    (lambda root, package: (package / "builtin/mod.py").write_text("# a built-in contract, changed\n"), "harness"),
    (lambda root, package: (package / "model/mod.py").write_text("# the report model, changed\n"), "harness"),
    (lambda root, package: (root / "contracts/test_losses.py").write_text("def test_losses(check): pass\n"),
     "contracts"),
    (lambda root, package: (root / "regressor/train.py").write_text("LR = 0.2\n"), "contracts"),
    (lambda root, package: (root / "golden/losses.json").write_text('{"values": {"a": 1}}\n'), "golden"),
], ids=["lock", "plugin", "builtin-contract", "model", "own-contract", "own-code", "golden"])
def test_a_changed_input_changes_exactly_its_part(world, edit, part):
    root, package, found, entry = world
    before = _key(found, entry)
    edit(root, package)
    assert _key(found, entry).changed(before) == [part]


@pytest.mark.parametrize("edit", [
    lambda root, package: (root / "locks/baseline.txt").write_text(LOCK.replace("2026-12-01", "2026-12-02")),
    lambda root, package: (package / "stack/mod.py").write_text("# the host side, changed\n"),
    lambda root, package: (package / "verdict/mod.py").write_text("# the verdict, changed\n"),
    lambda root, package: (root / "README.md").write_text("notes\n"),
    lambda root, package: (root / "reports/.cache/x.py").write_text("# the cache itself\n"),
    lambda root, package: (root / ".nox/baseline/lib.py").write_text("# an environment\n"),
    lambda root, package: (package / "contract/__pycache__").mkdir() or (package / "contract/__pycache__/m.pyc")
    .write_bytes(b"\0"),
], ids=["lock-comment", "host-side", "verdict", "readme", "cache", "environment-dir", "bytecode"])
def test_inputs_that_do_not_determine_the_report_leave_the_key(world, edit):
    root, package, found, entry = world
    before = _key(found, entry)
    edit(root, package)
    assert _key(found, entry).changed(before) == []


def test_entries_of_one_stack_share_a_key_whatever_their_names(world):
    root, _, found, entry = world
    (root / "locks" / "jax-only.txt").write_text(LOCK.replace("resolved for candidate", "resolved for jax-only"))
    other = Entry("jax-only", {"jax": "0.11.2"}, "", lock_file=str(root / "locks" / "jax-only.txt"))
    assert _key(found, other).digest == _key(found, entry).digest


def test_the_python_interpreter_is_a_part(world, monkeypatch):
    _, _, found, entry = world
    before = _key(found, entry)
    monkeypatch.setattr(report_key, "python_digest", lambda executable: "another interpreter")
    assert _key(found, entry).changed(before) == ["python"]


def test_which_contracts_run_is_a_part(world):
    _, _, found, entry = world
    import dataclasses

    assert _key(dataclasses.replace(found, builtin=BuiltinMode.OFF), entry).changed(_key(found, entry)) == ["suite"]


def test_the_seed_counts_only_under_a_random_profile(world):
    _, _, found, entry = world
    ci = {env_vars.PROFILE: "ci"}
    assert _key(found, entry, ci, seed=1).changed(_key(found, entry, ci, seed=2)) == []
    nightly = {env_vars.PROFILE: "nightly"}
    assert _key(found, entry, nightly, seed=1).changed(_key(found, entry, nightly, seed=2)) == ["hypothesis"]
    assert _key(found, entry, nightly, seed=1).changed(_key(found, entry, ci, seed=1)) == ["hypothesis"]


def test_numeric_environment_variables_are_a_part_and_others_are_not(world):
    _, _, found, entry = world
    plain = {env_vars.PROFILE: "ci", "HOME": "/root"}
    before = _key(found, entry, plain)
    assert _key(found, entry, {**plain, "XLA_FLAGS": "--xla_cpu_enable_fast_math=true"}).changed(before) == [
        "environment"]
    assert _key(found, entry, {**plain, "JAX_ENABLE_X64": "1"}).changed(before) == ["environment"]
    assert _key(found, entry, {**plain, "HOME": "/elsewhere", "JAX_COMPILATION_CACHE_DIR": "/tmp/c"}).changed(
        before) == []


def test_the_replayed_examples_are_a_part(world, tmp_path):
    _, _, found, entry = world
    examples = tmp_path / "replay-examples.json"
    examples.write_text('{"a": "blob1"}')
    first = _key(found, entry, replay=examples)
    assert first.changed(_key(found, entry)) == ["replay"]
    examples.write_text('{"a": "blob2"}')
    assert _key(found, entry, replay=examples).changed(first) == ["replay"]


# What a review of the key found it missed, and what it counted that changes no report.
def _package_and_venv(root, package):
    (root / "regressor" / "reports").mkdir()
    (root / "regressor" / "reports" / "plots.py").write_text("DPI = 100\n")
    (root / "venv" / "lib").mkdir(parents=True)
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr\n")


@pytest.mark.parametrize("edit, part", [
    (lambda root, package: (root / "contracts/losses.npz").write_bytes(b"\x93NUMPY data"), "contracts"),
    (lambda root, package: (root / "regressor/reports/plots.py").write_text("DPI = 200\n"), "contracts"),
    (lambda root, package: (root / "regressor/config.yaml").write_text("lr: 0.2\n"), "contracts"),
    (lambda root, package: (root.parent / "conftest.py").write_text("# above the project\n"), "contracts"),
    (lambda root, package: (root / "pyproject.toml").write_text('[project]\nname = "team"\nversion = "2"\n'),
     "contracts"),
], ids=["contract-data", "a-package-named-reports", "code-config", "ancestor-conftest", "pyproject-project"])
def test_what_your_contracts_read_counts(world, edit, part):
    root, package, found, entry = world
    _package_and_venv(root, package)
    (root / "pyproject.toml").write_text('[project]\nname = "team"\nversion = "1"\n')
    before = _key(found, entry)
    edit(root, package)
    assert _key(found, entry).changed(before) == [part]


@pytest.mark.parametrize("edit", [
    lambda root, package: (root / "venv/lib/site.py").write_text("# an environment\n"),
    lambda root, package: (root / "pyproject.toml").write_text(
        '[project]\nname = "team"\nversion = "1"\n\n[tool.upgrade-harness.candidate]\noptax = "0.2.8"\n'),
    lambda root, package: (package / "matrix.toml").write_text('python = "3.12"\n'),
    lambda root, package: (package / "cli.py").write_text("# the command line\n"),
], ids=["a-virtualenv", "the-harness-table", "the-pins", "the-command-line"])
def test_what_says_what_to_compare_does_not_count(world, edit):
    root, package, found, entry = world
    _package_and_venv(root, package)
    (root / "pyproject.toml").write_text('[project]\nname = "team"\nversion = "1"\n')
    before = _key(found, entry)
    edit(root, package)
    assert _key(found, entry).changed(before) == []


def test_a_symlinked_package_is_read(world, tmp_path):
    root, _, found, entry = world
    shared = tmp_path / "monorepo" / "shared"
    shared.mkdir(parents=True)
    (shared / "layers.py").write_text("WIDTH = 8\n")
    (root / "shared").symlink_to(shared)
    before = _key(found, entry)
    (shared / "layers.py").write_text("WIDTH = 16\n")
    assert _key(found, entry).changed(before) == ["contracts"]


@pytest.mark.parametrize("name, value", [("PYTEST_ADDOPTS", "-k adam"), ("PYTHONPATH", "/elsewhere"),
                                         ("PYTHONWARNINGS", "error"), ("LD_PRELOAD", "libother.so"),
                                         ("KMP_AFFINITY", "compact")])
def test_variables_pytest_python_and_the_libraries_read_are_a_part(world, name, value):
    _, _, found, entry = world
    plain = {env_vars.PROFILE: "ci"}
    assert _key(found, entry, {**plain, name: value}).changed(_key(found, entry, plain)) == ["environment"]


def test_an_empty_profile_is_the_plugins_choice_and_draws_with_the_seed(world):
    _, _, found, entry = world
    empty = {env_vars.PROFILE: ""}  # the plugin then picks dev (ci under CI): random, with the run's seed
    assert _key(found, entry, empty, seed=1).changed(_key(found, entry, empty, seed=2)) == ["hypothesis"]
    under_ci = {env_vars.PROFILE: "", "CI": "true"}  # ci: derandomized, the seed changes nothing
    assert _key(found, entry, under_ci, seed=1).changed(_key(found, entry, under_ci, seed=2)) == []


def test_judged_or_reported_built_in_contracts_are_the_same_run(world):
    import dataclasses

    _, _, found, entry = world
    judged = dataclasses.replace(found, builtin=BuiltinMode.JUDGE)
    assert _key(judged, entry).changed(_key(found, entry)) == []


def test_the_multi_device_familys_platform_and_flags_count_in_the_suite_part(world):
    """The data-parallel family's process is told its platform and, on cpu, the simulated devices after the
    user's XLA_FLAGS: another platform is another run; without the built-in contracts it does not run."""
    root, package, found, entry = world
    before = _key(found, entry)
    gpu = _key(found, entry, {env_vars.PROFILE: "ci", env_vars.MULTI_DEVICE_PLATFORM: "gpu"})
    assert gpu.changed(before) == ["suite"]
    flags = _key(found, entry, {env_vars.PROFILE: "ci", "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"})
    assert flags.changed(before) == ["environment"]  # the user's flags, once; the appended ones are the suite's
    off = dataclasses.replace(found, builtin=BuiltinMode.OFF)
    assert _key(off, entry, {env_vars.PROFILE: "ci", env_vars.MULTI_DEVICE_PLATFORM: "gpu"}).parts["suite"] == \
        _key(off, entry).parts["suite"]


def test_of_a_jobs_options_only_the_seed_replay_and_rollback_count(world, tmp_path):
    """The key hashes what of an entry's job determines its report: the run, its progress file, its phases
    directory and its report's name do not; the examples replayed and the checkpoints restored do, and the
    seed under a random profile."""
    from harness.model.entry_job import JobOptions

    root, package, found, entry = world
    ws, ci = Workspace.of(found.root), {env_vars.PROFILE: "ci"}
    base = report_key.key_of_job(ws, entry, found, ci, JobOptions(seed=1))
    assert base == _key(found, entry)  # as the variables told it before the job
    same = JobOptions(seed=1, run_id="another", progress=tmp_path / "p.json", phases_dir=tmp_path,
                      report_name="baseline-replay", reports_dir=tmp_path)
    assert report_key.key_of_job(ws, entry, found, ci, same) == base
    (tmp_path / "examples.json").write_text("{}")
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "state.json").write_text("{}")
    assert report_key.key_of_job(ws, entry, found, ci, JobOptions(seed=1, replay=tmp_path / "examples.json")
                                 ).changed(base) == ["replay"]
    builtin_only = dataclasses.replace(found, own_contracts=())  # a team's rollback runs the built-in part's
    assert report_key.key_of_job(ws, entry, builtin_only, ci, JobOptions(
        seed=1, rollback_from=(tmp_path / "checkpoints",))).changed(
        report_key.key_of_job(ws, entry, builtin_only, ci, JobOptions(seed=1))) == ["rollback"]
    dev = {env_vars.PROFILE: "dev"}
    assert report_key.key_of_job(ws, entry, found, dev, JobOptions(seed=2)).changed(
        report_key.key_of_job(ws, entry, found, dev, JobOptions(seed=1))) == ["hypothesis"]


# --- a team's report in two parts (harness.stack.entry_side.parts), each under a key of its own -------------

def _parts(found, entry):
    ws = Workspace.of(found.root)
    return {part: report_key.key_of(ws, entry, found, {env_vars.PROFILE: "ci"}, 1, part=part)
            for part in (ReportPart.OWN, ReportPart.BUILTIN)}


PYPROJECT = '[project]\nname = "team"\nversion = "1"\ndependencies = []\n\n[dependency-groups]\ndev = ["pytest"]\n'


@pytest.mark.parametrize("edit, own_part", [
    (lambda root: (root / "regressor/train.py").write_text("LR = 0.2\n"), ["contracts"]),
    (lambda root: (root / "contracts/test_losses.py").write_text("def test_losses(check): pass\n"), ["contracts"]),
    (lambda root: (root / "golden/losses.json").write_text('{"values": {"a": 1}}\n'), ["golden"]),
    (lambda root: (root / "pyproject.toml").write_text(PYPROJECT.replace('"pytest"', '"pytest", "ruff"')),
     ["contracts"]),
    (lambda root: (root / "pyproject.toml").write_text(PYPROJECT.replace('version = "1"', 'version = "2"')),
     ["contracts"]),
    (lambda root: (root / "pyproject.toml").write_text(PYPROJECT + "\n[tool.ruff]\nline-length = 120\n"),
     ["contracts"]),
], ids=["code", "contract", "own-golden", "a-dev-dependency", "the-version", "a-tool-table"])
def test_the_teams_code_contracts_and_pyproject_are_its_parts_inputs_never_the_built_in_parts(world, edit, own_part):
    """Your contracts' part holds your code, contracts, golden files and pyproject.toml (your code may read its
    settings); the built-in part, which never imports them, keeps its key: it is reused."""
    root, _, found, entry = world
    (root / "pyproject.toml").write_text(PYPROJECT)
    before = _parts(found, entry)
    edit(root)
    after = _parts(found, entry)
    assert after[ReportPart.OWN].changed(before[ReportPart.OWN]) == own_part
    assert after[ReportPart.BUILTIN] == before[ReportPart.BUILTIN]


def test_the_built_in_part_follows_the_built_in_golden_files_and_the_selection(world):
    root, package, found, entry = world
    before = _parts(found, entry)
    (root / "golden" / "masks.json").write_text('{"values": {}}\n')  # the team's copy of a built-in family's
    after = _parts(found, entry)
    assert after[ReportPart.BUILTIN].changed(before[ReportPart.BUILTIN]) == ["golden"]
    assert after[ReportPart.OWN] == before[ReportPart.OWN]
    (package / "builtin" / "golden").mkdir()
    (package / "builtin" / "golden" / "masks.json").write_text('{"values": {}}\n')  # the tool's own
    # (a file of the installed package too: its contract side's digest moves with it)
    assert _parts(found, entry)[ReportPart.BUILTIN].changed(after[ReportPart.BUILTIN]) == ["harness", "golden"]
    code = TeamCode((Use("optax.MultiSteps", "regressor/train.py:1"),), imports_flax=False)
    wider = TeamCode((*code.uses, Use("optax.clip_by_global_norm", "regressor/train.py:2")), imports_flax=False)
    one, two = (dataclasses.replace(found, selection=select(Scope.USED, c)) for c in (code, wider))
    assert _parts(two, entry)[ReportPart.BUILTIN].changed(_parts(one, entry)[ReportPart.BUILTIN]) == ["suite"]


def test_the_built_in_parts_process_is_told_neither_the_teams_import_path_nor_its_contracts(world):
    """What makes leaving the team's code out of its key right: pytest is given neither (nor its conftest.py
    files: --noconftest); the own part is given both, and no built-in module."""
    from harness.stack.entry_side.entry import suite_arguments

    root, _, found, _ = world
    found = dataclasses.replace(found, selection=select(Scope.USED, TeamCode(
        (Use("optax.MultiSteps", "regressor/train.py:1"),), imports_flax=False)))
    builtin = suite_arguments(found, part=ReportPart.BUILTIN)
    assert "--noconftest" in builtin and not [a for a in builtin if str(root / "contracts") in a or "pythonpath" in a]
    assert "harness.builtin.test_accumulation" in builtin
    own = suite_arguments(found, part=ReportPart.OWN)
    assert f"pythonpath={root}" in own and own[-1] == str(root / "contracts")
    assert not [a for a in own if a.startswith("harness.builtin")] and "--noconftest" not in own


def test_a_teams_rollback_runs_the_built_in_contracts_alone_and_its_key_leaves_its_code_out(world, tmp_path):
    """A rollback restores the built-in checkpoints family alone: in a project of two parts its process runs the
    built-in part's arguments, and an edit of the team's code leaves its key (its report is reused)."""
    from harness.model.entry_job import JobOptions

    root, _, found, entry = world
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "state.json").write_text("{}")
    told = JobOptions(seed=1, rollback_from=(tmp_path / "checkpoints",))
    before = report_key.key_of_job(Workspace.of(root), entry, found, {env_vars.PROFILE: "ci"}, told)
    (root / "regressor/train.py").write_text("LR = 0.2\n")
    assert report_key.key_of_job(Workspace.of(root), entry, found, {env_vars.PROFILE: "ci"}, told) == before


def test_a_teams_copies_of_built_in_families_are_the_built_in_parts_input_and_an_own_family_keeps_its_name(world):
    """golden/builtin/ holds the team's recorded copies of built-in families: the built-in part reads them. An own
    family named as a built-in one (a team's `losses`, the built-in `losses`) keeps its golden file in its own
    part: changing it must move that part's key, or the part would be reused with values it never judged."""
    root, _, found, entry = world
    before = _parts(found, entry)
    (root / "golden" / "builtin").mkdir()
    (root / "golden" / "builtin" / "masks.json").write_text('{"values": {}}\n')
    after = _parts(found, entry)
    assert after[ReportPart.BUILTIN].changed(before[ReportPart.BUILTIN]) == ["golden"]
    assert after[ReportPart.OWN] == before[ReportPart.OWN]
    (root / "golden" / "losses.json").write_text('{"own": true, "values": {"a": 1}}\n')  # marked, whatever its name
    marked = _parts(found, entry)
    assert marked[ReportPart.OWN].changed(after[ReportPart.OWN]) == ["golden"]
    assert marked[ReportPart.BUILTIN] == after[ReportPart.BUILTIN]
