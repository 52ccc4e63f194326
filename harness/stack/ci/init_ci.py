"""`upgrade-harness init --ci github`: the team's workflows written into its repository, from its table.

Refusals come before anything is written: an existing workflow file is never replaced without `--force`,
and a tool source CI cannot install (a local checkout) needs `--tool-from`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.ci import github_workflows, tool_source
from harness.stack.ci.tool_source import ToolSource
from harness.stack.pins import agreement, pin_files

PROVIDERS = ("github",)


def prepare(root: Path, force: bool, tool_from: str | None) -> ToolSource:
    """The tool's source for CI (`tool_from`: --tool-from's requirement, None: where the running tool came
    from), after the refusals: an existing workflow file without --force, an unpinned or unreachable tool."""
    if not force:
        existing = [str(path) for path in github_workflows.render_paths() if (root / path).exists()]
        if existing:
            verb = "already exists" if len(existing) == 1 else "already exist"
            raise HarnessError(f"{', '.join(existing)} {verb} in {root}; nothing was changed. Review your copy and "
                               "remove it, or give --force to write it again.")
    return tool_source.given(tool_from) if tool_from else tool_source.running()


def layout(root: Path) -> github_workflows.Layout:
    """The table's paths, as the repository names them (the project's root is the repository's)."""
    found = project.at(root)

    def relative(path: Path) -> str:
        if not path.resolve().is_relative_to(root.resolve()):
            raise HarnessError(f"{path} is outside {root}: a workflow sees only the repository; keep the table's "
                               "paths inside it.")
        return path.resolve().relative_to(root.resolve()).as_posix()

    if found.baseline_from is None:
        raise HarnessError(f"{root / 'pyproject.toml'}: [tool.{project.TABLE}] names no baseline-from.")
    sources = agreement.companions(found.baseline_from, pin_files.WorkingTree())
    return github_workflows.Layout(pins=relative(found.baseline_from),
                                   contracts=tuple(relative(c) for c in found.own_contracts),
                                   golden=relative(found.golden), locks=relative(found.locks),
                                   default_branch=default_branch(root),
                                   code=tuple(relative(p) for p in found.pythonpath),
                                   pins_sources=tuple(relative(p) for p in sources))


def default_branch(root: Path) -> str:
    """The repository's default branch as its clone knows it (origin/HEAD), else `main`: where the merged
    changes' runs save the reports that pull requests reuse."""
    done = subprocess.run(["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"],
                          capture_output=True, text=True, check=False)
    found = done.stdout.strip().removeprefix("origin/") if done.returncode == 0 else ""
    return found or "main"


def write(root: Path, tool: ToolSource) -> list[str]:
    """The workflows written; what was written, for init to say."""
    said = []
    for path, text in github_workflows.render(layout(root), tool).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
        said.append(f"wrote {path.as_posix()}")
    said.append(f"the workflows install the tool from {tool.requirement} ({tool.origin}); review them, then commit")
    return said


def main(root: Path, tool: ToolSource) -> int:
    """A project set up before (its table exists): only the workflows are written."""
    print("upgrade-harness init --ci github:\n  " + "\n  ".join(write(root, tool)))
    return 0
