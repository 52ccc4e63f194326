"""The two GitHub workflows a team's repository runs, from one template: on a pull request that changes what
the verdict depends on, and every night on the newest releases. Both are the fan-out this project's own CI
runs (`plan` -> one job per entry -> `followups` -> one job per follow-up -> `judge`), with the tool
installed from one pinned source instead of this checkout.

The jobs are written once (harness.stack.ci.github_jobs) and assembled here; only the team's paths and the
tool's requirement vary, and they reach shell steps through `env:` only, never inside a script.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.stack.ci.github_cache import NIGHTLY_CACHE, PULL_REQUEST_CACHE
from harness.stack.ci.github_jobs import (BASE_BRANCH_HISTORY, PULL_REQUEST_PLAN, STICKY_COMMENT, fan_out, judge_job,
                                         plan_job, pull_request_plan_env)
from harness.stack.ci.tool_source import ToolSource
from harness.stack.project import CODE

WORKFLOWS = Path(".github") / "workflows"
PR_FILE = WORKFLOWS / "upgrade-harness-pr.yml"
NIGHTLY_FILE = WORKFLOWS / "upgrade-harness-nightly.yml"



@dataclasses.dataclass(frozen=True)
class Layout:
    """What the team's [tool.upgrade-harness] table names, relative to the repository's root."""

    pins: str  # baseline-from: the file that pins the stack
    contracts: tuple[str, ...]
    golden: str
    locks: str
    default_branch: str = "main"  # where merged changes land: its runs save the reports pull requests reuse
    code: tuple[str, ...] = ()  # pythonpath: the folders the contracts import the training code from
    pins_sources: tuple[str, ...] = ()  # the files the pins file must agree with (requirements.in, its lock)

    def triggers(self) -> list[str]:
        """The paths whose change changes the verdict: the pins and every file they are compiled from or must agree
        with (a pull request that edits only requirements.in is told its lock disagrees), the table, the lock, the
        golden values, the contracts, the training code (the files of its folders an entry's reuse key reads), and
        the workflow."""
        code = [f"{'' if folder == '.' else folder + '/'}**/*{suffix}" for folder in self.code for suffix in CODE]
        found = [self.pins, *self.pins_sources, "pyproject.toml", f"{self.locks}/**", f"{self.golden}/**",
                 *(f"{c}/**" for c in self.contracts), *code, PR_FILE.as_posix()]
        return list(dict.fromkeys(found))



# Pieces of the workflows' text, named here: the host runs under Python 3.11, whose f-strings take no backslash.
_PR_JUDGE_PERMISSIONS = """\
    permissions:
      contents: read
      pull-requests: write # the sticky verdict comment
"""
_NIGHTLY_ENV = "      HARNESS_PROFILE: nightly # random examples, with one seed for the whole run\n"

def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text)


def _header(title: str, tool: ToolSource, what: str) -> str:
    return f"""\
# {title}: written by `upgrade-harness init --ci github`. Review it as your own code;
# `upgrade-harness init --ci github --force` writes it again.
#
# {what}
#
# The tool: {tool.requirement}
#   ({tool.origin}). Each job installs exactly that into a virtual environment of its own under
#   $RUNNER_TEMP, as the README's "Your own contracts" installs it; change UPGRADE_HARNESS_FROM below to
#   move to another version of the tool.
"""


def pull_request(layout: Layout, tool: ToolSource) -> str:
    paths = "".join(f"      - {_q(p)}\n" for p in layout.triggers())
    return _header("upgrade-harness on pull requests", tool, f"""\
On a pull request that changes your pins ({layout.pins}), the table, the lock, the golden values, your
# contracts or the training code they import (pythonpath: {", ".join(layout.code) or "none"}; Dependabot's and
# Renovate's pull requests included): the upgrade check judges the pull request's pins against
# its base branch's, as `upgrade-harness upgrade --baseline-from origin/BASE:PINS --candidate-from PINS`
# does on a branch (a bump committed without a new lock too), one job per entry. `plan` resolves it once;
# baseline and candidate run side by side; `followups` decides what else runs (the replay, the rollback runs,
# the single-package entries when a check changed); `judge` gives the verdict in the job summary and one
# sticky comment, and fails the check when a contract changed (1) or the harness could not judge (2).
# Once such a change is merged into {layout.default_branch}, the same check runs there on its pins alone: its
# jobs save their reports (reports/.cache/) in {layout.default_branch}'s Actions cache, which every pull
# request restores, so a pull request that leaves the baseline's inputs unchanged reuses the baseline's report
# instead of running it (the verdict names the run it came from).""") + f"""\
name: upgrade-harness-pr

on:
  pull_request:
    paths:
{paths}  push:
    branches: [{_q(layout.default_branch)}]
    paths:
{paths}
permissions:
  contents: read

env:
  UPGRADE_HARNESS_FROM: {_q(tool.requirement)}

# A newer push to the pull request supersedes a running check (and two runs never race on the comment).
concurrency:
  group: upgrade-harness-pr-${{{{ github.event.pull_request.number || github.ref }}}}
  cancel-in-progress: true

jobs:
{plan_job(PULL_REQUEST_PLAN, "Resolve the plan (the pull request's pins against its base branch's)",
          pull_request_plan_env(_q(layout.pins)), BASE_BRANCH_HISTORY)}
{fan_out("", PULL_REQUEST_CACHE)}
{judge_job("Upgrade check", _PR_JUDGE_PERMISSIONS, STICKY_COMMENT)}"""


def nightly(tool: ToolSource) -> str:
    return _header("upgrade-harness every night", tool, """\
Every night (and on demand): your contracts on the newest jax, jaxlib, optax and flax that install together
# (`upgrade-harness upgrade --candidate latest`), one job per entry, with random Hypothesis examples (one seed
# per run). The verdict is in the job summary; the run fails when a contract changed (1) or the harness could
# not judge (2), so a scheduled failure tells you before a bump does.""") + f"""\
name: upgrade-harness-nightly

on:
  schedule:
    - cron: "17 3 * * *"
  workflow_dispatch:

permissions:
  contents: read

env:
  UPGRADE_HARNESS_FROM: {_q(tool.requirement)}

# A manual run while the scheduled one is still going waits for it.
concurrency:
  group: upgrade-harness-nightly
  cancel-in-progress: false

jobs:
{plan_job(" --candidate latest", "Resolve the plan on the newest releases")}
{fan_out(_NIGHTLY_ENV, NIGHTLY_CACHE)}
{judge_job("Judge the newest releases", "", "")}"""


def render(layout: Layout, tool: ToolSource) -> dict[Path, str]:
    """Each workflow's path in the repository and its text."""
    return {PR_FILE: pull_request(layout, tool), NIGHTLY_FILE: nightly(tool)}


def render_paths() -> tuple[Path, ...]:
    """The files `render` writes, known before anything is read."""
    return (PR_FILE, NIGHTLY_FILE)
