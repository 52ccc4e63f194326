"""The documentation stays navigable: the site builds with --strict (a link to a page or an anchor that
does not exist fails it), README's relative links reach files and headings that exist, the layers picture
names every layer pyproject.toml declares, and the contributor guide names every package of harness/.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/test_docs.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from unit.test_docs import DOCS, ROOT  # noqa: F401 (fixtures and helpers shared with it)


def test_the_site_builds_with_strict_links(tmp_path):
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed here: `nox -s tests` installs it from locks/docs.txt "
                        "(or run `nox -s docs`)")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                            str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                           capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr + built.stdout
    pages = sorted(p.stem for p in DOCS.glob("*.md"))
    assert [p for p in pages if not (tmp_path / "site" / ("" if p == "index" else p) / "index.html").is_file()] == []
