"""`nox -s sensitivity`'s parts that need no mutant run: the seeded sample, the equivalent-mutant file,
the report from a cosmic-ray session, and the environment mutants run in (never an entry's)."""

import dataclasses
import difflib
import json
import os
import random
import tomllib
from importlib.util import find_spec
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.model import sensitivity as model
from harness.model.codec import from_json, to_json
from harness.stack.commands import sensitivity as command
from harness.stack.sensitivity import cosmic, disposable, equivalents, merge, render, scope
from harness.stack.sensitivity.mutants import MutantId, Selection, parse_shard

ROOT = Path(__file__).resolve().parents[4]
MUTANTS = [MutantId(f"optax/m{i % 3}.py", f"core/Op{i % 5}", i, 10 + i) for i in range(40)]


# --- the seeded sample ---------------------------------------------------------------------------------

def test_the_sample_is_the_same_for_the_same_seed_whatever_order_cosmic_ray_lists_mutants_in():
    shuffled = MUTANTS[:]
    random.Random(7).shuffle(shuffled)
    assert Selection(10, 3).apply(MUTANTS) == Selection(10, 3).apply(shuffled)
    assert len(Selection(10, 3).apply(MUTANTS)) == 10


def test_another_seed_draws_another_sample_and_no_sample_is_every_mutant():
    assert Selection(10, 3).apply(MUTANTS) != Selection(10, 4).apply(MUTANTS)
    assert Selection().apply(MUTANTS) == sorted(MUTANTS)
    assert Selection(100, 0).apply(MUTANTS) == sorted(MUTANTS)  # more than there are: all of them


def test_shards_split_the_selection_without_overlap():
    parts = [Selection(25, 1, (i, 3)).apply(MUTANTS) for i in range(3)]
    assert sorted(m for part in parts for m in part) == Selection(25, 1).apply(MUTANTS)
    assert parse_shard("2/3") == (1, 3)
    for bad in ("0/3", "4/3", "x", "1-3"):
        with pytest.raises(HarnessError, match="shard"):
            parse_shard(bad)


def test_a_sample_of_zero_is_refused():
    with pytest.raises(HarnessError, match="--sample must be at least 1"):
        Selection(0, 0).apply(MUTANTS)


def test_module_restricts_the_run_to_that_modules_mutants_and_names_the_choices_for_an_unknown_one():
    mutated = list(scope.MODULES)[:2]
    mutants = [MutantId(mutated[i % 2], "core/Op", i, i + 1) for i in range(6)]
    assert command.restrict(mutants, [mutated[1]]) == mutants[1::2]
    assert command.restrict(mutants, None) == mutants
    assert command.parse(["--module", mutated[0], "--module", mutated[1]]).module == mutated
    with pytest.raises(HarnessError, match=r"--module optax/nope\.py: not a mutated module; choose from .*_privacy"):
        command.restrict(mutants, ["optax/nope.py"])


# --- the equivalent mutants ----------------------------------------------------------------------------

def _equivalents(tmp_path, **fields):
    entry = {"module": "optax/m1.py", "operator": "core/Op1", "occurrence": 1, "line": 11, "reason": "r"}
    entry.update(fields)
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in entry.items() if v is not None)
    path = tmp_path / "equivalent.toml"
    path.write_text(f"[[equivalent]]\n{body}\n")
    return path


def test_an_equivalent_mutant_is_found_with_its_reason(tmp_path):
    found = equivalents.load(_equivalents(tmp_path, reason="the loop bound is never reached"), MUTANTS)
    assert found == {MUTANTS[1]: "the loop bound is never reached"}


@pytest.mark.parametrize("fields, message", [
    ({"occurrence": 99}, r"names no mutant of the installed optax \(optax/m1.py:core/Op1:99\).*--list"),
    ({"module": "optax/gone.py"}, "names no mutant of the installed optax"),
    ({"line": 12}, "starts on line 11, not 12; the code moved"),
    ({"reason": "  "}, "give the reason"),
    ({"reason": None}, "missing reason"),
    ({"occurrence": "1"}, "occurrence must be a int"),
    ({"extra": 1}, "unknown field extra"),
])
def test_a_bad_equivalent_entry_is_a_clear_error(tmp_path, fields, message):
    with pytest.raises(HarnessError, match=message):
        equivalents.load(_equivalents(tmp_path, **fields), MUTANTS)


def _session(tmp_path, modules):
    """cosmic-ray's own `init` of the modules (paths relative to tmp_path), in a session database."""
    from cosmic_ray.commands import init
    from cosmic_ray.work_db import use_db

    db = tmp_path / "session.sqlite"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with use_db(str(db)) as work_db:
            init([Path(m) for m in modules], work_db, {})
    finally:
        os.chdir(cwd)
    return db


# --- the report, from a tiny cosmic-ray session --------------------------------------------------------

SOURCE = "def f(a, b):\n    if a < b:\n        return a + b\n    return a * b\n"


def _fake_run(tmp_path):
    """A session of one small module: four mutants judged by hand (killed, survived, timeout, error),
    one listed as equivalent, the rest not drawn; read back through crsession as the run reads it."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult
    from cosmic_ray.work_db import WorkDB, use_db
    from harness.stack.sensitivity import crsession

    (tmp_path / "optax").mkdir()
    (tmp_path / "optax" / "m.py").write_text(SOURCE)
    db = _session(tmp_path, ["optax/m.py"])
    listed = sorted(crsession.list_mutants([str(db)]), key=lambda m: (m["operator"], m["occurrence"]))
    wanted = ["core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceBinaryOperator_Mul_Add",
              "core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_Lt_Gt",
              "core/ReplaceBinaryOperator_Add_Mul"]
    chosen = {op: next(m for m in listed if m["operator"] == op) for op in wanted}
    keys = {op: crsession.key_of(m) for op, m in chosen.items()}
    outcomes = [WorkResult(WorkerOutcome.NORMAL, "F", TestOutcome.KILLED, None),
                WorkResult(WorkerOutcome.NORMAL, "passed", TestOutcome.SURVIVED, None),
                WorkResult(WorkerOutcome.NORMAL, "timeout", TestOutcome.KILLED, None),
                WorkResult(WorkerOutcome.EXCEPTION, "Traceback: boom", TestOutcome.INCOMPETENT, None)]
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        by_key = {crsession.key_of(crsession.describe(i)): i for i in work_db.work_items}
        for op, result in zip(wanted, outcomes):
            mutation = by_key[keys[op]].mutations[0]
            operator = cosmic_ray.plugins.get_operator(op)()
            mutated = mutate_code(SOURCE, operator, mutation.occurrence)  # cosmic-ray's own mutant and diff form
            diff = "\n".join(difflib.unified_diff(SOURCE.split("\n"), mutated.split("\n"), "a/optax/m.py",
                                                  "b/optax/m.py", lineterm=""))
            work_db.set_result(by_key[keys[op]].job_id, WorkResult(result.worker_outcome, result.output,
                                                                   result.test_outcome, diff))
    equivalent = {keys[wanted[4]]: "equivalent: made up for the test"}
    crsession.skip(str(db), {k: "not drawn" for k in by_key if k not in keys.values()} | equivalent)
    return crsession.results([str(db)]), keys


def _report(tmp_path):
    rows, keys = _fake_run(tmp_path)
    equivalent = {keys["core/ReplaceBinaryOperator_Add_Mul"]: "made up for the test"}
    mutants = render.mutants(rows, {"optax/m.py": ["masks", "shapes"]}, equivalent)
    return model.report(mutants, started_at="s", finished_at="f", optax="0.2.6", cosmic_ray="8.7.0",
                        selection=model.Selection(5, 0, "1/1"), mutants_found=len(rows), seconds=40.0, workers=1)


def test_the_report_of_a_tiny_session_counts_each_outcome_and_scores_the_non_equivalent(tmp_path):
    report = _report(tmp_path)
    assert [m.outcome.value for m in sorted(report.mutants, key=lambda m: m.operator)] == \
        ["equivalent", "killed", "survived", "error", "timeout"]
    summary = report.summary
    assert (summary.killed, summary.survived, summary.timeout, summary.error, summary.equivalent) == (1, 1, 1, 1, 1)
    assert summary.scored == 4 and summary.score == 0.5  # killed + timeout over the non-equivalent
    assert from_json(model.SensitivityReport, to_json(report)) == report


def test_the_markdown_gives_the_table_the_score_and_each_survivor_on_one_line(tmp_path):
    text = render.markdown(_report(tmp_path))
    assert "**Score: 2 of 4 non-equivalent mutants noticed (50.0%)**; 1 equivalent" in text
    assert "| optax/m.py | 1 | 1 | 1 | 1 | 1 | 50.0% |" in text  # per module
    assert "| optax/m.py | core/ReplaceBinaryOperator_Mul_Add | 0 | 1 | 0 | 0 | 0 | 0.0% |" in text
    assert "| optax/m.py | core/ReplaceBinaryOperator_Add_Mul | 0 | 0 | 0 | 0 | 1 | n/a |" in text
    assert "| **all** |  | 1 | 1 | 1 | 1 | 1 | 50.0% |" in text and "| **all** | 1 | 1 | 1 | 1 | 1 | 50.0% |" in text
    survivors = text.split("## Survivors")[1].strip().splitlines()
    assert survivors == [
        "- optax/m.py L2: `if a < b:` -> `if a > b:` (core/ReplaceComparisonOperator_Lt_Gt #0; masks, shapes; error)",
        "- optax/m.py L4: `return a * b` -> `return a + b` (core/ReplaceBinaryOperator_Mul_Add #0; masks, shapes)",
    ]


def test_the_markdown_counts_per_module_the_mutants_outside_the_in_scope_lines(tmp_path):
    report = dataclasses.replace(_report(tmp_path), outside_scope={"optax/m.py": 2, "optax/r.py": 7})
    text = render.markdown(report)
    assert "9 mutants lie outside the lines of the in-scope callables" in text
    assert "| optax/m.py | 1 | 1 | 1 | 1 | 1 | 50.0% | 2 |" in text
    assert "| optax/r.py | 0 | 0 | 0 | 0 | 0 | n/a | 7 |" in text  # none judged there: still named
    assert "| **all** | 1 | 1 | 1 | 1 | 1 | 50.0% | 9 |" in text
    assert from_json(model.SensitivityReport, to_json(report)) == report
    only = dataclasses.replace(report, selection=model.Selection(None, 0, "1/1", ["optax/r.py"]))
    assert "every mutant of optax/r.py only;" in render.markdown(only)


def test_one_line_diff():
    diff = "--- mutation diff ---\n--- a/x.py\n+++ b/x.py\n@@ -57 +57 @@\n-    if a < b:\n+    if a <= b:\n"
    assert render.one_line(diff, 57) == "L57: `if a < b:` -> `if a <= b:`"
    assert render.one_line("", 3) == "L3: (no diff recorded)"


def test_a_drawn_mutant_left_unjudged_is_an_error():
    row = {"module": "optax/m.py", "operator": "core/X", "occurrence": 0, "line": 1, "outcome": "pending",
           "diff": "", "output": ""}
    with pytest.raises(HarnessError, match="left the mutant optax/m.py:core/X:0 unjudged"):
        render.mutants([row], {"optax/m.py": ["masks"]}, {})


def test_a_new_report_moves_the_previous_one_aside(tmp_path):
    path = tmp_path / "sensitivity.json"
    path.write_text("old")
    logged = []
    command.write(model.report([], started_at="s", finished_at="f", optax="0.2.6", cosmic_ray="8.7.0",
                               selection=model.Selection(None, 0, "1/1"), mutants_found=0, seconds=0.0, workers=1),
                  path, logged.append)
    assert (tmp_path / "previous" / "sensitivity.json").read_text() == "old"
    assert json.loads(path.read_text())["summary"]["score"] is None
    assert any("moved the previous sensitivity.json" in line for line in logged)


# --- scope, test command and configuration -------------------------------------------------------------

def test_every_module_in_scope_is_in_the_baseline_optax_and_every_family_has_contracts():
    site = Path(find_spec("optax").origin).parents[1]
    for module, families in scope.MODULES.items():
        assert (site / module).is_file(), module
        assert scope.family_files(ROOT / "harness" / "builtin", families)


def test_a_family_without_contract_files_is_an_error():
    with pytest.raises(HarnessError, match="no contract file for family 'nope'"):
        scope.family_files(ROOT / "harness" / "builtin", ("nope",))


def test_a_lead_file_runs_first_in_its_own_group_and_must_belong_to_the_families():
    contracts = ROOT / "harness" / "builtin"
    found = {g.name: g for g in scope.groups({"optax/a.py": ("schedules",), "optax/b.py": ("schedules",)},
                                             {"optax/b.py": "test_schedules_plateau.py"})}
    assert sorted(found) == ["schedules", "schedules@test_schedules_plateau"]
    files = found["schedules@test_schedules_plateau"].files(contracts)
    assert files[0].name == "test_schedules_plateau.py" and sorted(files) == sorted(found["schedules"].files(contracts))
    assert all(lead in [f.name for f in scope.family_files(contracts, scope.MODULES[m])] for m, lead in scope.LEADS.items())
    with pytest.raises(HarnessError, match="lead file test_masks.py is not a contract file of schedules"):
        scope.Group("g", ("schedules",), ("optax/a.py",), "test_masks.py").files(contracts)


def test_the_config_is_cosmic_rays_toml_with_the_test_command(tmp_path):
    files = scope.family_files(ROOT / "harness" / "builtin", ("clipping",))
    command_line = cosmic.test_command(Path("/venv/bin/python"), ROOT, files)
    assert " -x " in command_line and str(ROOT / "harness/builtin/test_clipping.py") in command_line
    local = tomllib.loads(cosmic.write_config(tmp_path / "l.toml", ("optax/a.py",), command_line, 60, []).read_text())
    assert local["cosmic-ray"] == {"module-path": ["optax/a.py"], "timeout": 60.0, "excluded-modules": [],
                                   "test-command": command_line, "distributor": {"name": "local"}}
    http = tomllib.loads(cosmic.write_config(tmp_path / "h.toml", ("optax/a.py",), command_line, 60,
                                             ["http://127.0.0.1:1"]).read_text())
    assert http["cosmic-ray"]["distributor"] == {"name": "http", "http": {"worker-urls": ["http://127.0.0.1:1"]}}


# --- the environment mutants run in --------------------------------------------------------------------

def test_an_entry_environment_is_never_the_disposable_one(tmp_path):
    nox_dir = tmp_path / ".nox"
    entries = [nox_dir / "baseline", nox_dir / "candidate"]
    disposable.check_disposable(nox_dir / "sensitivity", entries)
    for bad in (nox_dir / "baseline", nox_dir / "baseline" / "inner", nox_dir):
        with pytest.raises(HarnessError, match="overlaps the entry environment"):
            disposable.check_disposable(bad, entries)


def test_workers_mutate_private_copies_never_the_installed_files(tmp_path):
    """uv links installed files from its cache: the worker's copy must be new files, so that mutating one
    (cosmic-ray truncates and rewrites it) leaves the environment and the cache untouched."""
    cache = tmp_path / "cache" / "a.py"
    cache.parent.mkdir()
    cache.write_text("x = 1\n")
    installed = tmp_path / "venv" / "lib" / "python3.12" / "site-packages" / "optax" / "a.py"
    installed.parent.mkdir(parents=True)
    os.link(cache, installed)  # as uv installs it
    work = disposable.worker_copy(tmp_path / "venv", tmp_path / "venv" / "work" / "worker-0")
    copy = work / "optax" / "a.py"
    assert disposable.is_private_copy(copy, installed) and not disposable.is_private_copy(installed, cache)
    with copy.open("wt") as handle:  # as cosmic-ray's mutate_path writes a mutant
        handle.write("x = 2\n")
    assert installed.read_text() == cache.read_text() == "x = 1\n"


def test_a_worker_copies_every_package_it_mutates(tmp_path):
    """A jax module in scope (activations) needs the worker's own copy of jax beside optax's: cosmic-ray finds
    the module path in the worker's directory, and the contracts import jax from it."""
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    for package in ("optax", "jax/_src/nn"):
        (site / package).mkdir(parents=True)
        (site / package / "functions.py").write_text("x = 1\n")
    work = disposable.worker_copy(tmp_path / "venv", tmp_path / "venv" / "work" / "worker-0", ("jax", "optax"))
    copied = work / "jax" / "_src" / "nn" / "functions.py"
    assert copied.read_text() == "x = 1\n" and (work / "optax" / "functions.py").is_file()
    assert disposable.is_private_copy(copied, site / "jax" / "_src" / "nn" / "functions.py")
    assert scope.packages({"optax/a.py": (), "jax/_src/nn/functions.py": ()}) == ("jax", "optax")
    with pytest.raises(HarnessError, match="flax is not installed"):
        disposable.worker_copy(tmp_path / "venv", tmp_path / "venv" / "work" / "worker-1", ("flax",))


def test_a_mutated_flax_module_gets_the_worker_its_own_copy_of_flax_too(tmp_path):
    """The wrappers family mutates Flax's modules: cosmic-ray finds them relative to the worker's directory,
    so every package a mutated module lies in is copied there (scope.packages()), each as new files."""
    assert scope.packages() == ("flax", "jax", "optax")
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    for module in ("optax/a.py", "flax/training/train_state.py"):
        (site / module).parent.mkdir(parents=True, exist_ok=True)
        (site / module).write_text("x = 1\n")
    work = disposable.worker_copy(tmp_path / "venv", tmp_path / "work", ("flax", "optax"))
    copy = work / "flax" / "training" / "train_state.py"
    assert disposable.is_private_copy(copy, site / "flax" / "training" / "train_state.py")
    assert (work / "optax" / "a.py").read_text() == "x = 1\n"
    with pytest.raises(HarnessError, match="jax is not installed"):
        disposable.worker_copy(tmp_path / "venv", tmp_path / "work", ("jax",))


# --- the nightly's shards, merged ----------------------------------------------------------------------

def _shard(index, count, outcome):
    mutant = model.Mutant("optax/m.py", "core/Op", index, index, outcome, f"L{index}: `a` -> `b`", ["masks"])
    return model.report([mutant], started_at=f"s{index}", finished_at=f"f{index}", optax="0.2.6", cosmic_ray="8.7.0",
                        selection=model.Selection(None, 0, f"{index}/{count}"), mutants_found=9, seconds=10.0 * index,
                        workers=3, outside_scope={"optax/m.py": 4})


def test_shard_reports_merge_into_one_report_of_all_their_mutants(tmp_path):
    paths = []
    for index, outcome in ((1, model.MutantOutcome.KILLED), (2, model.MutantOutcome.SURVIVED)):
        paths.append(tmp_path / f"sensitivity-shard-{index}.json")
        paths[-1].write_text(json.dumps(to_json(_shard(index, 2, outcome))))
    assert merge.main([str(tmp_path / "out" / "sensitivity.json"), *map(str, paths)]) == 0
    merged = merge.read(tmp_path / "out" / "sensitivity.json")
    assert (merged.summary.killed, merged.summary.survived, merged.summary.score) == (1, 1, 0.5)
    assert (merged.workers, merged.seconds, merged.selection.shard) == (6, 20.0, "1-2/2")
    assert merged.outside_scope == {"optax/m.py": 4}  # every shard counts all of them: once, not per shard
    assert "L2: `a` -> `b`" in (tmp_path / "out" / "sensitivity.md").read_text()


def test_a_missing_or_foreign_shard_is_refused():
    with pytest.raises(HarnessError, match=r"the shards given are \[1\], not each of 1..2 once"):
        merge.merge([_shard(1, 2, model.MutantOutcome.KILLED)])
    with pytest.raises(HarnessError, match="different runs"):
        merge.merge([_shard(1, 2, model.MutantOutcome.KILLED), _shard(2, 3, model.MutantOutcome.KILLED)])


def test_module_restricts_a_run_to_modules_in_scope_and_refuses_others(capsys):
    assert command.parse(["--module", "optax/_src/transform.py"]).module == ["optax/_src/transform.py"]
    assert command.parse([]).module == []
    with pytest.raises(SystemExit):
        command.parse(["--module", "optax/projections/_projections.py"])
    assert "invalid choice: 'optax/projections/_projections.py'" in capsys.readouterr().err


def test_a_second_run_in_the_same_environment_is_refused_while_the_first_holds_it(tmp_path):
    """A second run (--list too) would rebuild the worker copies and sessions the first one mutates in."""
    held = disposable.lock_work(tmp_path)
    try:
        with pytest.raises(HarnessError, match=rf"another `nox -s sensitivity` \(pid {os.getpid()}\) is running"):
            disposable.lock_work(tmp_path)
    finally:
        held.close()
    disposable.lock_work(tmp_path).close()  # released with its holder


def test_the_markdown_names_the_libraries_whose_modules_were_mutated_with_their_versions(tmp_path):
    report = _report(tmp_path)
    assert "mutated optax 0.2.6's modules in scope" in render.markdown(report)  # a report from before: optax's
    jax_only = dataclasses.replace(report, libraries={"jax": "0.11.2"})
    assert "mutated jax 0.11.2's modules in scope" in render.markdown(jax_only)
    both = dataclasses.replace(report, libraries={"flax": "0.12.12", "jax": "0.11.2", "optax": "0.2.6"})
    assert "mutated flax 0.12.12, jax 0.11.2 and optax 0.2.6's modules in scope" in render.markdown(both)
    assert from_json(model.SensitivityReport, to_json(both)) == both
