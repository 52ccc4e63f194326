"""The changelogs as a ledger (harness.coverage.changelog): every release in range listed, every entry's
callables in scope and its contracts real, each entry seen or saying why not."""

import pytest

from harness.coverage import changelog, contracts, ledger
from harness.errors import HarnessError

OPTAX_RANGE = [f"0.2.{n}" for n in range(9)]  # the range: every Optax release 0.2.0-0.2.8


@pytest.mark.parametrize("package", ["optax", "flax", "jax"])
def test_each_ledger_accounts_for_its_entries(package):
    log = changelog.read(package)
    assert log.entries, f"{package}: no entries read"
    assert changelog.findings(log, ledger.read(ledger.LEDGER).in_scope, contracts.ids()) == []


def test_every_optax_release_of_the_range_is_listed_in_order():
    releases = changelog.read("optax").releases
    assert [r.version for r in releases] == OPTAX_RANGE
    assert all(r.previous for r in releases)


def test_the_held_out_focal_loss_regression_is_an_entry_seen_by_the_edges_family():
    """optax#1267: sigmoid_focal_loss's gradient NaN at saturating logits, fixed in 0.2.6 (a real-pair test:
    tests/real_stacks/test_real_pairs.py)."""
    entries = [e for e in changelog.read("optax").entries
               if "optax.sigmoid_focal_loss" in e.callables and e.kind == changelog.ChangeKind.GRADIENT]
    assert any("edges/test_loss_gradient_at_edges" in e.seen_by for e in entries), entries


def _write(tmp_path, text):
    (tmp_path / "optax.toml").write_text(text)
    return tmp_path


RELEASE = '[[release]]\nversion = "0.2.5"\nprevious = "0.2.4"\nsource = "s"\nin_scope_entries = 1\n'


def test_an_unknown_kind_is_named_with_the_kinds_there_are(tmp_path):
    folder = _write(tmp_path, RELEASE + '[[entry]]\nrelease = "0.2.5"\nsource = "s"\ntext = "t"\n'
                              'callables = ["optax.adam"]\nkind = "vibes"\nnot_seen = "x"\n')
    with pytest.raises(HarnessError, match=r"entry 1 \('t'\).*a kind among value, gradient"):
        changelog.read("optax", folder)


def test_a_count_that_does_not_match_is_refused(tmp_path):
    with pytest.raises(HarnessError, match="0.2.5 says 1, lists 0"):
        changelog.read("optax", _write(tmp_path, RELEASE))


def test_a_contract_that_does_not_exist_and_a_callable_out_of_scope_are_findings(tmp_path):
    folder = _write(tmp_path, RELEASE + '[[entry]]\nrelease = "0.2.5"\nsource = "s"\ntext = "t"\n'
                              'callables = ["optax.nothing"]\nkind = "value"\nseen_by = ["masks/test_nothing"]\n')
    found = changelog.findings(changelog.read("optax", folder), {"optax.adam"}, {"masks/test_freeze"})
    assert any("optax.nothing is not an in-scope callable" in f for f in found)
    assert any("seen_by masks/test_nothing: no such built-in contract" in f for f in found)
