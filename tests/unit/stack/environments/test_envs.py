"""Entry environments no current plan uses are pruned, least recently used first, beyond a size limit;
never one the plan uses, never `tests`, never anything but an environment directly in the envdir."""

import math
import os

import pytest

from harness.errors import HarnessError
from harness.stack import paths, project
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.environments import envs

KIB = 1024
DAY = 86400
T0 = 1_700_000_000  # an old enough time for every fake last use


def _env(envdir, name, kib=256, used_days=None, session=None, created_days=0):
    """A fake environment: a pyvenv.cfg, `kib` KiB of real data, and a stamp when it has a last use."""
    path = envdir / name
    (path / "lib").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.utime(path / "pyvenv.cfg", (T0 + created_days * DAY,) * 2)
    (path / "lib" / "data.bin").write_bytes(os.urandom(kib * KIB))
    if used_days is not None:
        envs.mark_used(path, session or name)
        os.utime(path / envs.STAMP, (T0 + used_days * DAY,) * 2)
    return path


def _names(envdir):
    """The environments left (the prune's own record of what it measured aside)."""
    return sorted(p.name for p in envdir.iterdir() if p.name != envs.MEASURED)


@pytest.mark.parametrize("text, size", [
    ("10GiB", 10_737_418_240), ("10G", 10_737_418_240), ("500MB", 500_000_000), ("1.5KiB", 1536),
    ("0", 0), ("4096", 4096), ("OFF", math.inf), (" 2 mib ", 2_097_152),
])
def test_a_size_is_read_in_the_units_people_write(text, size):
    assert envs.parse_size(text) == size


@pytest.mark.parametrize("text", ["10 gigs", "-1GiB", "GiB", "", "ten"])
def test_an_unreadable_size_names_the_forms_it_takes(text):
    with pytest.raises(ValueError) as raised:
        envs.parse_size(text)
    assert "10GiB" in str(raised.value) and "off" in str(raised.value)


def test_the_least_recently_used_unused_environments_go_first_until_the_rest_fits(tmp_path):
    envdir = tmp_path / ".nox"
    _env(envdir, "baseline", used_days=1)  # the oldest of all, but the plan's
    _env(envdir, "bisect-jax-0-11-3", used_days=2)
    _env(envdir, "optax-only", used_days=3)
    _env(envdir, "flax-only", used_days=4)
    # Four environments of 256 KiB and a little: removing the least recently used unused one makes them fit.
    pruned = envs.prune(envdir, {"baseline"}, limit=900 * KIB)
    assert _names(envdir) == ["baseline", "flax-only", "optax-only"]
    assert [e.path.name for e in pruned.removed] == ["bisect-jax-0-11-3"]
    assert 4 * 256 * KIB <= pruned.before and 3 * 256 * KIB <= pruned.after <= 900 * KIB
    assert pruned.before - pruned.after >= 256 * KIB and pruned.freed >= 256 * KIB


def test_a_limit_of_zero_keeps_only_what_is_in_use_and_never_touches_anything_else(tmp_path):
    envdir = tmp_path / ".nox"
    _env(envdir, "tests", used_days=1)
    _env(envdir, "candidate", used_days=1)
    _env(envdir, "bisect-jax-0-12-0")  # never stamped: a probe of this run, by nox's directory name
    _env(envdir, "old-probe", used_days=0)  # a harness session's, not in use
    _env(envdir, "lint")  # never stamped: a team's own nox session, not the harness's
    _env(envdir, "renamed", used_days=1, session="jax-only")  # its stamp names a session in use
    (envdir / "harness-wheel" / "abc").mkdir(parents=True)  # not an environment: no pyvenv.cfg
    (envdir / "harness-wheel" / "abc" / "harness.whl").write_bytes(b"w" * KIB)
    outside = _env(tmp_path / "elsewhere", "linked", used_days=0)
    (envdir / "linked").symlink_to(outside)  # a link to an environment outside the envdir
    pruned = envs.prune(envdir, {"tests", "candidate", "bisect-jax-0.12.0", "jax-only"}, limit=0)
    assert [e.path.name for e in pruned.removed] == ["old-probe"]
    assert _names(envdir) == ["bisect-jax-0-12-0", "candidate", "harness-wheel", "linked", "lint", "renamed",
                              "tests"]
    assert (outside / "lib" / "data.bin").exists() and (envdir / "harness-wheel" / "abc" / "harness.whl").exists()
    assert any("used by the current plan" in line for line in envs.describe(pruned))


def test_last_use_is_the_stamp_not_when_the_environment_was_made_or_installed_into(tmp_path):
    envdir = tmp_path / ".nox"
    _env(envdir, "made-first-used-last", created_days=0, used_days=9)
    _env(envdir, "made-last-used-first", created_days=8, used_days=2)
    _env(envdir, "never-stamped", created_days=5)  # no harness session used it: never removed
    os.utime(envdir / "made-last-used-first" / "lib" / "data.bin")  # an install touches files: not a use
    pruned = envs.prune(envdir, set(), limit=300 * KIB)
    assert [e.path.name for e in pruned.removed] == ["made-last-used-first", "made-first-used-last"]
    assert _names(envdir) == ["never-stamped"]


def test_a_use_is_recorded_when_a_session_runs_in_the_environment(tmp_path):
    env = _env(tmp_path, "jax-only", used_days=0)
    envs.mark_used(env, "jax-only")
    (found,) = envs.scan(tmp_path)
    assert found.session == "jax-only" and found.last_used > T0 + DAY
    envs.mark_used(tmp_path / "missing", "x")  # a session without an environment: nothing to record
    assert not (tmp_path / "missing").exists()


def test_files_shared_with_uv_s_cache_are_not_counted_as_freed(tmp_path):
    envdir = tmp_path / ".nox"
    env = _env(envdir, "old", kib=64, used_days=0)
    cache = tmp_path / "uv-cache"
    cache.mkdir()
    (cache / "numpy.so").write_bytes(os.urandom(512 * KIB))
    os.link(cache / "numpy.so", env / "lib" / "numpy.so")  # uv links installed files from its cache
    pruned = envs.prune(envdir, set(), limit=0)
    assert pruned.before - pruned.after >= (512 + 64) * KIB  # gone from the envdir
    assert 64 * KIB <= pruned.freed < 512 * KIB  # but the shared file's data stays in the cache
    assert (cache / "numpy.so").stat().st_size == 512 * KIB


def test_under_the_limit_nothing_is_removed_or_said(tmp_path):
    envdir = tmp_path / ".nox"
    _env(envdir, "old", used_days=0)
    pruned = envs.prune(envdir, set(), limit=envs.DEFAULT_LIMIT)
    assert not pruned.removed and _names(envdir) == ["old"] and envs.describe(pruned) == []
    assert envs.prune(tmp_path / "no-such-dir", set(), limit=0).removed == ()


def test_the_project_table_sets_the_limit(tmp_path, monkeypatch):
    (tmp_path / "contracts").mkdir()
    table = '[tool.upgrade-harness]\nbaseline-from = "requirements.txt"\ncontracts = "contracts"\n'
    (tmp_path / "pyproject.toml").write_text(table)
    assert project.at(tmp_path).envs_size_limit == 10 * 2**30  # the default
    (tmp_path / "pyproject.toml").write_text(table + 'envs-size-limit = "2GiB"\n')
    assert project.at(tmp_path).envs_size_limit == 2 * 2**30
    (tmp_path / "pyproject.toml").write_text(table + "envs-size-limit = false\n")
    assert project.at(tmp_path).envs_size_limit == math.inf
    (tmp_path / "pyproject.toml").write_text(table + 'envs-size-limit = "lots"\n')
    with pytest.raises(HarnessError) as raised:
        project.at(tmp_path)
    assert "envs-size-limit: cannot read 'lots'" in str(raised.value)
    assert 'envs-size-limit = "10GiB"' in str(raised.value)


def test_a_bad_limit_on_the_command_line_is_refused_before_anything_runs(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(upgrade, "run_entries", lambda *a, **k: pytest.fail("ran with a bad limit"))
    assert upgrade.upgrade(Workspace.of(paths.SOURCE, tmp_path), ["--envs-size-limit", "10 gigs"]) == 2
    err = capsys.readouterr().err
    assert "--envs-size-limit: cannot read '10 gigs' as a size" in err


def test_when_every_environment_is_in_use_none_is_walked(tmp_path, monkeypatch):
    envdir = tmp_path / ".nox"
    _env(envdir, "baseline", used_days=0)
    monkeypatch.setattr(envs, "_files", lambda root: pytest.fail(f"walked {root}"))
    assert envs.prune(envdir, {"baseline"}, limit=0).removed == ()


def test_environments_measured_within_the_limit_are_walked_again_only_once_something_is_installed(tmp_path,
                                                                                                   monkeypatch):
    """Every upgrade ends with a prune; walking a few GiB of environments costs seconds, so sizes found
    within the limit are remembered until a package is installed into one of them (or a day passes)."""
    envdir = tmp_path / ".nox"
    _env(envdir, "old", used_days=0)
    _env(envdir, "baseline", used_days=0)
    walked = []
    real = envs._files
    monkeypatch.setattr(envs, "_files", lambda root, found=None: walked.append(root) or real(root, found))
    limit = 10 * 2**20
    envs.prune(envdir, {"baseline"}, limit)
    first = len(walked)
    assert first and envs.prune(envdir, {"baseline"}, limit).removed == ()
    assert len(walked) == first  # nothing installed since: not walked again
    assert envs.prune(envdir, {"baseline"}, limit / 2).removed == () and len(walked) > first  # a smaller limit
    again = len(walked)
    site = envdir / "old" / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    (site / "big").write_bytes(os.urandom(64 * KIB))  # an install: the size may have grown
    os.utime(site, (T0 + 9 * DAY,) * 2)
    envs.prune(envdir, {"baseline"}, limit / 2)
    assert len(walked) > again
    monkeypatch.setattr(envs.time, "time", lambda: T0 + 400 * DAY)  # a day later than any measure
    counted = len(walked)
    envs.prune(envdir, {"baseline"}, limit / 2)
    assert len(walked) > counted
