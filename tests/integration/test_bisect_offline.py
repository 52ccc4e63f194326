"""`upgrade --bisect` asks the package index for the releases between the sides unless `--offline` is typed: a
UV_OFFLINE the shell exports keeps uv off the network (the entries' installs), as it always did, and does
not turn the bisection off (harness.stack.commands.bisect)."""

import pytest

from harness.run_options import RunOptions
from harness.stack.commands import upgrade
from integration.test_run_dir import _checkout, _entries_writing, _sessions_writing, reports  # noqa: F401


@pytest.mark.parametrize("typed, told, offline", [([], False, False), ([], True, False),
                                                   (["--offline"], False, True), (["--offline"], True, True)])
def test_only_a_typed_offline_keeps_the_bisection_from_the_index(typed, told, offline, reports, monkeypatch):
    seen, bisected = [], []
    monkeypatch.setattr(upgrade, "run_entries", _entries_writing(seen))
    monkeypatch.setattr(upgrade, "run_sessions", _sessions_writing(seen))
    monkeypatch.setattr(upgrade.bisect, "run", lambda *a, **k: bisected.append(k["offline"]))
    ws = _checkout(reports).with_options(RunOptions(offline=told))  # as UV_OFFLINE=1 tells the process
    assert upgrade.upgrade(ws, ["--bisect", *typed]) in (0, 1)
    assert bisected == [offline]
