"""Which built-in contracts a team's run takes: in report mode only the families covering the Optax
callables its code calls (the usage scan and the coverage ledger), every family with `--builtin all` or in
judge mode, never the Flax families for code that does not import flax; the choice is in the report key
and the verdict says it. Nothing here installs a stack: the selection is read from source."""

from __future__ import annotations

import textwrap

import pytest

from harness import devices, env_vars
from harness.model.enums import BuiltinMode
from harness.stack import project
from harness.stack.commands import options as command_options
from harness.stack.entry_side import multi_device
from harness.stack.pins import current, matrix, pins_from
from harness.stack.selection import builtin_modules, ledger_families
from harness.stack.selection.select import Scope
from harness.stack.workspace import Workspace

NO_FLAX = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "numpy": "2.5.5"}
OPTIM = """\
    import optax


    def make(total_steps):
        schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, total_steps)
        tx = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(schedule))
        return optax.MultiSteps(tx, every_k_schedule=4)
    """


def _team(tmp_path, builtin='"report"', code=OPTIM, pins=NO_FLAX):
    (tmp_path / "contracts").mkdir()
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "optim.py").write_text(textwrap.dedent(code))
    (tmp_path / "requirements.txt").write_text("".join(f"{k}=={v}\n" for k, v in pins.items()))
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\ncontracts = ["contracts"]\nbuiltin = {builtin}\n')
    return tmp_path


@pytest.fixture
def team(tmp_path, monkeypatch):
    def make(**kwargs):
        root = _team(tmp_path, **kwargs)
        monkeypatch.setenv(env_vars.PROJECT, str(root))  # a team's project
        for name in (env_vars.BUILTIN, env_vars.BASELINE_FROM, env_vars.CONTRACT_DIRS):
            monkeypatch.delenv(name, raising=False)
        return root
    return make


def _load():
    return project.load(Workspace.from_environment())


def _families(modules):
    return sorted({m.rsplit(".", 1)[1].removeprefix("test_").split("_")[0] for m in modules})


def _ledger_tests(names, runs):
    """What the coverage ledger, read as the coverage command reads it (harness.coverage.ledger), names for the
    callables `names`: every contract of theirs, and the check of each one's defaults in its family's defaults
    module, and the contracts that take its gradient, in the families `runs` (of a test parametrized by callable,
    the check of it alone)."""
    from harness import builtin_families
    from harness.coverage import ledger

    read = ledger.read()
    found = set()
    for name in names:
        entry = read.in_scope[name]
        per_callable = builtin_families.PER_CALLABLE_TESTS  # a test parametrized by callable: its check alone
        found |= {f"{g}[{name}]" if g.split("/")[1] in per_callable else g for g in entry.contracts() | set(entry.gradient)}
        if entry.params or entry.gaps:
            found |= {f"{family}/test_parameter_defaults[{name}]" for family, areas in builtin_families.areas().items()
                      if entry.area.value in areas}
    return {t for t in found if t.split("/")[0] in runs}


def test_report_mode_takes_the_tests_whose_subject_the_code_calls(team):
    team()
    found = _load()
    selection = found.selection
    # MultiSteps -> accumulation; the schedule -> schedules; clip_by_global_norm -> clipping (and shapes, whose
    # mismatched-gradients contract calls it); chain -> masks, and training, which needs flax: not imported here;
    # sgd -> optimizers; MultiSteps, chain and sgd -> compositions.
    assert selection.families == ("accumulation", "clipping", "compositions", "masks", "optimizers", "schedules",
                                  "shapes")
    called = ("optax.warmup_cosine_decay_schedule", "optax.chain", "optax.clip_by_global_norm", "optax.sgd",
              "optax.MultiSteps")
    assert [c.callable for c in selection.called] == list(called)  # in the order the code first uses them
    assert set(selection.tests) == _ledger_tests(called, selection.families)
    # Only those tests: not apply_every's (accumulation), nor adamw's (masks, optimizers), nor lbfgs's.
    assert "accumulation/test_guide_case" in selection.tests and "accumulation/test_apply_every" not in selection.tests
    assert "accumulation/test_parameter_defaults[optax.MultiSteps]" in selection.tests  # one check of the defaults
    assert not {t for t in selection.tests if "adamw" in t}
    assert found.suite[0] == "--pyargs" and _families(found.suite[1:-1]) == list(selection.families)
    assert "harness.builtin" not in found.suite and found.suite[-1].endswith("contracts")
    assert "harness.builtin.test_schedules_defaults" in found.suite  # it holds a check kept
    assert "harness.builtin.test_optimizers_lbfgs" not in found.suite  # it holds none
    line = selection.line()
    count = len({t.split("[")[0] for t in selection.tests})
    assert line.startswith(f"built-in contracts run for what your code calls: {count} of the "
                           f"{sum(len(m.tests) for m in builtin_modules.modules())} built-in tests; for the library "
                           "callables it calls, optax.warmup_cosine_decay_schedule at trainer/optim.py:5 (")
    schedules = len({t.split("[")[0] for t in _ledger_tests(["optax.warmup_cosine_decay_schedule"], ["schedules"])})
    assert f"optax.warmup_cosine_decay_schedule at trainer/optim.py:5 ({schedules} tests: schedules {schedules})" in line
    assert "optax.MultiSteps at trainer/optim.py:7 (" in line
    # The losses family (issue 45) is not run: the code calls no loss; nor activations, initializers, random: it calls
    # no jax.nn function, initialiser or jax.random draw.
    assert ("not run: activations, data_parallel, edges, initializers, losses, performance, random, and the other tests of "
            "accumulation, clipping, compositions, "
            "masks, optimizers, schedules, shapes (`--builtin all` runs them)") in line
    assert "your code does not import flax: checkpoints, training, wrappers do not run (and flax need not be pinned)" in line
    # Nothing shards, so the data-parallel family's process does not start.
    assert multi_device.planned(found, {}) is None and not found.runs_family(devices.FAMILY)


def test_a_defaults_test_is_a_checks_parametrization_by_the_callables_name():
    """The selection names one check of a family's defaults test per callable: each defaults module holds one test,
    made by harness.builtin.defaults.parameter_defaults_test, with the declared name, under its family's mark, and
    parametrized by the callable's name over the callables the ledger lists for the family."""
    import importlib
    import inspect

    from harness import builtin_families
    from harness.builtin import defaults

    for family in builtin_families.areas():
        module = importlib.import_module(f"harness.builtin.test_{family}_defaults")
        tests = {n: f for n, f in vars(module).items() if n.startswith("test_") and inspect.isfunction(f)}
        assert list(tests) == [builtin_families.DEFAULTS_TEST], module
        test = tests[builtin_families.DEFAULTS_TEST]
        assert test.__name__ == builtin_families.DEFAULTS_TEST, module
        assert module.pytestmark.args == (family,), module
        (parametrized,) = test.pytestmark
        assert parametrized.args == ("name", sorted(defaults.ledger_params(family))), module


def test_what_an_out_of_scope_callable_builds_on_comes_from_the_ledger():
    """[built_on]: a callable outside the scope takes the families of the in-scope callables it builds on."""
    text = """
[in_scope."optax.add_decayed_weights"]
area = "weight_decay"
[in_scope."optax.add_decayed_weights".params]
weight_decay = "masks/test_weight_decay"
mask = ["masks/test_weight_decay", "shapes/test_mask"]

[out_of_scope]
"optax.made_up_optimizer" = "an optimizer"

[built_on]
"optax.made_up_optimizer" = ["optax.add_decayed_weights"]
"""
    found = ledger_families.families_by_callable(text)
    assert found["optax.made_up_optimizer"] == found["optax.add_decayed_weights"] == frozenset({"masks", "shapes"})


def test_an_optimizer_in_scope_takes_the_families_naming_it(team):
    """adamw is in the ledger's optimizer area: its own contracts (masks' adamw references, compositions)."""
    team(code="import optax\n\ndef make():\n    return optax.adamw(1e-3, mask=lambda p: p)\n")
    # its own contracts (optimizers), the masks family's adamw references, the compositions around it
    assert _load().selection.families == ("compositions", "masks", "optimizers")


def test_a_loss_the_code_calls_takes_the_losses_tests_that_call_it(team):
    """A team's loss (under either public name) runs the losses family's contracts of that loss, its defaults
    check and the error contracts, and the edges family's check of its gradient, and none of another loss's
    (issues 45, 61)."""
    team(code="import optax\n\ndef loss(logits, labels):\n"
              "    return optax.softmax_cross_entropy(logits, labels).mean()\n\n"
              "def other(p, t):\n    return optax.losses.huber_loss(p, t, delta=2.0)\n")
    selection = _load().selection
    assert selection.families == ("edges", "losses")
    called = ("optax.softmax_cross_entropy", "optax.huber_loss")
    assert set(selection.tests) == _ledger_tests(called, ("edges", "losses"))
    # Their gradients at the edges: the edges family's check of each, not every loss's.
    assert {t for t in selection.tests if t.startswith("edges/")} == {
        "edges/test_loss_gradient_at_edges[optax.softmax_cross_entropy]", "edges/test_loss_gradient_at_edges[optax.huber_loss]"}
    assert {"losses/test_softmax_cross_entropy", "losses/test_softmax_cross_entropy_axis_and_where",
            "losses/test_classification_errors", "losses/test_huber_loss", "losses/test_regression_errors",
            "losses/test_parameter_defaults[optax.softmax_cross_entropy]"} <= set(selection.tests)
    assert not {t for t in selection.tests if "sigmoid" in t or "log_cosh" in t}


@pytest.mark.parametrize("code, families", [
    ("import jax\n\ndef act(x):\n    return jax.nn.gelu(x)\n", ("activations",)),
    ("from flax import nnx\n\ndef act(x):\n    return nnx.relu(x)\n", ("activations", "training")),
    ("import jax\n\ndef act(x):\n    return jax.nn.swish(x)\n", ("activations",)),
    ("import flax.linen as nn\n\ndef act(x):\n    return nn.gelu(nn.relu(x))\n", ("activations",)),
    ("from flax.linen.activation import gelu\n\ndef act(x):\n    return gelu(x)\n", ("activations",)),
], ids=["jax.nn", "flax.nnx", "alias", "flax.linen", "flax.linen.activation"])
def test_an_activation_the_code_calls_takes_the_activations_family(team, code, families):
    """jax.nn's functions are pinned by the activations family, called through jax.nn, Flax's re-exports (nnx's,
    linen's: the same objects) or the function's other name (any flax.nnx use also takes the training family): the
    tests the ledger names for that function, not the whole family. A linen model was told `not run: activations`
    (issue 53)."""
    team(code=code)
    selection = _load().selection
    assert set(families) <= set(selection.families)
    activation_tests = {t for t in selection.tests if t.startswith("activations/")}
    assert "activations/test_activation" in activation_tests and "activations/test_one_hot" not in activation_tests


@pytest.mark.parametrize("code, family, test", [
    ("from flax import nnx\n\ndef init(key):\n    return nnx.initializers.lecun_normal()(key, (4, 3))\n",
     "initializers", "initializers/test_named_initializer"),
    ("import jax\n\ndef init(key):\n    return jax.nn.initializers.glorot_uniform()(key, (4, 3))\n",
     "initializers", "initializers/test_named_initializer"),
    ("import jax\n\ndef init(key):\n    return jax.nn.initializers.xavier_uniform()(key, (4, 3))\n",
     "initializers", "initializers/test_named_initializer"),
    ("import jax\n\ndef noise(key):\n    return jax.random.normal(key, (3,))\n", "random", "random/test_draws"),
    ("import flax.linen as nn\n\ndef dense():\n    return nn.Dense(4, kernel_init=nn.initializers.lecun_normal())\n",
     "initializers", "initializers/test_named_initializer"),
], ids=["flax.nnx", "jax.nn", "alias", "jax.random", "flax.linen"])
def test_an_initializer_or_draw_the_code_calls_takes_its_tests(team, code, family, test):
    """An initialiser called through jax.nn.initializers, Flax's re-export or its other name, and a jax.random draw,
    take the tests the ledger names for that callable (and its defaults check), not the whole family."""
    team(code=code)
    selection = _load().selection
    assert family in selection.families
    assert test in selection.tests
    assert any(t.startswith(f"{family}/test_parameter_defaults[") for t in selection.tests)
    others = {"initializers": "initializers/test_orthogonal", "random": "random/test_permutation"}[family]
    assert others not in selection.tests


def test_inject_hyperparams_takes_the_compositions(team):
    """A team's injected optimizer runs the compositions family (inject_hyperparams around adam, from the
    ledger's contracts), with the schedules family that pins inject_hyperparams alone."""
    team(code="import optax\n\ndef make():\n    return optax.inject_hyperparams(optax.adam)(learning_rate=1e-3)\n")
    # inject_hyperparams -> compositions and schedules; adam -> optimizers
    assert _load().selection.families == ("compositions", "optimizers", "schedules")


def test_sharding_and_flax_code_take_their_families(team):
    team(code="""\
        import jax
        import optax
        from flax import nnx


        def make(model, mesh):
            sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
            return nnx.Optimizer(model, optax.MultiSteps(optax.sgd(0.1), 2), wrt=nnx.Param), sharding
        """)
    found = _load()
    # MultiSteps and sgd -> compositions; sgd -> optimizers; nnx.Optimizer -> wrappers
    assert found.selection.families == ("accumulation", "compositions", "data_parallel", "optimizers", "training",
                                        "wrappers")
    assert found.imports_flax and not found.selection.without_flax
    assert multi_device.planned(found, {}) is not None  # its own process, not in the main run's modules
    assert "harness.builtin.test_data_parallel" not in found.suite


def test_a_linen_train_state_takes_the_wrappers_family_not_the_nnx_training(team):
    team(code="""\
        import optax
        from flax.training import train_state


        def make(apply_fn, params):
            return train_state.TrainState.create(apply_fn=apply_fn, params=params, tx=optax.sgd(0.1))
        """)
    found = _load()
    assert "wrappers" in found.selection.families and "training" not in found.selection.families
    assert not found.selection.chosen  # the ledger names TrainState.create: its tests, not the family whole
    called = {c.callable: c.tests for c in found.selection.called}
    assert "wrappers/test_train_state_equals_optax_alone" in called["flax.training.train_state.TrainState.create"]
    assert not any(t.startswith("wrappers/test_optimizer") for t in found.selection.tests)  # nnx.Optimizer's


@pytest.mark.parametrize("how", ["option", "table"])
def test_builtin_all_runs_every_family_but_those_needing_flax_it_lacks(team, monkeypatch, how):
    root = team(builtin='"all"' if how == "table" else '"report"')
    if how == "option":
        options, _ = command_options.split(["--builtin", "all"])
        for name, value in command_options.environment(options, root).items():
            monkeypatch.setenv(name, value)
    found = _load()
    assert found.builtin == BuiltinMode.REPORT and found.builtin_scope == Scope.ALL
    every = {m.family for m in builtin_modules.modules()}
    assert set(found.selection.families) == every - {"checkpoints", "training", "wrappers"}
    assert found.selection.line().startswith("built-in contracts run: every family; your code does not import flax")
    assert multi_device.planned(found, {}) is not None


def test_with_flax_all_is_the_whole_package_as_before(team):
    team(builtin='"all"', code="from flax import nnx\n\nLAYER = nnx.Linear\n")
    assert _load().suite[:2] == ["--pyargs", "harness.builtin"]


def test_this_checkout_runs_everything(monkeypatch):
    monkeypatch.delenv(env_vars.PROJECT, raising=False)
    monkeypatch.delenv(env_vars.BUILTIN, raising=False)
    found = _load()
    assert found.selection is None and found.suite == ["--pyargs", "harness.builtin"]
    assert found.runs_family(devices.FAMILY)


def test_a_project_without_flax_reads_its_pins_and_plans_without_it(team):
    root = team()
    assert pins_from.read(root / "requirements.txt", optional=matrix.OPTIONAL) == NO_FLAX
    ws = Workspace.from_environment()
    pins = current.pins(ws)
    assert "flax" not in pins.baseline and "flax" not in pins.candidate
    entries = current.entries(ws, matrix.CandidateRequest.parse("latest"))
    candidate = entries[matrix.CANDIDATE]
    assert "flax" not in candidate.pins and not any(r.startswith("flax") for r in candidate.requirements)
    assert "flax-only" not in entries  # no flax to bump
    assert current.within(matrix.CandidateRequest.parse("optax==0.2.8 flax==0.12.12"), pins.baseline).pins == \
        {"optax": "0.2.8"}


def test_a_project_importing_flax_must_still_pin_it(team):
    team(code="from flax import nnx\n\nLAYER = nnx.Linear\n")
    with pytest.raises(Exception, match=r"does not pin flax: .* e\.g\. `flax==X\.Y\.Z`"):
        current.pins(Workspace.from_environment())


def test_init_takes_a_baseline_without_flax_when_the_code_does_not_import_it(tmp_path, capsys):
    from harness.stack.commands import init

    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "optim.py").write_text(textwrap.dedent(OPTIM))
    (tmp_path / "requirements.txt").write_text("".join(f"{k}=={v}\n" for k, v in NO_FLAX.items()))
    assert init.main([], tmp_path) == 0
    (tmp_path / "trainer" / "model.py").write_text("import flax.nnx as nnx\n")
    (tmp_path / "pyproject.toml").unlink()
    with pytest.raises(Exception, match="does not pin flax"):
        init.main([], tmp_path)


@pytest.mark.parametrize("table, words", [
    ('[built_on]\n"optax.adamw" = ["optax.nowhere"]\n', "listing in-scope names"),
    ('[built_on]\n"optax.MultiSteps" = ["optax.add_decayed_weights"]\n', "must be an out-of-scope name"),
])
def test_the_ledger_refuses_a_built_on_line_it_cannot_follow(tmp_path, table, words):
    from harness.coverage import ledger
    from harness.errors import HarnessError

    path = tmp_path / "ledger.toml"
    path.write_text(ledger.LEDGER.read_text().split("\n[built_on]\n")[0] + "\n" + table)
    with pytest.raises(HarnessError, match=words):
        ledger.read(path)


def test_the_builtin_modules_are_parsed_once_per_content(tmp_path, monkeypatch):
    """A project is loaded many times a run (each load selected the families anew: 0.3 s of parsing each,
    most of a simulated run's time); the parse happens again only when a module changes."""
    import ast

    from harness.stack.selection import builtin_modules

    folder = tmp_path / "builtin"
    folder.mkdir()
    (folder / "test_alpha.py").write_text("import optax\n")
    parsed = []
    real = ast.parse
    monkeypatch.setattr(builtin_modules.ast, "parse", lambda *a, **k: parsed.append(a[1]) or real(*a, **k))
    first = builtin_modules.modules(folder)
    assert builtin_modules.modules(folder) == first and len(parsed) == 2  # the module, and its flax check
    (folder / "test_alpha.py").write_text("import optax\nimport flax\n")
    assert builtin_modules.modules(folder)[0].needs_flax and len(parsed) == 4
