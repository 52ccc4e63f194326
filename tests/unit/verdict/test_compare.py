"""The comparison: each kind of change gets its mark, and the exit status follows the candidate.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_compare.py."""


def test_under_a_projects_own_contracts_the_baselines_failures_are_named_as_the_built_in_ones():
    """Ten built-in baseline failures read as if they were the team's, listed right under its section."""
    from types import SimpleNamespace

    from harness.verdict import views

    assert views.baseline_failures_title(SimpleNamespace(own_families=["losses"])) == \
        "Built-in contracts failing on the baseline itself"
    assert views.baseline_failures_title(SimpleNamespace(own_families=[])) == "Baseline fails its own checks"


def test_a_package_not_installed_is_left_out_of_an_entrys_versions():
    from harness.verdict import views

    assert views.versions_text({"python": "3.12.1", "jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6",
                                "flax": None, "numpy": "2.5.5"}) == \
        "python 3.12.1 jax 0.11.2 jaxlib 0.11.2 optax 0.2.6 numpy 2.5.5"
