"""Staged changes across several folders: a file the staged step deleted is deleted in the project too
(an old checkpoint's data files after a new recording), at commit and when a killed commit is finished."""

from __future__ import annotations

import pytest

from harness.stack import staging


@pytest.fixture
def project(tmp_path):
    (tmp_path / "golden" / "checkpoint" / "d").mkdir(parents=True)
    (tmp_path / "golden" / "checkpoint" / "d" / "old-data").write_text("old")
    (tmp_path / "golden" / "checkpoint" / "manifest").write_text("names old-data")
    (tmp_path / "golden" / "kept.json").write_text("{}")
    return tmp_path


def _record_anew(stage: staging.Stage) -> None:
    """What a recording does to an orbax checkpoint: the folder written again, its old data files gone."""
    folder = stage.copy_of(stage.root / "golden" / "checkpoint")
    (folder / "d" / "old-data").unlink()
    (folder / "d" / "new-data").write_text("new")
    (folder / "manifest").write_text("names new-data")


def test_a_file_the_staged_step_deleted_is_deleted_at_commit(project):
    stage = staging.create(project, [project / "golden"])
    _record_anew(stage)
    moves = staging.changed(stage)
    assert [(m.path, m.removed) for m in moves] == [("golden/checkpoint/d/new-data", False),
                                                    ("golden/checkpoint/manifest", False),
                                                    ("golden/checkpoint/d/old-data", True)]
    staging.commit(stage, moves)
    assert sorted(p.name for p in (project / "golden" / "checkpoint" / "d").iterdir()) == ["new-data"]
    assert (project / "golden" / "kept.json").exists() and not stage.dir.exists()


def test_a_commit_killed_before_its_deletions_is_finished_by_the_next_start(project):
    stage = staging.create(project, [project / "golden"])
    _record_anew(stage)
    moves = staging.changed(stage)
    done = []

    def killed_after_one(staged, target):
        if done:
            raise KeyboardInterrupt  # stands for the kill: the journal is written, one move made
        done.append(target)
        staged.replace(target)

    with pytest.raises(KeyboardInterrupt):
        staging.commit(stage, moves, killed_after_one)
    assert (project / "golden" / "checkpoint" / "d" / "old-data").exists()
    said = []
    staging.recover(project, said.append)
    assert sorted(p.name for p in (project / "golden" / "checkpoint" / "d").iterdir()) == ["new-data"]
    assert (project / "golden" / "checkpoint" / "manifest").read_text() == "names new-data"
    assert said and "finished an interrupted accept" in said[0]
