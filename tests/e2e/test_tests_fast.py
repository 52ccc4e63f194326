"""`nox -s tests-fast` on a fresh clone: it refused ("build it once with `nox -s tests`", minutes of the whole
suite first). It builds the tests session's environment (.nox/tests) with that session's own install steps
(`nox -s tests --install-only`), then runs the unit layer; once built, it runs them and builds nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import checkout_files

pytestmark = pytest.mark.long_running(90)  # installs the baseline stack and the test tools into a fresh clone

ONE_TEST = ["tests/unit/model/test_model.py", "-k", "test_schema_version_is_the_models", "-p", "no:randomly"]


def _tests_fast(clone) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(clone / "noxfile.py"), "-s", "tests-fast", "--",
                           *ONE_TEST], cwd=clone, env=env, capture_output=True, text=True, timeout=900, check=False)


def test_tests_fast_builds_its_environment_on_a_fresh_clone_once(tmp_path):
    clone = checkout_files.copy_to(tmp_path / "clone")
    assert not (clone / ".nox").exists()
    first = _tests_fast(clone)
    said = first.stdout[-4000:] + first.stderr[-4000:]
    assert first.returncode == 0, said
    assert "--install-only" in said and "1 passed" in said
    assert (clone / ".nox" / "tests" / "bin" / "python").is_file() and not (clone / ".nox" / "tests-fast").exists()
    again = _tests_fast(clone)
    said = again.stdout[-4000:] + again.stderr[-4000:]
    assert again.returncode == 0 and "1 passed" in said, said
    assert "--install-only" not in said and "uv pip" not in said  # built once: the loop only runs the tests
