"""A release whose function lacks a parameter a check passes (jax 0.10.2's one_hot has no out_sharding): the
check records that error as the release's behaviour when recording, and judged against a release that takes the
parameter it is a change, never a check that stops a recording (measured on a TPU host, whose jax is 0.10.2)."""

import json
import shutil
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parents[2] / "golden" / "activations.json"

# jax.nn as a release without one_hot's out_sharding: every other function is the installed one.
OLD_RELEASE = '''
import types

import jax.nn

from harness.builtin import activation_checks


def _one_hot(x, num_classes, *, dtype=None, axis=-1):
    return jax.nn.one_hot(x, num_classes, axis=axis, **({} if dtype is None else {"dtype": dtype}))


_NN = types.SimpleNamespace(**{name: getattr(jax.nn, name) for name in dir(jax.nn) if not name.startswith("_")})
_NN.one_hot = _one_hot
activation_checks.nn = lambda: _NN
'''

SELECT = ("--pyargs", "harness.builtin.test_activations_axes", "-k",
          "test_one_hot and (out_sharding or default) and not axis1")


@pytest.fixture
def run(pytester, monkeypatch):
    pytester.makepyfile(old_release=OLD_RELEASE)
    monkeypatch.syspath_prepend(str(pytester.path))
    pytester.mkdir("golden")
    shutil.copy(GOLDEN, pytester.path / "golden" / GOLDEN.name)

    def run(*args):
        return pytester.runpytest_inprocess("-q", "-p", "no:randomly", "-p", "harness.contract.plugin",
                                            "-p", "old_release", "--harness-golden-dir=golden", *SELECT, *args)

    return run


def test_judged_against_the_baseline_the_missing_parameter_is_a_change_of_error(run):
    result = run()
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "1 failed, 1 passed" in out
    assert "error:one_hot/out_sharding/call: no error at baseline, TypeError now" in out


def test_recorded_on_that_release_the_error_is_its_behaviour_and_the_recording_writes(run, pytester):
    (pytester.path / "golden" / GOLDEN.name).unlink()  # that release's first recording, as on a new platform
    result = run("--harness-record-golden")
    assert result.ret == 0, result.stdout.str()
    values = json.loads((pytester.path / "golden" / GOLDEN.name).read_text())["values"]
    assert values["one_hot/out_sharding/call"] == {"error": "TypeError"}
    assert values["one_hot/default/call"] == {"error": None}
    assert run().ret == 0  # judged against its own recording: unchanged
