"""What an upgrade needs, checked before its first suite starts: a damaged lock, a missing interpreter,
an unreadable golden store or a host library missing (harness.stack.environments.host_libraries) would
otherwise cost a whole suite's run before the verdict says why.

Nothing here writes: a refused plan leaves the reports directory exactly as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import golden_layout, platforms
from harness.errors import HarnessError
from harness.model.enums import BuiltinMode
from harness.stack import paths, project
from harness.stack.pins import locks, matrix
from harness.stack.environments import host_libraries
from harness.stack.environments.interpreters import find_python
from harness.stack.workspace import Workspace


def check(ws: Workspace, entries: list[matrix.Entry]) -> None:
    """HarnessError listing every problem found, each naming its file (and line) and the fix."""
    host = host_libraries.problem()
    problems = [host] if host else []
    problems += list(dict.fromkeys(problem for entry in entries for problem in _entry_problems(ws, entry)))
    problems += _golden_problems(ws)
    if not problems and (missing := platform_golden_problem(ws)):
        problems.append(missing)
    if problems:
        raise HarnessError("the upgrade cannot run; nothing was run and reports/ is as it was:\n  - "
                           + "\n  - ".join(problems))


def _entry_problems(ws: Workspace, entry: matrix.Entry) -> list[str]:
    if entry.problem:  # a single-package entry the plan could not resolve: reported, never run
        return []
    problems = []
    try:
        find_python(entry.python)
    except HarnessError as exc:
        problems.append(str(exc))
    if not (entry.locked or entry.lock_file):  # resolved when its session starts
        return problems
    lock = locks.lock_path(ws, entry)
    if not lock.exists():
        if ws.is_checkout or entry.lock_file:  # a team's project resolves a missing committed lock itself
            problems.append(f"lock file {lock} of {entry.name} is missing; generate it with "
                            f"`{locks.lock_command(ws)}`.")
        return problems
    try:
        locks.check_current(ws, entry, lock)
    except HarnessError as exc:
        problems.append(str(exc))
    return problems


def golden_dirs(ws: Workspace) -> list[Path]:
    """The golden stores the suite reads: the project's, and the tool's own for the built-in contracts."""
    found = project.load(ws)
    dirs = [found.golden]
    if not ws.is_checkout and found.builtin != BuiltinMode.OFF:
        dirs.append(paths.builtin_golden(ws.options.platform))
    return list(dict.fromkeys(dirs))


def platform_golden_problem(ws: Workspace) -> str | None:
    """On an accelerator (--platform), the golden values must have been recorded there: the CPU's do not hold
    on a chip (its matmuls, its transcendental functions), and a suite judged against none would fail every
    check on both sides and so hide every change."""
    platform = ws.options.platform
    if platform in (None, platforms.CPU):
        return None
    found = project.load(ws)
    recorded = [d for d in golden_dirs(ws) if d.is_dir() and any(d.rglob("*.json"))]
    if recorded:
        return None
    record = (f"nox -s golden -- --platform {platform}" if ws.is_checkout
              else f"upgrade-harness golden --platform {platform}"
              + (" --record-builtin" if found.builtin != BuiltinMode.OFF else ""))
    return (f"no golden values are recorded on {platform} ({found.golden} holds none): the CPU's do not hold on "
            f"an accelerator. Record the baseline's on this machine first: `{record}`.")


def store_problem(directory: Path) -> str | None:
    """A golden store that exists must be a directory (golden's check too, before it records)."""
    if directory.exists() and not directory.is_dir():
        return f"the golden store {directory} is not a directory; move the file away."
    return None


def _golden_problems(ws: Workspace) -> list[str]:
    """Every golden file must read as JSON. A store not recorded yet is no problem here: its checks
    say so in the verdict."""
    problems = []
    for directory in golden_dirs(ws):
        if not directory.exists():
            continue
        if problem := store_problem(directory):
            problems.append(problem)
            continue
        try:
            files = sorted([*directory.glob("*.json"), *directory.glob(f"{golden_layout.BUILTIN_COPIES}/*.json")])
        except OSError as exc:
            problems.append(f"the golden store {directory} is unreadable ({exc.strerror or exc}); fix its permissions.")
            continue
        for file in files:
            try:
                json.loads(file.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(f"golden file {file} is unreadable ({exc}); restore it from version control "
                                "(`git checkout -- <file>`) or record it again.")
    return problems
