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


@pytest.mark.parametrize("text, says", [
    ('[in_scope."optax.clip"]\narea = "clipping"\n', "area must be one of"),
    ('[in_scope."optax.clip"]\narea = "clip"\n[in_scope."optax.clip".params]\nmax_delta = "guide"\n',
     'name a contract as "family/test_name"'),
    ('[out_of_scope]\n"optax.adam" = ""\n', "one-line text"),
    ('[in_scope."optax.adam"]\narea = "clip"\ncontracts = ["clipping/test_guide_case"]\n[out_of_scope]\n"optax.adam" = "an optimizer"\n', "is in both"),
    ("[in_scope\n", "cannot read the ledger"),
    ('[in_scope."optax.zero_nans"]\narea = "mask"\n', "name the contracts that call it"),
    ('[in_scope."optax.zero_nans"]\narea = "mask"\ncontracts = ["zero_nans"]\n', 'name a contract as "family/test_name"'),
])
def test_malformed_ledger_is_refused(tmp_path, text, says):
    (tmp_path / "ledger.toml").write_text(text)
    with pytest.raises(HarnessError, match=says.replace("(", r"\(")):
        ledger.read(tmp_path / "ledger.toml")
