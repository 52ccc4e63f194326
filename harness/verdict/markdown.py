"""The verdict as a PR comment: under COMMENT_BUDGET characters, the decision first.

Each section (harness.verdict.sections) renders its lines within the page's cuts. When the page is too
long, the unchanged-checks table goes first, then the per-case lists and the attribution table are cut,
each cut saying how many rows it left out; the HTML page and upgrade-summary.json always hold everything.
"""

from __future__ import annotations

from harness.model.verdict import Verdict
from harness.verdict.render import exit_meaning
from harness.verdict.section import Cuts, Judged, Section
from harness.verdict.sections import SECTIONS

COMMENT_BUDGET = 20_000  # a reviewer's one-minute read; GitHub's own limit is 65,536

_CUTS = [Cuts(), Cuts(unchanged=False), Cuts(False, 60, 40), Cuts(False, 20, 15), Cuts(False, 0, 0)]


def _page(verdict: Verdict, shown: list[tuple[Section, object]], cuts: Cuts, links: str) -> str:
    out = [line for section, rows in shown for line in section.markdown(rows, cuts)]
    out += ["", f"Exit status {verdict.exit_status} ({exit_meaning(verdict)})." + (f" {links}" if links else "")]
    return "\n".join(out) + "\n"


def markdown(verdict: Verdict, links: str = "") -> str:
    """The verdict for a PR comment, within COMMENT_BUDGET: the longest sections are cut first."""
    judged = Judged(verdict)
    shown = [(section, section.rows(judged)) for section in SECTIONS]  # each section's rows, once
    for cuts in _CUTS:
        page = _page(verdict, shown, cuts, links)
        if len(page) <= COMMENT_BUDGET:
            return page
    note = "\n\n… (cut to fit a PR comment: the full verdict is in upgrade-report.html and upgrade-summary.json)\n"
    return page[:COMMENT_BUDGET - len(note)].rsplit("\n", 1)[0] + note
