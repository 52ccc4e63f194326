"""upgrade-harness: does bumping JAX / jaxlib / Optax / Flax change the optimizer behaviour you rely on?

PYTEST_DONT_REWRITE (this file only): the contract suite's process (harness.contract.suite_main) imports
this package before pytest starts, so pytest could not rewrite its asserts (it has none) and would warn."""

__version__ = "0.1.0"
