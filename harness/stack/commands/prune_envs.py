"""After an upgrade: remove the entries' environments that no current plan uses (old bisection probes,
old single-package entries), least recently used first, beyond the project's size limit
(harness.stack.environments.envs). Kept always: this run's plan, the matrix's entries, and the sessions that are not
entries (the checkout's `tests`, `golden`)."""

from __future__ import annotations


from harness.errors import HarnessError
from harness.stack import project
from harness.stack.environments import envs
from harness.stack.pins import current, plan
from harness.stack.workspace import Workspace

SESSIONS = ("tests", "golden")  # environments of sessions that are not entries of a plan


def current_sessions(ws: Workspace) -> set[str]:
    """The sessions whose environments are in use: the published plan's (bisection probes included), the
    matrix's entries, and the sessions that are not entries. HarnessError when the matrix cannot be read."""
    names = {*SESSIONS, *current.entries(ws)}
    published = ws.published / plan.PLAN_FILE
    if published.exists():
        names |= set(plan.read(published))
    return names


def after_run(ws: Workspace, limit: float | None) -> list[str]:
    """Prune with this run's limit (None: the project's) and say what was removed, or why nothing was."""
    try:
        keep = current_sessions(ws)
        limit = project.load(ws).envs_size_limit if limit is None else limit
    except HarnessError as exc:
        return [f"note: the environments are not pruned: {str(exc).rstrip('.')}."]
    return envs.describe(envs.prune(ws.envdir, keep, limit))
