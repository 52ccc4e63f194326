"""Entry environments no current plan uses are pruned, least recently used first, beyond a size limit;
never one the plan uses, never `tests`, never anything but an environment directly in the envdir.

Here: the tests that run several modules together (pytester, made-up stacks, git, the shell); the others are in
tests/unit/stack/environments/test_envs.py."""

import json
import os

from harness.stack import paths
from harness.stack.workspace import Workspace
from harness.stack.commands import upgrade
from harness.stack.environments import envs
from harness.stack.pins.matrix import BASELINE
from unit.stack.environments.test_envs import (  # noqa: F401 (fixtures and helpers shared with it)
    DAY, KIB, T0, _env, _names,
)


def _fake_run(ws, entries, seed, **kw):
    for entry in entries:
        (ws.reports / f"{entry.name}.json").write_text(json.dumps({"not": "a report"}))


def test_an_upgrade_prunes_its_envdir_after_the_run_and_says_what_went(tmp_path, monkeypatch, capsys):
    reports = tmp_path / "reports-elsewhere"  # `--reports DIR`: the entries' environments are DIR/.nox
    monkeypatch.setattr(upgrade, "run_entries", _fake_run)
    envdir = reports / ".nox"
    for name in (BASELINE, "jaxlib-skew", "golden", "bisect-optax-0-2-7", "bisect-jax-0-11-3"):
        _env(envdir, name, kib=64, used_days=0)
    os.utime(envdir / "bisect-jax-0-11-3" / envs.STAMP, (T0 + 5 * DAY,) * 2)
    # five of 64 KiB and more: the two probes must go
    upgrade.upgrade(Workspace.of(paths.SOURCE, reports), ["--envs-size-limit", "200KiB"])
    out = capsys.readouterr().out
    assert _names(envdir) == [BASELINE, "golden", "jaxlib-skew"]
    assert "removed bisect-optax-0-2-7 (last used" in out and "removed bisect-jax-0-11-3" in out
    assert out.index("bisect-optax-0-2-7") < out.index("bisect-jax-0-11-3")  # least recently used first
    assert "freed on disk" in out
