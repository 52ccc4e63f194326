"""The text of a pins file and of the files it includes, from the working tree or from one git revision:
a revision's requirements file is read with the includes that revision holds, never the working tree's."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.pins_source import PinsSource


@dataclasses.dataclass(frozen=True)
class WorkingTree:
    """Files as they are on disk."""

    def read_text(self, path: Path) -> str:
        return path.read_text()

    def is_file(self, path: Path) -> bool:
        return path.is_file()

    def shown(self, path: Path) -> str:
        return str(path)

    def name(self, path: Path) -> str:
        return path.name


def git(repository: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(repository), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise HarnessError("reading pins from a git revision needs git, which is not installed here; install git "
                           "or give the file's path alone.") from None


def top_level(folder: Path) -> Path | None:
    """The root of the git repository `folder` is in; None when it is in none."""
    found = git(folder, "rev-parse", "--show-toplevel")
    return Path(found.stdout.decode().strip()).resolve() if found.returncode == 0 else None


@dataclasses.dataclass(frozen=True)
class GitRevision:
    """Files as `revision` of the git repository at `top` holds them (`git show REV:PATH`)."""

    top: Path
    revision: str

    def in_repository(self, path: Path) -> str:
        if not path.is_relative_to(self.top):
            raise HarnessError(f"{path} is outside the git repository {self.top}: {self.revision} cannot hold it; "
                               "give a path inside the repository.")
        return path.relative_to(self.top).as_posix()

    def read_text(self, path: Path) -> str:
        done = git(self.top, "show", f"{self.revision}:{self.in_repository(path)}")
        if done.returncode != 0:
            raise OSError(done.stderr.decode(errors="replace").strip())
        return done.stdout.decode()  # UnicodeDecodeError as a file's read_text would raise it

    def is_file(self, path: Path) -> bool:
        return self.kind(path) == "blob"

    def kind(self, path: Path) -> str | None:
        """What the revision holds at `path`: "blob" (a file), "tree" (a directory), None (nothing)."""
        done = git(self.top, "cat-file", "-t", f"{self.revision}:{self.in_repository(path)}")
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def shown(self, path: Path) -> str:
        return f"{self.revision}:{self.in_repository(path)}"

    def name(self, path: Path) -> str:
        return self.shown(path)


Files = WorkingTree | GitRevision


def of(source: PinsSource, option: str) -> Files:
    """The files `source` is read from; HarnessError naming the fix for a revision git cannot give."""
    if source.revision is None:
        return WorkingTree()
    typed = f"{option} {source.revision}:{source.path.name}"
    folder = next((p for p in (source.path.parent, *source.path.parents) if p.is_dir()), Path("/"))
    top = top_level(folder)
    if top is None:
        raise HarnessError(f"{typed}: {folder} is not in a git repository, so there is no revision to read it from; "
                           f"give the file's path alone ({option} {source.path.name}) or run in a clone.")
    files = GitRevision(top, source.revision)
    if git(files.top, "rev-parse", "--verify", "--quiet", f"{source.revision}^{{commit}}").returncode != 0:
        raise HarnessError(f"{typed}: no revision {source.revision!r} in {files.top}; `git branch -a` lists the "
                           "branches (`git fetch` brings a remote's), or give a commit or tag.")
    kind = files.kind(source.path)
    if kind is None:
        raise HarnessError(f"{typed}: {source.revision} has no {files.in_repository(source.path)} "
                           f"(`git ls-tree --name-only {source.revision}` lists its files); give the path the "
                           "revision holds it at.")
    if kind != "blob":
        raise HarnessError(f"{typed}: {files.shown(source.path)} is a directory, not a pins file; give "
                           "requirements.txt, uv.lock, poetry.lock or pyproject.toml.")
    return files
