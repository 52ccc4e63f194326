"""This checkout's files as a clone has them: what the tests copy to install the tool from, or to start from."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def committable(root: Path = ROOT) -> list[str]:
    """The files git would commit: tracked ones (as they are in the work tree) and new ones not ignored."""
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("needs this checkout's git (to copy its files the way a team's clone has them)")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    return [name for name in dict.fromkeys(listed.split("\0")) if name and (root / name).is_file()]


def copy_to(folder: Path) -> Path:
    """A copy of the checkout's committable files in `folder` (a fresh clone, less its .git)."""
    for name in committable():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / name)
    return folder
