"""The harness the entries install: built into a wheel from the installed package (never from where it
was installed from), once per content, and `-e CHECKOUT` when the harness runs from a checkout.

The "installed copy" here is the checkout's own wheel unpacked into a site-packages-like directory
(a pure-Python wheel's files are what an installer puts there), with the PEP 610 record each kind of
install leaves.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from harness import env_vars
from harness.errors import HarnessError
from harness.stack import paths
from harness.stack.environments import harness_source, harness_wheel
from harness.stack.pins import locks
from harness.stack.workspace import Workspace

ORIGINS = {  # install kind -> what the installer recorded about where it came from (PEP 610)
    "path": {"url": "file:///gone/upgrade-harness", "dir_info": {}},
    "git": {"url": "https://example.invalid/upgrade-harness.git",
            "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"}},
    "index": None,
}


@pytest.fixture(scope="module")
def checkout_wheel(checkout_copy, uv_bin, tmp_path_factory) -> Path:
    """The wheel the checkout's pyproject.toml builds, built from the read-only copy."""
    out = tmp_path_factory.mktemp("checkout-wheel")
    subprocess.run([uv_bin, "build", "--wheel", "--quiet", "--out-dir", str(out), "--python", sys.executable,
                    str(checkout_copy.path)], check=True)
    return next(out.glob("*.whl"))


def _install_copy(wheel: Path, site: Path, origin: dict | None) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    if origin is not None:
        next(site.glob("*.dist-info")).joinpath("direct_url.json").write_text(json.dumps(origin))
    return site / "harness"


@pytest.fixture
def installed(checkout_wheel, tmp_path) -> Path:
    """The harness package as a non-editable install left it (installed from a path)."""
    return _install_copy(checkout_wheel, tmp_path / "site-packages", ORIGINS["path"])


def _contents(wheel: Path) -> tuple[dict[str, bytes], str, dict]:
    """The wheel's package files, its entry_points.txt and its METADATA's fields."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if ".dist-info/" in n)
        files = {n: archive.read(n) for n in names if not n.startswith(info)}
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        meta = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    fields = {key: meta[key] for key in ("Name", "Version", "Summary", "Requires-Python")}
    fields["Requires-Dist"] = sorted(str(Requirement(r)) for r in meta.get_all("Requires-Dist") or [])
    fields["Provides-Extra"] = sorted(meta.get_all("Provides-Extra") or [])
    return files, entry_points, fields


def test_building_the_checkout_writes_nothing_into_it_and_the_wheel_holds_the_package(checkout_copy,
                                                                                      checkout_wheel):
    checkout_copy.assert_unchanged()
    files, entry_points, fields = _contents(checkout_wheel)
    package = {p.relative_to(checkout_copy.path).as_posix() for p in (checkout_copy.path / "harness").rglob("*")
               if p.is_file()}
    # the built-in contracts' golden values travel with the tool (a team's project reads them from it), and
    # the baseline's checkpoints the checkpoints family restores (golden/checkpoints/<dtype>/)
    recorded = checkout_copy.path / "golden"
    golden = {f"harness/builtin/golden/{p.relative_to(recorded).as_posix()}" for p in recorded.rglob("*") if p.is_file()}
    assert {"harness/builtin/golden/checkpoints.json",
            "harness/builtin/golden/checkpoints/bfloat16/checkpoint/_CHECKPOINT_METADATA"} <= golden
    assert set(files) == package | golden  # harness/ and the golden values, nothing else
    assert {"harness/matrix.toml", "harness/model/report.schema.json", "harness/contract/pytest.ini",
            "harness/builtin/test_accumulation.py"} <= set(files)
    assert "upgrade-harness = harness.cli:main" in entry_points.split("[pytest11]")[0]
    assert "harness.contract.plugin = harness.contract.plugin" in entry_points.split("[pytest11]")[1]
    assert fields["Name"] == "upgrade-harness" and "contract" in fields["Provides-Extra"]


def test_the_wheel_of_an_installed_copy_is_the_checkout_wheel_with_a_build_label(installed, checkout_wheel,
                                                                                 uv_bin, tmp_path):
    built = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    files, entry_points, fields = _contents(built)
    want_files, want_entry_points, want_fields = _contents(checkout_wheel)
    assert files == want_files
    assert entry_points.split() == want_entry_points.split()
    version = fields.pop("Version")
    assert version.startswith(want_fields.pop("Version") + "+") and len(version.split("+")[1]) == 16
    assert fields == want_fields  # summary, requires-python, dependencies and extras carried over
    assert built.parent.parent == tmp_path / "cache" and built.parent.name == version.split("+")[1]


def test_an_unchanged_package_is_not_built_again(installed, uv_bin, tmp_path, monkeypatch):
    first = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    made = first.stat().st_mtime_ns

    def no_build(*args):
        raise AssertionError("built again")

    monkeypatch.setattr(harness_wheel, "_build", no_build)
    assert harness_wheel.wheel(installed, tmp_path / "cache", uv_bin) == first
    assert first.stat().st_mtime_ns == made
    (installed / "__pycache__").mkdir(exist_ok=True)
    (installed / "__pycache__" / "cli.cpython-312.pyc").write_bytes(b"bytecode")  # Python's, not the package's
    assert harness_wheel.wheel(installed, tmp_path / "cache", uv_bin) == first


def test_a_changed_file_gives_a_new_wheel_that_replaces_the_old_in_an_entry(installed, uv_bin, tmp_path):
    first = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    pins = installed / "matrix.toml"
    pins.write_text(pins.read_text() + "# changed\n")
    second = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    assert second != first and first.is_file()  # the older one stays for a run still installing it
    assert _contents(second)[0]["harness/matrix.toml"].endswith(b"# changed\n")
    assert _contents(second)[2]["Version"] != _contents(first)[2]["Version"]

    venv = tmp_path / "entry"  # an entry that had the first build installs the second
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    for wheel in (first, second):
        subprocess.run([uv_bin, "pip", "install", "--quiet", "--no-deps", "--python", str(venv / "bin" / "python"),
                        str(wheel)], check=True)
    installed_pins = next(venv.glob("lib/python*/site-packages/harness/matrix.toml"))
    assert installed_pins.read_text().endswith("# changed\n")


def test_a_changed_entry_point_gives_a_new_wheel(installed, uv_bin, tmp_path):
    first = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    points = next(installed.parent.glob("*.dist-info")) / "entry_points.txt"
    points.write_text(points.read_text().replace("harness.cli:main", "harness.cli:other"))
    second = harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)
    assert second != first and "harness.cli:other" in _contents(second)[1]


def test_only_the_newest_wheels_are_kept(installed, uv_bin, tmp_path):
    built = []
    for n in range(harness_wheel.KEEP + 1):
        (installed / "matrix.toml").write_text(f"# version {n}\n")
        built.append(harness_wheel.wheel(installed, tmp_path / "cache", uv_bin))
    assert not built[0].exists() and all(w.is_file() for w in built[1:])


def test_a_failed_build_says_what_failed_and_leaves_nothing(installed, tmp_path):
    failing = tmp_path / "uv"
    failing.write_text("#!/bin/sh\necho 'error: hatchling exploded' >&2\nexit 2\n")
    failing.chmod(0o755)
    with pytest.raises(HarnessError) as raised:
        harness_wheel.wheel(installed, tmp_path / "cache", str(failing))
    said = str(raised.value)
    assert said.startswith("building the harness wheel for the entries failed (`")
    assert "error: hatchling exploded" in said and "run once with network access" in said
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_cache_that_cannot_be_written_is_named(installed, uv_bin, tmp_path):
    blocked = tmp_path / "project" / ".nox"
    blocked.parent.mkdir()
    blocked.write_text("a file where the cache's directory should be")
    with pytest.raises(HarnessError, match=r"cannot keep the harness wheel for the entries in .*/project/\.nox/"):
        harness_wheel.wheel(installed, blocked / "harness-wheel", uv_bin)


def test_offline_without_hatchling_cached_is_a_clear_error(installed, uv_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "empty-uv-cache"))
    with pytest.raises(HarnessError, match=r"(?s)failed .*hatchling.* not found in the cache.*network access"):
        harness_wheel.wheel(installed, tmp_path / "cache", uv_bin)


def test_without_uv_or_metadata_the_error_says_what_is_missing(installed, tmp_path):
    with pytest.raises(HarnessError, match="uv is not installed"):
        harness_wheel.wheel(installed, tmp_path / "cache", None)
    for info in installed.parent.glob("*.dist-info"):
        for f in info.iterdir():
            f.unlink()
        info.rmdir()
    with pytest.raises(HarnessError, match=r"no upgrade-harness metadata \(\*\.dist-info\) beside"):
        harness_wheel.wheel(installed, tmp_path / "cache", None)


def test_an_installed_tool_reads_the_contract_extra_from_its_own_metadata(installed, checkout_copy, monkeypatch):
    monkeypatch.setattr(paths, "SOURCE", checkout_copy.path)  # the checkout: pyproject.toml
    from_checkout = locks.harness_requirements()
    monkeypatch.setattr(paths, "PACKAGE", installed)
    monkeypatch.setattr(paths, "SOURCE", installed.parent)  # installed: the METADATA hatchling wrote
    assert sorted(locks.harness_requirements()) == sorted(from_checkout)  # hatchling sorts Requires-Dist
    assert {"pytest", "hypothesis", "jsonschema"} <= set(from_checkout)


def test_any_other_install_gives_the_wheel_of_the_installed_package_wherever_it_came_from(checkout_wheel, uv_bin,
                                                                                         tmp_path, monkeypatch):
    ws = Workspace.of(tmp_path / "project")
    monkeypatch.setattr(harness_source, "uv", lambda: uv_bin)
    monkeypatch.delenv(env_vars.WHEEL, raising=False)
    given = {}
    for kind, origin in ORIGINS.items():
        package = _install_copy(checkout_wheel, tmp_path / kind / "site-packages", origin)
        monkeypatch.setattr(paths, "PACKAGE", package)
        monkeypatch.setattr(paths, "SOURCE", package.parent)
        given[kind] = harness_source.install_args(ws)
        assert harness_source.wheel_for_entries(ws) == Path(given[kind][0])
    wheel = given["path"][0]
    assert Path(wheel).parent.parent == tmp_path / "project" / ".nox" / "harness-wheel" and wheel.endswith(".whl")
    assert given == {kind: [wheel] for kind in ORIGINS}  # the same package: one wheel, never the origin


def test_a_child_session_installs_the_wheel_its_parent_built(installed, tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "PACKAGE", installed)
    monkeypatch.setattr(paths, "SOURCE", installed.parent)
    monkeypatch.setattr(harness_wheel, "wheel", lambda *a, **k: pytest.fail("built again in a child"))
    passed = tmp_path / "upgrade_harness-0.1.0+0123456789abcdef-py3-none-any.whl"
    passed.write_bytes(b"")
    monkeypatch.setenv(env_vars.WHEEL, str(passed))  # as the upgrade tells its child sessions
    assert harness_source.install_args(Workspace.from_environment()) == [str(passed)]


def test_the_parent_builds_its_own_wheel_whatever_its_environment_says(installed, uv_bin, tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "PACKAGE", installed)
    monkeypatch.setattr(paths, "SOURCE", installed.parent)
    ws = Workspace.of(tmp_path / "project")  # its wheel cache: the project's .nox/harness-wheel
    monkeypatch.setattr(harness_source, "uv", lambda: uv_bin)
    stale = tmp_path / "stale.whl"
    stale.write_bytes(b"")
    monkeypatch.setenv(env_vars.WHEEL, str(stale))
    told = harness_source.wheel_for_entries(ws.with_options(ws.options))
    assert Path(told).parent.parent == tmp_path / "project" / ".nox" / "harness-wheel"


def test_an_editable_install_of_the_checkout_writes_nothing_into_it(checkout_copy, uv_bin, tmp_path):
    venv = tmp_path / "dev"
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([uv_bin, "pip", "install", "--quiet", "--no-deps", "--python", str(venv / "bin" / "python"),
                    "-e", str(checkout_copy.path)], check=True)
    found = subprocess.run([str(venv / "bin" / "python"), "-B", "-c", "import harness, importlib.metadata as m; "
                            "print(harness.__file__); print(*[e.value for e in m.entry_points(group='pytest11')])"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split("\n")
    assert found[0] == str(checkout_copy.path / "harness" / "__init__.py")
    assert found[1] == "harness.contract.plugin"
    checkout_copy.assert_unchanged()


def test_the_teams_own_pyproject_around_the_cache_is_never_read(installed, uv_bin, tmp_path):
    """The cache lives in the team's .nox/; uv looks upwards from what it builds for a project to belong
    to, and a team's pyproject.toml it cannot read (a [project] table without a version) must not matter."""
    team = tmp_path / "team"
    team.mkdir()
    (team / "pyproject.toml").write_text('[project]\nname = "team"\n\n[tool.upgrade-harness]\nbuiltin = false\n')
    built = harness_wheel.wheel(installed, team / ".nox" / "harness-wheel", uv_bin)
    assert built.suffix == ".whl" and built.is_relative_to(team / ".nox" / "harness-wheel")
