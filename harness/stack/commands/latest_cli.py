"""`python -m harness.stack.commands.latest_cli`: the nightly's host-side steps around `nox -s upgrade`.

  resolve --state LAST --out CURRENT [--pre]
      The newest jax, jaxlib, optax and flax that install together (numpy at the baseline's pin when it
      fits), written to CURRENT, and whether that set is new since the one in LAST. Exit 0 either way;
      2 when nothing resolves (then nothing is judged and LAST stays as it was).
  record --report reports/candidate.json --out LAST
      The set the upgrade really judged (the candidate report's installed versions: a release may land
      between this job's resolve and the upgrade's), written as the new state. Exit 2 when the report
      does not say, and then nothing is recorded (the next night judges again).

Under GitHub Actions ($GITHUB_OUTPUT set) both write `release_set=<label>`; resolve also writes
`decision=run|skip` and `summary=<the decision sentence>`.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

from harness import run_options
from harness.errors import HarnessError
from harness.stack.commands import frame, options
from harness.stack.pins import current, matrix, release_set, resolve
from harness.stack.pins.release_set import ReleaseSet
from harness.stack.workspace import Workspace
from harness.stack.ci.github_jobs import github_output



USAGE = options.Usage(prog="python -m harness.stack.commands.latest_cli",
                      description="The nightly's release set: resolve it, record it once judged.", subcommands={
    "resolve": options.Usage(description="resolve the newest releases and decide whether to judge them", own=(
        options.own("--state", type=Path, required=True, help="the last judged set (may be missing)"),
        options.own("--out", type=Path, required=True, help="where to write tonight's set"),
        options.own("--pre", action="store_true", help=run_options.specs()["pre"].argparse["help"]))),  # upgrade's
    "record": options.Usage(description="write the set the upgrade judged as the new state", own=(
        options.own("--report", type=Path, required=True, help="the candidate's report"),
        options.own("--out", type=Path, required=True, help="the state file to write")))})


def resolve_latest(ws: Workspace, prerelease: bool) -> tuple[ReleaseSet, list[str]]:
    """Tonight's release set of the workspace's project and uv's notes (which version is latest, which pin
    had to move)."""
    pins = current.pins(ws)
    named = {pkg: matrix.LATEST for pkg in matrix.LATEST_PACKAGES}
    resolution = resolve.resolve(ws, named, pins.baseline, pins.python, prerelease=prerelease,
                                 held=pins.baseline_with)
    return ReleaseSet.of(resolution.pins, pins.python, resolution.resolved_at), resolution.notes


def run_resolve(ws: Workspace, state: Path, out: Path, prerelease: bool) -> int:
    try:
        current, notes = resolve_latest(ws, prerelease)
    except HarnessError as exc:
        raise HarnessError(f"cannot resolve the newest releases, so nothing is judged tonight and the last judged "
                           f"set is kept: {exc}") from None
    last, note = release_set.read_state(state)
    decision = release_set.decide(current, last)
    release_set.write_state(out, current)
    for line in notes:
        print(f"latest: {line}")
    if note:
        print(f"latest: {note}")
    print(decision.text)
    summary = f"{decision.text} (Note: {note})" if note else decision.text
    github_output(decision=decision.action.value, release_set=current.label, summary=summary)
    return 0


def installed_versions(report: Path) -> tuple[dict, str]:
    """environment.versions and started_at of a session report: only these two fields are read, so a
    report of another schema version still tells what was installed."""
    try:
        doc = json.loads(report.read_bytes())
        versions, started_at = doc["environment"]["versions"], doc.get("started_at", "")
    except FileNotFoundError:
        raise HarnessError(f"{report} does not exist") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise HarnessError(f"{report} holds no readable environment.versions ({exc!r})") from None
    if not isinstance(versions, dict):
        raise HarnessError(f"{report}: environment.versions is not a table of versions")
    return versions, started_at if isinstance(started_at, str) else ""


def judged_set(report: Path) -> ReleaseSet:
    """The set the candidate report says was installed, dated when its session started."""
    versions, started_at = installed_versions(report)
    try:
        return ReleaseSet.of(versions, versions.get("python") or "", started_at)
    except HarnessError as exc:
        raise HarnessError(f"{report}: {exc}") from None


def run_record(report: Path, out: Path) -> int:
    try:
        judged = judged_set(report)
    except HarnessError as exc:
        raise HarnessError(f"cannot tell which release set was judged, so none is recorded: {exc}") from None
    release_set.write_state(out, judged)
    print(f"Judged release set: {judged.label}")
    github_output(release_set=judged.label)
    return 0


def _run(args) -> int:
    if args.command == "resolve":
        return run_resolve(Workspace.from_environment(), args.state, args.out, args.pre)
    return run_record(args.report, args.out)


def main(argv: list[str]) -> int:
    """Either step, in the command frame: a HarnessError is `latest: <why>` on stderr, exit 2."""
    return frame.execute(frame.Command("latest", functools.partial(options.parse, USAGE), _run), argv)


COMMANDS = (options.Declaration("latest", "The nightly's release set: resolve it, record it once judged.", USAGE,
                                lambda call: main(list(call.argv))),)  # the nightly's: python -m


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
