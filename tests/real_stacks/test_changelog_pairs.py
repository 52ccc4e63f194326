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

from support.changelog_pairs import entries_between, unnamed


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
