"""CI's entry jobs reuse a report as `nox -s upgrade` does. In the fan-out (harness.stack.commands.fanout) each
matrix row is its own `nox -s <entry>` job, with no upgrade process around it to look in the report cache
(harness.stack.run.entry_reuse); the workflows restore the reports directory's `.cache/` with actions/cache
before the row runs (the newest the default branch or the pull request saved) and save it after. So the
entry's session looks there itself: when nothing that determines its report changed (the same content key),
its report is taken from the cache, marked reused with the run it came from, and the suite does not run;
otherwise it runs and its report is kept under its key for the next job.

Only a fan-out row does this (told a job, and not started by an upgrade, which looks up itself): a session
run by hand still runs.
"""

from __future__ import annotations

import contextlib

from harness import env_vars
from harness.model import entry_job
from harness.run_options import RunOptions
from harness.stack.pins.matrix import Entry
from harness.stack.run import entry_reuse, report_cache
from harness.stack.run.run_directory import RunDirectory
from harness.stack.workspace import Workspace
from harness.stack import boundary


def is_fanout_row(environ) -> bool:
    """A CI matrix row's session: told its job (HARNESS_JOB) by the workflow, not by an upgrade (which
    names itself in HARNESS_RUN_PID, harness.stack.run.lifeline)."""
    return bool(environ.get(env_vars.JOB)) and not environ.get(env_vars.RUN_PID)


@contextlib.contextmanager
def reused_or_run(ws: Workspace, entry: Entry, environ=None, say=print):
    """Around a fan-out row's run: yields the workspace to run the entry in, or None when its report was reused
    whole (the caller then runs nothing). A report in parts some of which were kept: those parts are written
    where the session would write them, and the workspace names them (RunOptions.reused_parts): the session
    runs the others. After a run, each part it ran is kept in the cache. Outside a fan-out row: `ws`, and nothing
    looked up or kept."""
    environ = dict(boundary.variables() if environ is None else environ)
    if not is_fanout_row(environ):
        yield ws
        return
    told = entry_job.options_of(ws.options)  # the row's job, read with its workspace
    stem = told.report_name or entry.name
    cache = report_cache.directory(ws.published)
    run = RunDirectory.of(ws)
    report_file, log_file = run.report_file(stem), run.log(stem)
    looked = entry_reuse.attempt(ws, cache, entry, environ, told, report_file, log_file, fresh=False)
    if looked.reused is not None:
        origin = looked.reused.reused
        say(f"{entry.name}: reused the report of run {origin.run_id} (entry {origin.entry}, {origin.when}): "
            f"nothing that determines it changed (key {looked.key.digest}); the suite is not run")
        yield None
        return
    if looked.why_ran:
        say(f"{entry.name}: runs ({looked.why_ran})")
    try:
        yield ws.with_options(RunOptions(reused_parts=looked.reused_parts)) if looked.reused_parts else ws
    finally:  # a run whose checks failed (the session then fails) is a result too: kept
        entry_reuse.keep(ws, cache, looked, entry, environ, told, report_file, log_file)
