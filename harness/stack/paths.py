"""Where the host side keeps things: the checkout, reports, lock files. Read as paths.REPORTS at call
time, so a test can point them elsewhere."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
LOCKS = ROOT / "locks"
ADHOC_LOCKS = ROOT / ".nox" / "adhoc-locks"
CONTRACTS = ROOT / "tests" / "contracts"
