"""Cells of the PR comment (Markdown), shared by its sections."""

from __future__ import annotations


def esc(s: str) -> str:
    """Text safe in a Markdown table cell: pipes escaped, one line."""
    return s.replace("|", "\\|").replace("\n", " ")


def more(shown: int, total: int, what: str) -> list[str]:
    """The line saying how many rows a cut left out (none when nothing was)."""
    return [f"- … {total - shown} more {what} (all in upgrade-report.html and upgrade-summary.json)"] \
        if total > shown else []
