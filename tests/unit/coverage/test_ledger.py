"""The coverage ledger accounts for every public callable of the baseline's Optax, each in-scope
parameter names contracts that exist, and the audit fails on what it does not account for.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_ledger.py."""

import pytest

from harness.coverage import contracts, ledger
from harness.errors import HarnessError


def test_contract_ids_are_read_from_the_modules():
    """Families from pytestmark (alone or in a list), test functions at module level only."""
    ids = contracts.ids()
    assert {"schedules/test_fixed_case", "schedules/test_schedule_transitions",
            "accumulation/test_nonfinite_ministep_skipped", "performance/test_multisteps_update"} <= ids
    assert not any(i.startswith(("test_", "schedules_surface/")) for i in ids)
    # bound by a factory, alone or as a tuple (harness.builtin.nonfinite.tests makes two)
    assert {"masks/test_parameter_defaults", "masks/test_nonfinite_through_the_update",
            "masks/test_every_transform_is_run_or_set_aside"} <= ids


@pytest.mark.parametrize("text, says", [
    ('[in_scope."optax.clip"]\narea = "clipping"\n', "area must be one of"),
    ('[in_scope."optax.clip"]\narea = "clip"\n[in_scope."optax.clip".params]\nmax_delta = "guide"\n',
     'name a contract as "family/test_name"'),
    ('[out_of_scope]\n"optax.adam" = ""\n', "one-line text"),
    ('[in_scope."optax.adam"]\narea = "clip"\ncontracts = ["clipping/test_guide_case"]\n[out_of_scope]\n"optax.adam" = "an optimizer"\n', "is in both"),
    ("[in_scope\n", "cannot read the ledger"),
    ('[in_scope."optax.zero_nans"]\narea = "mask"\n', "name the contracts that call it"),
    ('[in_scope."optax.zero_nans"]\narea = "mask"\ncontracts = ["zero_nans"]\n', 'name a contract as "family/test_name"'),
    ('[in_scope."optax.l2_loss"]\narea = "loss"\ncontracts = ["losses/test_squared_losses"]\ngradient = "l2"\n',
     'name a contract as "family/test_name"'),
    ('[in_scope."optax.l2_loss"]\narea = "loss"\ncontracts = ["losses/test_squared_losses"]\nno_gradient = ""\n',
     "say in one line why it has no gradient"),
    ('[in_scope."optax.l2_loss"]\narea = "loss"\ncontracts = ["losses/test_squared_losses"]\n'
     'gradient = "losses/test_squared_losses"\nno_gradient = "none"\n', "not both"),
])
def test_malformed_ledger_is_refused(tmp_path, text, says):
    (tmp_path / "ledger.toml").write_text(text)
    with pytest.raises(HarnessError, match=says.replace("(", r"\(")):
        ledger.read(tmp_path / "ledger.toml")



def _entry(area, **lines) -> ledger.InScope:
    return ledger.InScope("optax.l2_loss", ledger.Area(area), {}, {}, None, ("losses/test_squared_losses",), **lines)


@pytest.mark.parametrize("entry, finds", [
    (_entry("loss"), ["NO_GRADIENT_LINE"]),
    (_entry("loss", gradient=("edges/test_loss_gradient_at_edges",)), []),
    (_entry("loss", gradient=("losses/test_nowhere",)), ["NO_SUCH_CONTRACT"]),
    (_entry("activation", no_gradient="integer indices"), []),
    (_entry("clip"), []),  # not a function a step differentiates through
])
def test_a_loss_or_activation_says_which_contracts_take_its_gradient_or_why_none(entry, finds):
    from harness.coverage import audit
    from harness.coverage.surface import PublicCallable

    found = PublicCallable("optax.l2_loss", "function", "optax._src.loss.l2_loss", (), ())
    problems = audit._params(entry, found, {"losses/test_squared_losses", "edges/test_loss_gradient_at_edges"})
    assert [p.problem.name for p in problems] == finds, problems
