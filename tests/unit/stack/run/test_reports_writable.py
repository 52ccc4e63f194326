"""The reports directory is probed before anything runs (harness.stack.run.run_directory.check_writable), and a
refusal says which path is at fault and the fix that fits: permissions are no fix for a path that cannot
exist, and a file in its place must be moved."""

from __future__ import annotations

import pytest
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.run.run_directory import check_writable


def test_a_directory_that_can_be_made_is_made_and_left_empty(tmp_path):
    check_writable(tmp_path / "a" / "reports")
    assert list((tmp_path / "a" / "reports").iterdir()) == []


def test_a_file_in_its_place_is_to_be_moved(tmp_path):
    (tmp_path / "reports").write_text("not a directory")
    with pytest.raises(HarnessError) as refused:
        check_writable(tmp_path / "reports", elsewhere="give --reports another directory")
    said = str(refused.value)
    assert f"reports directory {tmp_path / 'reports'} is not writable:" in said
    assert "is a file, not a directory; move it away, or give --reports another directory." in said
    assert "permissions" not in said
    assert (tmp_path / "reports").read_text() == "not a directory"  # nothing written over it


def test_a_file_in_the_way_of_its_parent_is_named(tmp_path):
    (tmp_path / "out").write_text("a file")
    with pytest.raises(HarnessError) as refused:
        check_writable(tmp_path / "out" / "reports")
    said = str(refused.value)
    assert f"{tmp_path / 'out' / 'reports'} cannot be created (Not a directory)" in said and "permissions" not in said


def test_a_place_no_directory_can_be_made_is_no_matter_of_permissions():
    with pytest.raises(HarnessError) as refused:
        check_writable(Path("/proc/no-such-reports"))  # /proc takes no new directories
    said = str(refused.value)
    assert "/proc/no-such-reports cannot be created (No such file or directory)" in said, said
    assert "--reports" not in said and "permissions" not in said  # a command that takes no --reports


def test_holding_the_lock_of_a_reports_directory_that_is_a_file_is_refused_with_the_fix(tmp_path):
    """`accept` holds the reports directory's lock without `upgrade`'s probe first: a file in its place
    was a FileExistsError traceback."""
    from harness.stack.run import run_directory

    (tmp_path / "reports").write_text("not a directory")
    with pytest.raises(HarnessError, match="is a file, not a directory; move it away"):
        with run_directory.hold(tmp_path / "reports", ["accept"]):
            raise AssertionError("held a lock in a file")
