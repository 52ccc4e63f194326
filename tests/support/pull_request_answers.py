"""What the pull-request check's answer must be (tests/integration/test_pull_request_flow.py): the oracle's
(support.pull_request_oracle), read from what the command printed and the verdict it published."""

from __future__ import annotations

import re

from support import pull_request_oracle as oracle
from support.pull_request_driver import Layout, Said

JUDGING = "judging that bump, as the pull-request check does"  # plain `upgrade`'s first line on a bump branch


def judgement(said: Said) -> tuple:
    """What a verdict answers a reviewer: exit status, headline, own families, each own row's mark and cause."""
    s = said.summary
    rows = sorted((r["change"]["check_id"], r["change"]["mark"], r["cause"]) for r in s["own_changes"])
    return said.code, s["exit_status"], s["headline"], s["own_families"], rows


def disagreement(out: str, layout: Layout) -> list[str]:
    """The lines naming pins files that disagree."""
    return [line.strip() for line in out.splitlines() if f" but {layout.pins_file}:" in line]


def assert_answer(said: Said, want: oracle.Expected, head: oracle.Branch, layout: Layout) -> None:
    """The check's answer is the oracle's."""
    shown = f"{said.out[-3000:]}\nexpected {want}"
    assert "upgrade-harness lock" not in said.out, shown
    if want.refused:
        assert said.code == 2 and said.summary is None, f"exit status {said.code}, the oracle's 2 (refused)\n{shown}"
        declared, pinned = head.declared["optax"], head.pins["optax"]
        written = layout.pin_written.format(package="optax", version=declared)
        assert re.search(rf"{re.escape(layout.declared)}:\d+: {re.escape(written)}, but "
                         rf"{re.escape(layout.pins_file)}:\d+ {layout.verb} optax {re.escape(pinned)}: re-lock with",
                         said.out), shown
        return
    s = said.summary
    assert said.code == s["exit_status"] == want.exit_status, \
        f"exit status {said.code} (published {s['exit_status']}), the oracle's {want.exit_status}\n{shown}"
    families = s["own_families"]
    assert sorted(i for f in families for i in f["accepted"]) == sorted(want.accepted), shown
    assert sorted(i for f in families for i in f["failing_on_baseline"]) == sorted(want.failing_on_baseline), shown
    assert sorted(i for f in families for i in f["changed"]) == sorted(want.changed), shown
    rows = {r["change"]["check_id"]: r for r in s["own_changes"]}
    for check in want.accepted:
        assert rows[check]["change"]["mark"] == "accepted", shown
    for check, said_cause in want.causes.items():
        assert rows[check]["cause"] == said_cause, f"{check}: {rows[check]['cause']!r}\n{shown}"
    listed = sorted((v["family"], v["key"]) for v in (s["golden_changes"] or {}).get("values", []))
    assert listed == sorted(want.rerecorded), f"golden values listed {listed}, the oracle's {want.rerecorded}\n{shown}"
    headline = s["headline"]
    strict = bool(want.unexplained) and not (want.failing_on_baseline or want.changed)
    assert headline.startswith("RE-RECORDED") == strict, f"re-recorded without a reason: {want.unexplained}\n{shown}"
    headline = headline.split("without a reason; ", 1)[1] if strict else headline
    if want.failing_on_baseline:
        assert "on the baseline itself" in headline and "your code" in headline, \
            f"the headline does not say the team's code changed: {headline}\n{shown}"
    elif want.changed:
        assert headline.startswith("CHANGED"), shown
    else:
        assert headline.startswith("OK"), shown
        assert ("accepted on this branch" in headline) == bool(want.accepted), shown
        if want.accepted:
            assert f"{len(want.accepted)} accepted on this branch ({want.accepted[0]}" in headline, shown
