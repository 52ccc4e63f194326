"""Resolving before running: unnamed packages follow only when they must, `latest`, failures in
seconds with the resolver's reason, one upgrade per reports directory, attribution never blocks judging.
uv is replaced by a small table of which versions fit together (no network)."""

import itertools
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.stack.pins import current, locks, matrix, plan, resolve
from harness.stack import paths
from harness.stack.run import run_directory
from harness.stack.workspace import Workspace

CHECKOUT = Workspace.of(paths.SOURCE)
BASE = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}
RELEASES = {"jax": ["0.9.2", "0.11.2", "0.12.0.1"], "jaxlib": ["0.9.2", "0.11.2", "0.12.0.1"],
            "optax": ["0.2.6", "0.2.8"], "flax": ["0.12.6", "0.12.12"], "numpy": ["2.5.5"],
            # a team's other packages (tests/unit/stack/pins/test_team_set.py)
            "chex": ["0.1.92", "0.1.93"], "scipy": ["1.14.1", "1.15.0"], "ml-dtypes": ["0.5.1"],
            "colorama": ["0.4.6"], "pytest": ["8.3.3", "9.0.0"], "ruff": ["0.6.0"]}
# What each release needs: flax 0.12.12 needs jax >= 0.11.1, chex 0.1.92 jax < 0.12; jaxlib must equal jax.
FLAX_NEEDS = {"0.12.12": "0.11.1", "0.12.6": "0.9.0"}
NEEDS = [("flax", v, "jax", f">={jax}") for v, jax in FLAX_NEEDS.items()] + [("chex", "0.1.92", "jax", "<0.12")]


def _key(v):
    return tuple(int(x) for x in v.split("."))


def fake_compile(requirements, python, output=None, header_command=None, prerelease=False, universal=True, offline=False):
    done = _fake_resolution(requirements, universal)
    if output is not None and done.returncode == 0:
        Path(output).parent.mkdir(parents=True, exist_ok=True)  # as uv_compile makes it
        Path(output).write_text(done.stdout)
    return done


def _broken(chosen: dict[str, str]) -> list[str]:
    """uv's words for each need `chosen` does not meet."""
    broken = [f"Because {pkg}=={version} depends on {dep}{spec} and you require {dep}=={chosen[dep]}"
              for pkg, version, dep, spec in NEEDS
              if chosen.get(pkg) == version and dep in chosen and not SpecifierSet(spec).contains(chosen[dep])]
    if "jax" in chosen and chosen.get("jaxlib", chosen["jax"]) != chosen["jax"]:
        broken.append(f"Because jax=={chosen['jax']} depends on jaxlib=={chosen['jax']} and you require "
                      f"jaxlib=={chosen['jaxlib']}")
    return broken


def _fake_resolution(requirements, universal=True):
    """uv pip compile over RELEASES: each name at the newest release its requirement allows that meets NEEDS; a
    requirement whose marker does not hold here is left out (kept with its marker in a universal lock)."""
    asked: dict[str, list[str]] = {}
    markers: dict[str, str] = {}
    for line in requirements.splitlines():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue  # an option line
        name = canonicalize_name(req.name)
        if req.marker is not None and not universal and not req.marker.evaluate():
            continue
        if req.marker is not None:
            markers[name] = str(req.marker)
        allowed = [v for v in sorted(RELEASES.get(name, []), key=_key, reverse=True) if req.specifier.contains(v)]
        asked[name] = [v for v in asked.get(name, allowed) if v in allowed]
        if not asked[name]:
            return subprocess.CompletedProcess([], 1, "", f"error: No solution\n  cause: there is no version of {line}")
    names = list(asked)
    first = None
    for versions in itertools.product(*(asked[n] for n in names)):
        chosen = dict(zip(names, versions))
        first = first or chosen
        if not _broken(chosen):
            lock = "".join(f"{n}=={v}" + (f" ; {markers[n]}" if n in markers else "") + "\n" for n, v in chosen.items())
            return subprocess.CompletedProcess([], 0, lock, "")
    return subprocess.CompletedProcess([], 1, "", "error: No solution\n  cause: " + "; ".join(_broken(first)) + ", ...")


@pytest.fixture(autouse=True)
def offline_uv(monkeypatch):
    monkeypatch.setattr(locks, "uv_compile", fake_compile)
    monkeypatch.setattr(locks, "harness_requirements", lambda: ["pytest"])


def test_unnamed_packages_stay_at_the_baseline_when_that_resolves():
    found = resolve.resolve(CHECKOUT, {"optax": "0.2.8"}, BASE, "3.12")
    assert found.pins == dict(BASE, optax="0.2.8") and found.notes == []


def test_an_unnamed_package_that_does_not_fit_moves_to_the_newest_that_does_and_says_why():
    found = resolve.resolve(CHECKOUT, {"jax": "0.9.2", "jaxlib": "0.9.2"}, BASE, "3.12")
    assert found.pins == {"jax": "0.9.2", "jaxlib": "0.9.2", "optax": "0.2.6", "flax": "0.12.6", "numpy": "2.5.5"}
    assert found.notes == ["flax 0.12.12 → 0.12.6: 0.12.12 does not resolve with jax==0.9.2 jaxlib==0.9.2 "
                           "(it needs jax>=0.11.1)"]  # optax could stay: it did not move


def test_latest_takes_the_newest_that_resolve_and_says_which():
    found = resolve.resolve(CHECKOUT, matrix.parse_candidate("latest"), BASE, "3.12")
    assert found.pins == {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "optax": "0.2.8", "flax": "0.12.12",
                          "numpy": "2.5.5"}
    assert "optax latest = 0.2.8" in found.notes


def test_one_package_at_latest_keeps_the_others_at_the_baseline():
    assert matrix.parse_candidate("optax==latest") == {"optax": matrix.LATEST}
    assert resolve.resolve(CHECKOUT, {"optax": matrix.LATEST}, BASE, "3.12").pins == dict(BASE, optax="0.2.8")


def test_a_version_that_does_not_exist_fails_with_the_resolvers_reason():
    with pytest.raises(HarnessError, match="there is no version of jax==9.9.9"):
        resolve.resolve(CHECKOUT, {"jax": "9.9.9", "jaxlib": "9.9.9"}, BASE, "3.12")


def test_plan_keeps_an_unbuildable_attribution_entry_with_its_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(current, "pins", lambda ws: matrix.Pins("3.12", dict(BASE), dict(BASE)))
    real = resolve.resolve

    def refuse_optax_only(ws, named, defaults, python, prerelease=False, held=()):
        if set(named) == {"optax"}:
            raise HarnessError("cannot resolve optax==0.2.8 for Python 3.12: (made up)")
        return real(ws, named, defaults, python, prerelease, held)

    monkeypatch.setattr(resolve, "resolve", refuse_optax_only)
    entries = plan.build(CHECKOUT, matrix.CandidateRequest.parse("jax==0.12.0.1 jaxlib==0.12.0.1 optax==0.2.8"), tmp_path)
    names = {e.name: e for e in entries}
    assert names["candidate"].pins["optax"] == "0.2.8" and (tmp_path / "candidate.txt").exists()
    assert names["optax-only"].problem.startswith("cannot resolve optax==0.2.8")
    assert names["jax-only"].problem is None and names["jax-only"].pins["optax"] == "0.2.6"
    plan.write(entries, tmp_path / "plan.json")
    assert plan.read(tmp_path / "plan.json") == names  # what the child sessions see


def test_a_second_upgrade_on_the_same_reports_refuses_naming_the_first(tmp_path):
    with run_directory.hold(tmp_path, ["nox", "-s", "upgrade"]):
        with pytest.raises(HarnessError, match=r"another upgrade is writing to .* \(pid \d+, started .*nox -s upgrade"):
            with run_directory.hold(tmp_path, ["nox", "-s", "upgrade", "--", "--candidate", "latest"]):
                pass
    with run_directory.hold(tmp_path, ["nox"]):  # released when the first run ends
        pass


def test_jax_at_latest_takes_jaxlib_along():
    assert matrix.parse_candidate("jax==latest") == {"jax": matrix.LATEST, "jaxlib": matrix.LATEST}
    assert resolve.resolve(CHECKOUT, matrix.parse_candidate("jax==latest"), BASE, "3.12").pins["jaxlib"] == "0.12.0.1"


def test_an_empty_candidate_is_refused_not_ignored(tmp_path):
    from harness.stack import paths
    from harness.stack.commands import upgrade
    from harness.stack.workspace import Workspace

    assert upgrade.upgrade(Workspace.of(paths.SOURCE, tmp_path), ["--candidate", ""]) == 2
