"""The comparison: each kind of change gets its mark, and the exit status follows the candidate.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_compare.py."""


def test_under_a_projects_own_contracts_the_baselines_failures_are_named_as_the_built_in_ones():
    """Ten built-in baseline failures read as if they were the team's, listed right under its section."""
    from types import SimpleNamespace

    from harness.verdict import views

    failures = [SimpleNamespace(family="masks", own=None)]
    assert views.baseline_failures_title(SimpleNamespace(own_families=[SimpleNamespace(name="losses")],
                                                         baseline_failures=failures)) == \
        "Built-in contracts failing on the baseline itself"
    assert views.baseline_failures_title(SimpleNamespace(own_families=[], baseline_failures=failures)) == \
        "Baseline fails its own checks"


def test_the_baseline_failures_heading_says_whose_checks_they_are():
    """A team's own check failing on the baseline is listed there too (its whole message): not under a
    built-in heading (found: a --no-builtin run headed the team's one failure "Built-in contracts ...")."""
    from types import SimpleNamespace

    from harness.verdict import views

    mine, theirs = SimpleNamespace(family="losses", own=True), SimpleNamespace(family="masks", own=None)
    own = [SimpleNamespace(name="losses")]

    def title(*failures):
        return views.baseline_failures_title(SimpleNamespace(own_families=own, baseline_failures=list(failures)))

    assert title(theirs) == "Built-in contracts failing on the baseline itself"
    assert title(mine) == "Your contracts failing on the baseline itself"
    assert title(mine, theirs) == "Your contracts and built-in ones failing on the baseline itself"


def test_a_package_not_installed_is_left_out_of_an_entrys_versions():
    from harness.verdict import views

    assert views.versions_text({"python": "3.12.1", "jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6",
                                "flax": None, "numpy": "2.5.5"}) == \
        "python 3.12.1 jax 0.11.2 jaxlib 0.11.2 optax 0.2.6 numpy 2.5.5"
