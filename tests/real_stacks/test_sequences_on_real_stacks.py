"""The sequences users run, on the real stacks (JAX, Optax and Flax from the package index): each answer a
reused report gives equals the answer of the same command with `--fresh`. Far too slow for `nox -s tests`
(about 15 minutes on 2 cores); the nightly runs it (`nox -s sequences`), and so can anyone.

Each test works in a fresh clone of this checkout, set up as README's first command does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def upgrade(clone: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(clone / ".venv/bin/nox"), "-s", "upgrade", "--", *args], cwd=clone, text=True,
                          capture_output=True)
    print(f"$ nox -s upgrade -- {' '.join(args)}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done


def answers(clone: Path) -> dict[str, tuple[str, str, str | None, str]]:
    """Per changed check: the first and last release it may have changed in, the jax it was judged at, and
    the answer's words."""
    found = json.loads((clone / "reports" / "bisect.json").read_text())
    return {c["check_id"]: (c["first"], c["last"], (c.get("bridge") or {}).get("jax"), c["text"])
            for c in found["checks"]}


def test_bisecting_after_looking_at_a_release_that_cannot_import_gives_the_fresh_answer(clone):
    """`--candidate optax==0.2.7` (imports with neither side's jax), then `--bisect`: the bisection must
    bridge to an older jax exactly as `--bisect --fresh` does, never name 0.2.7 for every check from the
    first command's import failure."""
    assert upgrade(clone, "--candidate", "optax==0.2.7").returncode == 1  # CHANGED: optax 0.2.7 cannot import
    assert upgrade(clone, "--bisect").returncode == 1
    after_reuse = answers(clone)
    assert upgrade(clone, "--bisect", "--fresh").returncode == 1
    fresh = answers(clone)
    assert after_reuse == fresh
    assert {first for first, last, _, _ in fresh.values() if first == last} == {"0.2.7", "0.2.8"}
    assert all(jax is not None for first, _, jax, _ in fresh.values() if first == "0.2.7")  # at an older jax


def test_a_mistyped_candidate_leaves_the_last_verdict_where_it_is(clone):
    """A pin that does not resolve stops the run before any entry starts and publishes nothing."""
    reports = clone / "reports"
    if not (reports / "upgrade-summary.json").exists():
        assert upgrade(clone).returncode in (0, 1)
    before = {p.name: p.read_bytes() for p in reports.glob("upgrade-summary.*")}
    previous = sorted(p.name for p in (reports / "previous").glob("*")) if (reports / "previous").is_dir() else []
    assert upgrade(clone, "--candidate", "optax==0.2.88").returncode == 2
    assert {p.name: p.read_bytes() for p in reports.glob("upgrade-summary.*")} == before
    assert (sorted(p.name for p in (reports / "previous").glob("*")) if (reports / "previous").is_dir() else []) == previous


def test_accepting_the_default_candidate_makes_the_next_upgrade_ok(own_clone):
    """upgrade, accept, upgrade on the default matrix: accept records what the candidate breaks of the built-in
    statements as departures (each one listed) and exits 0; the next upgrade, on the accepted baseline, is OK
    and lists the same departures as notes."""
    assert upgrade(own_clone).returncode in (0, 1)
    done = subprocess.run([str(own_clone / ".venv/bin/nox"), "-s", "accept", "--", "--reason", "the nightly's accept"],
                          cwd=own_clone, text=True, capture_output=True)
    print(f"$ nox -s accept: exit {done.returncode}\n{done.stdout[-5000:]}{done.stderr[-3000:]}")
    assert done.returncode == 0
    listed = [line.split("`")[1] for line in done.stdout.splitlines() if line.startswith("  `")]
    after = upgrade(own_clone)
    assert after.returncode == 0 and "VERDICT  OK" in after.stdout
    summary = (own_clone / "reports" / "upgrade-summary.md").read_text()
    assert all(f"`{check}`" in summary for check in listed), listed
    assert all(f"`{check}`" in (own_clone / "golden" / "CHANGELOG.md").read_text() for check in listed)
