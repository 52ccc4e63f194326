"""Where the host side keeps things: the checkout, reports, lock files. Read as paths.REPORTS at call
time, so a test can point them elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

from harness import env_vars

ROOT = Path(__file__).resolve().parents[2]
REPORTS = Path(os.environ.get(env_vars.REPORTS_DIR) or ROOT / "reports")  # `upgrade -- --reports DIR`
LOCKS = ROOT / "locks"
ADHOC_LOCKS = ROOT / ".nox" / "adhoc-locks"
CONTRACTS = ROOT / "tests" / "contracts"
