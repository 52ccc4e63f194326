"""The report cache across a team's workflow runs: the reports directory's `.cache/` (reports kept by content
key, harness.stack.run.report_cache) restored before an entry row runs and saved after, with actions/cache.
A row whose report's inputs did not change then reuses it instead of running (harness.stack.run.report_cache).
"""

from __future__ import annotations

# Pinned as this project's own workflows pin it (a test keeps them equal).
CACHE_RESTORE = "actions/cache/restore@0400d5f644dc74513175e3cd8d07132dd4860809 # v4.2.4"
CACHE_SAVE = "actions/cache/save@0400d5f644dc74513175e3cd8d07132dd4860809 # v4.2.4"

# The Actions cache keys' prefixes, one series per workflow (a pull request's reports never serve a nightly's
# random examples, nor the other way round).
PULL_REQUEST_CACHE = "upgrade-harness-reports"
NIGHTLY_CACHE = "upgrade-harness-nightly-reports"


def report_cache_steps(prefix: str) -> tuple[str, str]:
    """The steps around a row's runs: the report cache (reports/.cache/) restored from the newest this row's
    jobs saved (on this branch or the default branch), and saved after under this run's key. A row whose
    report's inputs did not change reuses it instead of running (harness.stack.run.report_cache)."""
    key = f"{prefix}-${{{{ matrix.report }}}}-${{{{ github.run_id }}}}-${{{{ github.run_attempt }}}}"
    restore = f"""\
      # The reports kept by content key: a report nothing of whose inputs changed is reused, not run, and the
      # verdict names the run it came from.
      - name: Restore the report cache
        uses: {CACHE_RESTORE}
        with:
          path: reports/.cache
          key: {key}
          restore-keys: {prefix}-${{{{ matrix.report }}}}-
"""
    save = f"""\
      # The cache with this row's new records, for the next runs (the default branch's serve pull requests).
      - name: Save the report cache
        uses: {CACHE_SAVE}
        with:
          path: reports/.cache
          key: {key}
"""
    return restore, save
