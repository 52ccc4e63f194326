"""The matrix: one source of entries, ad-hoc candidates, and single-package attribution entries."""

import pytest

from harness.stack.pins import current, matrix
from harness.errors import HarnessError
from harness.stack.workspace import Workspace


def test_static_matrix_has_the_named_entries_and_full_pins():
    entries = current.entries(Workspace.from_environment())
    assert list(entries) == ["baseline", "candidate", "jax-only", "optax-only", "jaxlib-skew"]
    for entry in entries.values():
        assert set(entry.pins) == set(matrix.PACKAGES) and entry.python == "3.12"
    assert entries["baseline"].pins["optax"] == "0.2.6" and entries["baseline"].pins["jax"] == "0.11.2"
    skew = entries["jaxlib-skew"].pins
    assert skew["jax"] == entries["candidate"].pins["jax"] and skew["jaxlib"] == entries["baseline"].pins["jaxlib"]


def test_single_package_entries_bump_one_group_each():
    entries = current.entries(Workspace.from_environment())
    base, cand = entries["baseline"], entries["candidate"]
    for single in matrix.single_package_entries(base, cand):
        assert matrix.bumped_groups(base.pins, single.pins) == [single.name.removesuffix("-only")]
    assert [e.name for e in matrix.upgrade_plan(entries)] == ["baseline", "candidate", "jax-only", "optax-only"]


def test_adhoc_candidate_replaces_the_candidate_and_is_unlocked():
    entries = current.entries(Workspace.from_environment(), matrix.CandidateRequest.parse("jax==0.12.0.1 jaxlib==0.12.0.1"))
    cand = entries["candidate"]
    assert not cand.locked and cand.pins["jax"] == "0.12.0.1" and cand.pins["optax"] == "0.2.6"
    assert [e.name for e in matrix.upgrade_plan(entries)] == ["baseline", "candidate"]  # one group: no attribution


@pytest.mark.parametrize("text, words", [
    ("jax>=0.12", "cannot read 'jax>=0.12'"),
    ("torch==2.0", "'torch' is not a package the matrix pins"),
    ("   ", "--candidate is empty"),
])
def test_bad_candidate_text_is_explained(text, words):
    with pytest.raises(HarnessError, match=words.replace("(", r"\(").replace(")", r"\)")) as info:
        matrix.parse_candidate(text)
    assert info.value.exit_status == 2


def test_candidate_accepts_commas_and_underscores():
    assert matrix.parse_candidate("jax==0.12.0.1, Optax==0.2.8") == {"jax": "0.12.0.1", "optax": "0.2.8"}
