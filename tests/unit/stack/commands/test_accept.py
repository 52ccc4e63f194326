"""`nox -s accept`: its refusals, matrix.toml's rewrite, and golden/CHANGELOG.md, in a temporary git
checkout with small reports from the synthetic suite. Locking and golden recording are fakes here
(the end-to-end run on a scratch clone exercises the real ones). Accept killed at any step leaves the
checkout as before or (once the next start finished its commit) as after, never between.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_accept.py."""

import pytest

from harness.errors import HarnessError
from harness.stack.pins import matrix


BASE = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}


CAND = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "optax": "0.2.8", "flax": "0.12.12", "numpy": "2.5.5"}


HEADER = "# The matrix of a test checkout.\n#\n# A second header paragraph, kept too."


MATRIX = HEADER + """

python = "3.12"

[baseline]
jax = "0.11.2"
jaxlib = "0.11.2"
optax = "0.2.6"
flax = "0.12.12"
numpy = "2.5.5"

[candidate]
jax = "0.12.0.1"
jaxlib = "0.12.0.1"
optax = "0.2.8"
flax = "0.12.12"
numpy = "2.5.5"
"""


def test_pins_round_trip_keeps_the_header_and_the_candidate(tmp_path):
    path = tmp_path / "matrix.toml"
    path.write_text(MATRIX)
    before = matrix.load_pins(path)
    assert before == matrix.Pins("3.12", BASE, CAND)
    matrix.write_pins(matrix.Pins("3.13", CAND, CAND), path)
    assert matrix.load_pins(path) == matrix.Pins("3.13", CAND, CAND)
    text = path.read_text()
    assert text.startswith(HEADER + "\n\npython = \"3.13\"\n") and text.count("[candidate]") == 1
    matrix.write_pins(before, path)
    assert path.read_text() == MATRIX  # the fixed format is the hand-written one: nothing else moves


@pytest.mark.parametrize("bad", ['0.12"\nx = "1', "", "0.12 1"])
def test_pins_that_would_not_read_back_are_refused(tmp_path, bad):
    path = tmp_path / "matrix.toml"
    path.write_text(MATRIX)
    with pytest.raises(HarnessError):
        matrix.write_pins(matrix.Pins("3.12", dict(CAND, optax=bad), CAND), path)
    assert path.read_text() == MATRIX
