"""The two GitHub workflows a team's repository runs, from one template: on a pull request that changes what
the verdict depends on, and every night on the newest releases. Both are the fan-out this project's own CI
runs (`plan` -> one job per entry -> `followups` -> one job per follow-up -> `judge`), with the tool
installed from one pinned source instead of this checkout.

The jobs are written once here and filled in per workflow; only the team's paths and the tool's requirement
vary, and they reach shell steps through `env:` only, never inside a script.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.stack.ci.tool_source import ToolSource

WORKFLOWS = Path(".github") / "workflows"
PR_FILE = WORKFLOWS / "upgrade-harness-pr.yml"
NIGHTLY_FILE = WORKFLOWS / "upgrade-harness-nightly.yml"

# The actions this project's own workflows run, pinned by the same commits (a test keeps them equal).
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2"
SETUP_PYTHON = "actions/setup-python@42375524e23c412d93fb67b49958b491fce71c38 # v5.4.0"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"
DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0"
ACTIONS = (CHECKOUT, SETUP_PYTHON, UPLOAD, DOWNLOAD)

TOOL = '"$RUNNER_TEMP/upgrade-harness/bin/upgrade-harness"'  # each job's own install, outside the checkout
MARKER = "<!-- upgrade-harness-verdict -->"  # the sticky comment's first line


@dataclasses.dataclass(frozen=True)
class Layout:
    """What the team's [tool.upgrade-harness] table names, relative to the repository's root."""

    pins: str  # baseline-from: the file that pins the stack
    contracts: tuple[str, ...]
    golden: str
    locks: str

    def triggers(self) -> list[str]:
        """The paths whose change changes the verdict: the pins, the table, the lock, the golden values, the
        contracts, and the workflow itself."""
        found = [self.pins, "pyproject.toml", f"{self.locks}/**", f"{self.golden}/**",
                 *(f"{c}/**" for c in self.contracts), PR_FILE.as_posix()]
        return list(dict.fromkeys(found))


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


def _setup(comment: str = "") -> str:
    """Checkout without kept credentials, Python, and the pinned tool: the first steps of every job."""
    return f"""\
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      - uses: {SETUP_PYTHON}
        with:
          python-version: "3.12"
      - name: Install upgrade-harness ($UPGRADE_HARNESS_FROM)
        run: python -m venv "$RUNNER_TEMP/upgrade-harness" && "$RUNNER_TEMP/upgrade-harness/bin/pip" install "$UPGRADE_HARNESS_FROM"
{comment}"""


def _plan_job(plan_args: str, title: str) -> str:
    return f"""\
  plan:
    name: {title}
    runs-on: ubuntu-latest
    timeout-minutes: 10
    outputs:
      matrix: ${{{{ steps.plan.outputs.matrix }}}}
      run_id: ${{{{ steps.plan.outputs.run_id }}}}
      seed: ${{{{ steps.plan.outputs.seed }}}}
    steps:
{_setup()}      - id: plan
        name: Resolve the plan once
        run: |
          {TOOL} plan{plan_args}
      # The plan and its locks (or the report of a candidate that does not resolve) for every later job.
      - uses: {UPLOAD}
        if: always()
        with:
          name: run-plan
          path: reports/
"""


_RUN_ROW = f"""\
      # A contract that fails here is the verdict's to judge, not this job's: the status is only told.
      - name: Run the entry
        run: |
          status=0
          {TOOL} run "$ENTRY" || status=$?
          echo "upgrade-harness run $ENTRY ended with exit status $status; the judge job gives the verdict"
      # The report, and the checkpoints the entry wrote (the baseline's rollback run restores the candidate's).
      - uses: {UPLOAD}
        if: always()
        with:
          name: run-entry-${{{{ matrix.report }}}}
          path: |
            reports/${{{{ matrix.report }}}}.json
            reports/${{{{ matrix.report }}}}.junit.xml
            reports/checkpoints/${{{{ matrix.report }}}}/
      # The baseline restoring the checkpoints this entry just wrote, when the row says so.
      - name: Run the baseline on this entry's checkpoints
        if: ${{{{ !cancelled() && matrix.then_entry != '' }}}}
        env:
          HARNESS_REPORT_NAME: ${{{{ matrix.then_report }}}}
          HARNESS_ONLY: ${{{{ matrix.then_only }}}}
          HARNESS_REPLAY: ${{{{ matrix.then_replay }}}}
          HARNESS_ROLLBACK_FROM: ${{{{ matrix.then_rollback }}}}
          ENTRY: ${{{{ matrix.then_entry }}}}
        run: |
          status=0
          {TOOL} run "$ENTRY" || status=$?
          echo "upgrade-harness run $ENTRY ended with exit status $status; the judge job gives the verdict"
      - uses: {UPLOAD}
        if: always() && matrix.then_entry != ''
        with:
          name: run-entry-${{{{ matrix.then_report }}}}
          path: |
            reports/${{{{ matrix.then_report }}}}.json
            reports/${{{{ matrix.then_report }}}}.junit.xml
"""


def _entry_job(job: str, title: str, needs: str, condition: str, source: str, download: str, profile: str) -> str:
    """One job per row of `source`'s matrix: the row's entry, then the run that follows it in the same job."""
    return f"""\
  {job}:
    name: {title} ${{{{ matrix.report }}}}
    needs: {needs}
{condition}    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      fail-fast: false
      matrix: ${{{{ fromJSON(needs.{source}.outputs.matrix) }}}}
    env:
{profile}      HARNESS_PLAN: ${{{{ github.workspace }}}}/reports/upgrade-plan.json
      HARNESS_RUN_ID: ${{{{ needs.plan.outputs.run_id }}}}
      HARNESS_HYPOTHESIS_SEED: ${{{{ needs.plan.outputs.seed }}}}
      HARNESS_REPORT_NAME: ${{{{ matrix.report }}}}
      HARNESS_ONLY: ${{{{ matrix.only }}}}
      HARNESS_REPLAY: ${{{{ matrix.replay }}}}
      HARNESS_ROLLBACK_FROM: ${{{{ matrix.rollback }}}}
      ENTRY: ${{{{ matrix.entry }}}}
    steps:
{_setup()}{download}{_RUN_ROW}"""


def _fan_out(profile: str) -> str:
    """The entry jobs, the follow-ups' decision and the follow-up jobs: the same in both workflows."""
    entry = _entry_job("entry", "Entry", "plan", "", "plan", f"""\
      - uses: {DOWNLOAD}
        with:
          name: run-plan
          path: reports
""", profile)
    followup = _entry_job("followup", "Follow-up", "[plan, followups]",
                          "    if: needs.followups.outputs.count != '0'\n", "followups", f"""\
      # The plan, the follow-ups' files, and the candidate's checkpoints (the rollback row restores them).
      - uses: {DOWNLOAD}
        with:
          pattern: run-{{plan,followups,entry-candidate}}
          merge-multiple: true
          path: reports
""", profile)
    followups = f"""\
  followups:
    name: Decide the follow-ups
    needs: [plan, entry]
    if: ${{{{ !cancelled() && needs.plan.result == 'success' }}}}
    runs-on: ubuntu-latest
    timeout-minutes: 10
    outputs:
      matrix: ${{{{ steps.followups.outputs.matrix }}}}
      count: ${{{{ steps.followups.outputs.count }}}}
    env:
      HARNESS_RUN_ID: ${{{{ needs.plan.outputs.run_id }}}}
      HARNESS_HYPOTHESIS_SEED: ${{{{ needs.plan.outputs.seed }}}}
    steps:
{_setup()}      - uses: {DOWNLOAD}
        with:
          pattern: run-*
          merge-multiple: true
          path: reports
      - id: followups
        name: Decide from baseline and candidate what else runs
        run: |
          {TOOL} followups reports
      # The follow-ups' selections and examples, the reports of attribution entries that cannot run, and the
      # API diff (the judge job has no environments).
      - uses: {UPLOAD}
        with:
          name: run-followups
          if-no-files-found: ignore
          path: |
            reports/*-selection.txt
            reports/replay-examples.json
            reports/*-only.json
            reports/api-diff.json
"""
    return entry + "\n" + followups + "\n" + followup


def _judge_job(title: str, permissions: str, publish: str) -> str:
    """Every report downloaded into one directory, judged; the verdict published; the exit status last."""
    return f"""\
  judge:
    name: {title}
    needs: [plan, entry, followups, followup]
    if: ${{{{ !cancelled() }}}}
    runs-on: ubuntu-latest
    timeout-minutes: 15
{permissions}    env:
      RUN_URL: ${{{{ github.server_url }}}}/${{{{ github.repository }}}}/actions/runs/${{{{ github.run_id }}}}
    steps:
{_setup()}      # The plan, every entry's report and the follow-ups' files: one run's reports directory.
      - uses: {DOWNLOAD}
        with:
          pattern: run-*
          merge-multiple: true
          path: reports
      - id: upgrade
        name: Judge the run's reports
        run: |
          status=0
          {TOOL} judge reports || status=$?
          echo "status=$status" >> "$GITHUB_OUTPUT"
      - uses: {UPLOAD}
        if: always()
        with:
          name: upgrade-reports
          path: reports/
      - id: html
        uses: {UPLOAD}
        if: always()
        with:
          name: upgrade-report-html
          path: reports/upgrade-report.html
      - name: Write the verdict to the job summary
        if: always()
        env:
          HTML_ID: ${{{{ steps.html.outputs.artifact-id }}}}
        run: |
          if [ -f reports/upgrade-summary.md ]; then
            cat reports/upgrade-summary.md >> "$GITHUB_STEP_SUMMARY"
          else
            echo "The upgrade check produced no verdict; see the job log." >> "$GITHUB_STEP_SUMMARY"
          fi
          if [ -n "$HTML_ID" ]; then
            {{ echo; echo "[HTML report]($RUN_URL/artifacts/$HTML_ID)"; }} >> "$GITHUB_STEP_SUMMARY"
          fi
{publish}      # 0: no contract changed; 1: one changed; 2: the harness could not judge (the log says why).
      - name: Fail unless no contract changed
        if: steps.upgrade.outputs.status != '0'
        env:
          STATUS: ${{{{ steps.upgrade.outputs.status }}}}
        run: exit "$STATUS"
"""


_STICKY_COMMENT = f"""\
      # A fork's pull request gets a read-only token: its verdict is in the job summary only. A bot's pull
      # request (Dependabot, Renovate) is a branch of this repository and gets the comment.
      - name: Keep one sticky verdict comment
        if: always() && github.event.pull_request.head.repo.full_name == github.repository
        env:
          GH_TOKEN: ${{{{ github.token }}}}
          PR: ${{{{ github.event.pull_request.number }}}}
          REPO: ${{{{ github.repository }}}}
          HTML_ID: ${{{{ steps.html.outputs.artifact-id }}}}
        run: |
          marker="{MARKER}"
          {{
            echo "$marker"
            cat reports/upgrade-summary.md 2>/dev/null || echo "The upgrade check produced no verdict; see the job log."
            echo
            echo "---"
            links="[Run]($RUN_URL)"
            if [ -n "$HTML_ID" ]; then links="$links · [HTML report]($RUN_URL/artifacts/$HTML_ID)"; fi
            echo "$links"
          }} > body.md
          id=$(gh api "repos/$REPO/issues/$PR/comments" --paginate --jq ".[] | select(.body | startswith(\\"$marker\\")) | .id" | head -n 1)
          if [ -n "$id" ]; then
            gh api --method PATCH "repos/$REPO/issues/comments/$id" -F body=@body.md
          else
            gh api --method POST "repos/$REPO/issues/$PR/comments" -F body=@body.md
          fi
"""


def pull_request(layout: Layout, tool: ToolSource) -> str:
    paths = "".join(f"      - {_q(p)}\n" for p in layout.triggers())
    return _header("upgrade-harness on pull requests", tool, f"""\
On a pull request that changes your pins ({layout.pins}), the table, the lock, the golden values or your
# contracts (Dependabot's and Renovate's included): the upgrade check `upgrade-harness upgrade` runs, one job
# per entry. `plan` resolves it once; baseline and candidate run side by side; `followups` decides what else
# runs (the replay, the rollback runs, the single-package entries when a check changed); `judge` gives the
# verdict in the job summary and one sticky comment, and fails the check when a contract changed (1) or the
# harness could not judge (2).""") + f"""\
name: upgrade-harness-pr

on:
  pull_request:
    paths:
{paths}
permissions:
  contents: read

env:
  UPGRADE_HARNESS_FROM: {_q(tool.requirement)}

# A newer push to the pull request supersedes a running check (and two runs never race on the comment).
concurrency:
  group: upgrade-harness-pr-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
{_plan_job("", "Resolve the plan")}
{_fan_out("")}
{_judge_job("Upgrade check", '''\
    permissions:
      contents: read
      pull-requests: write # the sticky verdict comment
''', _STICKY_COMMENT)}"""


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
{_plan_job(" --candidate latest", "Resolve the plan on the newest releases")}
{_fan_out("      HARNESS_PROFILE: nightly # random examples, with one seed for the whole run\n")}
{_judge_job("Judge the newest releases", "", "")}"""


def render(layout: Layout, tool: ToolSource) -> dict[Path, str]:
    """Each workflow's path in the repository and its text."""
    return {PR_FILE: pull_request(layout, tool), NIGHTLY_FILE: nightly(tool)}


def render_paths() -> tuple[Path, ...]:
    """The files `render` writes, known before anything is read."""
    return (PR_FILE, NIGHTLY_FILE)
