"""A team a year behind: jax/jaxlib 0.7.1, optax 0.2.5, flax 0.11.0, every built-in family (`builtin = "all"`).
The built-in contracts were written against the tool's baseline (jax 0.11.2, optax 0.2.6, flax 0.12.12): on
this stack some call what it lacks (not applicable: named and counted), some raise inside its libraries or
break a statement (its departures, recorded by an accepted recording). The rest records, and a bump to jax
0.8.0 gets a verdict. The installed tool in a team's project, as docs/your-own-contracts.md ("An older
stack") tells it; minutes on 2 cores: the nightly runs it (`nox -s sequences`).
"""

from __future__ import annotations

import json
import shutil

from support.team_run import EXAMPLE, run_tool, said

OLDER = "jax==0.7.1\njaxlib==0.7.1\noptax==0.2.5\nflax==0.11.0\nnumpy==2.5.5\n"


def test_a_team_on_an_older_stack_records_the_builtins_and_judges_a_bump(tool, checkout_copy, tmp_path):
    project = tmp_path / "team"
    shutil.copytree(EXAMPLE / "regressor", project / "regressor", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "requirements.txt").write_text(OLDER)
    done = run_tool(tool, project, "init", "--builtin", "all")
    assert done.returncode == 0, said(done)

    # Its departures need accepting (a plain recording refuses them and says how: test_raised_departure.py);
    # the recording runs the built-in suite natively and on each host this machine emulates: cold, 4 suites.
    recorded = run_tool(tool, project, "golden", "--record-builtin", "--accept-changes", "--reason",
                        "our stack: jax 0.7.1, optax 0.2.5, flax 0.11.0", timeout=3600)
    assert recorded.returncode == 0, said(recorded)
    assert "checks not applicable on this stack" in recorded.stdout, said(recorded)
    assert "optax 0.2.5 has no optax.freeze" in recorded.stdout, said(recorded)
    assert list((project / "golden" / "builtin").glob("*.json")), said(recorded)

    judged = run_tool(tool, project, "upgrade", "--candidate", "jax==0.8.0 jaxlib==0.8.0", timeout=3600)
    assert judged.returncode in (0, 1), said(judged)  # a verdict, whichever it is
    summary = json.loads((project / "reports" / "upgrade-summary.json").read_text())
    marks = {c["mark"] for e in summary["entries"] if e["name"] == "candidate" for c in e["changes"]}
    assert "not on the baseline's stack" in marks, sorted(marks)
    checkout_copy.assert_unchanged()
