"""The one error type the harness raises for bad input: a message for a person, exit status 2."""

from __future__ import annotations

# Exit statuses shared by `nox -s upgrade` and `python -m harness compare`.
EXIT_OK = 0  # no contract changed
EXIT_CHANGED = 1  # a contract changed (golden values no longer hold)
EXIT_CANNOT_JUDGE = 2  # install/resolution failed, golden missing, report unreadable, bad input


class HarnessError(Exception):
    """A problem the user can fix; the message names the problem and the fix."""

    exit_status = EXIT_CANNOT_JUDGE
