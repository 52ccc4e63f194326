"""Golden values on the simulated stack (tests/support/simulated_stack.py), for the pull-request flow
(tests/integration/test_pull_request_flow.py): a check's value is a function of the stack it runs on and of the
team's code, its golden value the one a recording computed, on the stack its golden file's provenance names.

What a check computes: the stand-in releases' behaviour at its pins (simulated_stack.first_changed and
jax_changes, seeded by the check's id alone) and the team's code's effect on it (a digest of its id and the code:
an edit of the code moves some checks, not all). A suite's check passes iff it computes its golden value. The
recording writes golden/<family>.json as harness.contract.golden_recording does (`"own": true`, the provenance's
entry, versions and backend); the suite's report fills `golden_stacks` from that provenance as
harness.contract.session does. Faked at the process boundary only: the recording stands in for the golden
session's pytest (for `golden` and for accept's Steps.record_golden), the report for an entry's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from pathlib import Path

from packaging.version import Version

from support import simulated_stack as sim
from harness.model.enums import Outcome
from harness.model.report import STACK_VERSION_KEYS, Report, Summary
from harness.stack.pins.locks import PIN_LINE

PYTHON = "3.12.1"  # the interpreter the simulated reports record (the fixture reports')


def behaviour(check_id: str, pins: dict[str, str]) -> tuple[bool, bool]:
    """What the stand-in releases do to the check at `pins`: (moved by optax, moved by jax)."""
    seeded = sim.Check(check_id, check_id.split("/", 1)[0], "", "pull-request flow")
    first = sim.first_changed(seeded, "")
    by_optax = first is not None and Version(pins["optax"]) >= Version(first)
    return by_optax, Version(pins["jax"]) >= Version("0.6.0") and sim.jax_changes(seeded, "")


def code_effect(check_id: str, code: str) -> int:
    """What the team's code contributes to the check's value (some edits move it, some do not)."""
    return int(hashlib.sha256(f"{check_id}|{code}".encode()).hexdigest()[:8], 16) % 3


def value(check_id: str, pins: dict[str, str], code: str) -> str:
    """The value the check computes on `pins` with the team's `code`."""
    by_optax, by_jax = behaviour(check_id, pins)
    return f"optax:{by_optax} jax:{by_jax} code:{code_effect(check_id, code)}"


def stack(pins: dict[str, str]) -> dict[str, str | None]:
    """The stack a process on `pins` says it runs (a report's versions, a golden file's provenance)."""
    return {k: PYTHON if k == "python" else pins.get(k) for k in STACK_VERSION_KEYS}


def pins_of_lock(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for line in text.splitlines() if (m := PIN_LINE.match(line.strip()))}


def code_of(project: Path) -> str:
    return "".join(p.read_text() for p in sorted((project / "trainer").glob("*.py")))


def record(golden: Path, project: Path, pins: dict[str, str],
           accepted: tuple[str, str | None] | None = None) -> list[Path]:
    """The golden session's recording on `pins` (with --accept-changes): each own family's values written with
    the provenance of its stack; a family whose values and stack are as its file holds them is left as it is
    (harness.contract.golden.GoldenStore.write); `accepted`: the command and reason that accept the changes,
    written into each file's provenance as harness.contract.golden_recording writes them (and into a file an
    earlier acceptance changed without a reason, its values the same). The files written."""
    written = []
    families: dict[str, dict[str, dict]] = {}
    for check in sim.checks_of(project / "contracts"):
        families.setdefault(check.family, {})[check.id.split("/", 1)[1]] = {
            "fact": value(check.id, pins, code_of(project))}
    for family, values in families.items():
        path = golden / f"{family}.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        was = old.get("provenance", {})
        reason_added = accepted is not None and accepted[1] and "accepted" in was and not was["accepted"]["reason"]
        if old.get("values") == values and was.get("versions") == stack(pins) and not reason_added:
            continue
        provenance = {"entry": "baseline", "versions": stack(pins), "backend": "cpu",
                      "recorded_at": dt.datetime.now(dt.timezone.utc).isoformat()}
        if accepted is not None:
            provenance["accepted"] = {"command": accepted[0], "reason": accepted[1]}
        elif "accepted" in was:  # a recording that accepts nothing keeps the acceptance that changed the values
            provenance["accepted"] = was["accepted"]
        doc = {"format": 1, "family": family, "own": True, "provenance": provenance, "values": values}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=1) + "\n")
        written.append(path)
    return written


def _golden(project: Path, family: str) -> dict:
    path = project / "golden" / f"{family}.json"
    assert path.exists(), f"the flow never records without golden values: {path} is missing"
    return json.loads(path.read_text())


class Sessions(sim.Sessions):
    """The entries' child sessions, each check judged against the project's golden files (its working tree's)."""

    def report(self, project: Path, entry, checks: list[sim.Check], selection: list[str] | None, xla_flags: str,
               run_id: str | None, own: set[str]) -> Report:
        made = super().report(project, entry, checks, selection, xla_flags, run_id, own)
        pins, code, t = dict(entry.pins), code_of(project), self.templates
        records = [c for c in made.checks if c.family not in own]  # built-in checks: the stand-in stack's
        for check in checks:
            if (selection is not None and check.id not in selection) or check.family not in own:
                continue
            recorded = _golden(project, check.family)["values"][check.id.split("/", 1)[1]]["fact"]
            passes = value(check.id, pins, code) == recorded
            records.append(dataclasses.replace(t.same if passes else t.moved, id=check.id, nodeid=check.nodeid,
                                               family=check.family, own=True))
        # Only a process that runs own checks reads their golden files (a built-in part's says nothing).
        stacks = {f: {k: _golden(project, f)["provenance"]["versions"].get(k) for k in STACK_VERSION_KEYS}
                  for f in sorted({c.family for c in checks} & own)}
        failed = any(r.outcome != Outcome.PASSED for r in records)
        return dataclasses.replace(made, checks=records, summary=Summary.of(records), exit_status=int(failed),
                                   golden_stacks=stacks or None)
