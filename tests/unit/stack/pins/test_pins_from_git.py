"""A bump judged from its diff: `--baseline-from` and `--candidate-from` read a pins file from the working
tree or from a git revision (`REV:PATH`), so a branch's bump of the team's pins is judged against the
default branch's. uv is replaced by test_resolve's table of releases; no stack is installed.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_pins_from_git.py."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.stack import pins_source


PINS = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}


REQUIREMENTS = "".join(f"{name}=={version}\n" for name, version in PINS.items())


def test_rev_path_is_a_revision_and_a_path(tmp_path):
    assert pins_source.parse("origin/main:requirements.txt", tmp_path) == pins_source.PinsSource(
        tmp_path / "requirements.txt", "origin/main")
    assert pins_source.parse("HEAD~1:sub/uv.lock", tmp_path) == pins_source.PinsSource(tmp_path / "sub" / "uv.lock",
                                                                                        "HEAD~1")
    assert pins_source.parse("requirements.txt", tmp_path) == pins_source.PinsSource(tmp_path / "requirements.txt")
    (tmp_path / "odd:name.txt").write_text(REQUIREMENTS)  # a file that exists as typed is that file
    assert pins_source.parse("odd:name.txt", tmp_path) == pins_source.PinsSource(tmp_path / "odd:name.txt")
    assert str(pins_source.parse("origin/main:requirements.txt", tmp_path).shown(tmp_path)) == \
        "origin/main:requirements.txt"


@pytest.mark.parametrize("text, words", [
    ("main:", "names no file after the colon"),
    (":requirements.txt", "names no revision before the colon"),
])
def test_a_rev_path_missing_a_half_is_refused(tmp_path, text, words):
    with pytest.raises(HarnessError, match=words) as raised:
        pins_source.parse(text, tmp_path)
    assert "e.g. origin/main:requirements.txt" in str(raised.value)
