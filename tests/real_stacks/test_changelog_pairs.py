"""The changelog ledger against a real pair: the upgrade the matrix judges (harness/matrix.toml's baseline and
candidate) must name, among its changed checks, a contract the ledger says sees each entry of the releases in
between that changes behaviour (harness/coverage/changelogs/). An entry the verdict does not name is a ledger
that claims more than the suite sees: it is listed, with its source, so it is corrected (its seen_by, or the
contract). Minutes on 2 cores: the nightly runs it (`nox -s sequences`), and so can anyone.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from packaging.version import Version

from harness.coverage import changelog

# What shows as a changed check when it happens at a contract's inputs (an added parameter or callable, a new
# signature, need not change any value the baseline's calls see).
VISIBLE = {changelog.ChangeKind.VALUE, changelog.ChangeKind.GRADIENT, changelog.ChangeKind.NONFINITE,
           changelog.ChangeKind.DTYPE, changelog.ChangeKind.DEFAULT, changelog.ChangeKind.RAISES,
           changelog.ChangeKind.STATE, changelog.ChangeKind.SHAPE, changelog.ChangeKind.REMOVED}


def entries_between(baseline: dict[str, str], candidate: dict[str, str]) -> list[changelog.Entry]:
    """The ledger's visible, seen entries of the releases after the baseline's up to the candidate's."""
    found = []
    for package in ("optax", "flax", "jax"):
        low, high = Version(baseline[package]), Version(candidate[package])
        found += [e for e in changelog.read(package).entries
                  if low < Version(e.release) <= high and e.seen and e.kind in VISIBLE]
    return found


def unnamed(summary: dict, entries: list[changelog.Entry]) -> list[str]:
    """Each entry none of whose seen_by contracts the verdict marks changed on the candidate (informational
    marks aside), as 'release source: text (seen_by ...)'."""
    candidate = next(e for e in summary["entries"] if e["name"] == "candidate")
    informational = {"bits changed", "moved within noise", "unchanged", "accepted", "not on the baseline's stack"}
    changed = {c["check_id"].split("[")[0] for c in candidate["changes"] if c["mark"] not in informational}
    return [f"{e.release} {e.source}: {e.text} (seen_by {', '.join(e.seen_by)})" for e in entries
            if not any(contract in changed for contract in e.seen_by)]


def test_the_default_upgrade_names_every_entry_of_its_releases(clone: Path):
    matrix = tomllib.loads((clone / "harness" / "matrix.toml").read_text())
    done = subprocess.run([str(clone / ".venv/bin/nox"), "-s", "upgrade"], cwd=clone, text=True, capture_output=True)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((clone / "reports" / "upgrade-summary.json").read_text())
    entries = entries_between(matrix["baseline"], matrix["candidate"])
    assert entries, "no ledger entry between the matrix's baseline and candidate: the ledger or the range is wrong"
    missed = unnamed(summary, entries)
    print(f"{len(entries) - len(missed)} of {len(entries)} entries named by the verdict")
    assert not missed, "entries the ledger says a contract sees, not named by the verdict:\n" + "\n".join(missed)
