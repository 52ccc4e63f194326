"""The jobs of a team's workflows (harness.stack.ci.github_workflows assembles them): the fan-out this
project's own CI runs, `plan` -> one job per entry -> `followups` -> one job per follow-up -> `judge`, each
job with the tool installed from one pinned source. Written once, shared by both workflows; a job's text
varies only by its arguments, which are expressions and literals of this module, never a team's input.
"""

from __future__ import annotations

from harness.stack import boundary
from harness.stack.ci.github_cache import CACHE_RESTORE, CACHE_SAVE, report_cache_steps

# The actions this project's own workflows run, pinned by the same commits (a test keeps them equal).
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2"
SETUP_PYTHON = "actions/setup-python@42375524e23c412d93fb67b49958b491fce71c38 # v5.4.0"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"
DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0"
ACTIONS = (CHECKOUT, SETUP_PYTHON, UPLOAD, DOWNLOAD, CACHE_RESTORE, CACHE_SAVE)

TOOL = '"$RUNNER_TEMP/upgrade-harness/bin/upgrade-harness"'  # each job's own install, outside the checkout
MARKER = "<!-- upgrade-harness-verdict -->"  # the sticky comment's first line


def github_output(**values: str) -> None:
    """What a step tells its job: key=value lines appended to $GITHUB_OUTPUT under GitHub Actions (one line each;
    the `plan` step's matrix, the nightly's decision), which the jobs below read as `steps.<id>.outputs`."""
    target = boundary.given("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            fh.write(f"{key}={' '.join(value.split())}\n")


def setup(history: str = "") -> str:
    """Checkout without kept credentials, Python, and the pinned tool: the first steps of every job.
    history: the checkout's extra `with:` lines (the pull request's plan fetches its base branch)."""
    return f"""\
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
{history}      - uses: {SETUP_PYTHON}
        with:
          python-version: "3.12"
      - name: Install upgrade-harness ($UPGRADE_HARNESS_FROM)
        run: python -m venv "$RUNNER_TEMP/upgrade-harness" && "$RUNNER_TEMP/upgrade-harness/bin/pip" install "$UPGRADE_HARNESS_FROM"
"""


# The pull request's plan reads its base branch's pins (`origin/$BASE_REF:PINS`): every branch fetched, once,
# in this job only. Its later jobs read the plan and need no git history.
BASE_BRANCH_HISTORY = """\
          fetch-depth: 0 # the base branch too: the plan reads its pins (origin/$BASE_REF)
"""
# The pull request's pins against its base branch's, as `upgrade-harness upgrade --baseline-from
# origin/main:PINS --candidate-from PINS` judges a branch's bump; the base branch and the pins file reach the
# script through env only (zizmor's template-injection rule).
# On a push to the default branch (no base branch), both sides are that branch's pins: one stack, whose reports
# the jobs save for the pull requests to come.
PULL_REQUEST_PLAN = ' --baseline-from "origin/${BASE_REF:-$GITHUB_REF_NAME}:$PINS_FILE" --candidate-from "$PINS_FILE"'


def pull_request_plan_env(pins: str) -> str:
    """The plan step's `env:` for PULL_REQUEST_PLAN; `pins` as a YAML scalar (the caller quotes it)."""
    return f"""\
        env:
          BASE_REF: ${{{{ github.base_ref }}}}
          PINS_FILE: {pins}
"""


def plan_job(plan_args: str, title: str, step_env: str = "", history: str = "") -> str:
    """The job that resolves the plan once: `plan` with `plan_args`, its step told `step_env`, its checkout
    `history` (see setup)."""
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
{setup(history)}      - id: plan
        name: Resolve the plan once
{step_env}        run: |
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
          HARNESS_JOB: ${{{{ matrix.then_job }}}}
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


def _entry_job(job: str, title: str, needs: str, condition: str, source: str, download: str, profile: str,
               cache: str) -> str:
    """One job per row of `source`'s matrix: the row's entry, then the run that follows it in the same job;
    the report cache `cache` (its keys' prefix) restored before and saved after."""
    restore, save = report_cache_steps(cache)
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
{profile}      # The row's job file (its entry, the run's id and seed, its selection...), written by the plan or
      # followups job into the reports directory this job downloads (harness.model.entry_job).
      HARNESS_JOB: ${{{{ matrix.job }}}}
      ENTRY: ${{{{ matrix.entry }}}}
    steps:
{setup()}{download}{restore}{_RUN_ROW}{save}"""


def fan_out(profile: str, cache: str) -> str:
    """The entry jobs, the follow-ups' decision and the follow-up jobs: the same in both workflows but for
    the Hypothesis profile and the report cache's key prefix."""
    entry = _entry_job("entry", "Entry", "plan", "", "plan", f"""\
      - uses: {DOWNLOAD}
        with:
          name: run-plan
          path: reports
""", profile, cache)
    followup = _entry_job("followup", "Follow-up", "[plan, followups]",
                          "    if: needs.followups.outputs.count != '0'\n", "followups", f"""\
      # The plan, the follow-ups' files, and the candidate's checkpoints (the rollback row restores them).
      - uses: {DOWNLOAD}
        with:
          pattern: run-{{plan,followups,entry-candidate}}
          merge-multiple: true
          path: reports
""", profile, cache)
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
{setup()}      - uses: {DOWNLOAD}
        with:
          pattern: run-*
          merge-multiple: true
          path: reports
      - id: followups
        name: Decide from baseline and candidate what else runs
        run: |
          {TOOL} followups reports
      # The follow-ups' selections, examples and job files, the reports of attribution entries that cannot
      # run, and the API diff (the judge job has no environments).
      - uses: {UPLOAD}
        with:
          name: run-followups
          if-no-files-found: ignore
          path: |
            reports/*-selection.txt
            reports/replay-examples.json
            reports/*-only.json
            reports/api-diff.json
            reports/jobs/
"""
    return entry + "\n" + followups + "\n" + followup


def judge_job(title: str, permissions: str, publish: str) -> str:
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
{setup()}      # The plan, every entry's report and the follow-ups' files: one run's reports directory.
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
      # A push to the default branch runs only to save its reports for pull requests: a change it shows was
      # judged on its pull request, so only "could not judge" fails it.
      - name: Fail unless no contract changed
        if: steps.upgrade.outputs.status == '2' || (steps.upgrade.outputs.status == '1' && github.event_name != 'push')
        env:
          STATUS: ${{{{ steps.upgrade.outputs.status }}}}
        run: exit "$STATUS"
"""


STICKY_COMMENT = f"""\
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
