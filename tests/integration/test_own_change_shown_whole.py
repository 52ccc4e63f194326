"""A team's own change shown whole: a code change makes one of the team's checks fail against eleven golden values
(on the baseline and the candidate alike: the same code), and the PR comment and the HTML page each show every
differing key with its before → after in numbers, never text cut mid-number, its size and the cause. The page is
read as headless Chromium renders it (its DOM after layout) and screenshotted."""

from __future__ import annotations

import copy
import re
import subprocess
from html import unescape

from harness.model import report_io
from harness.model.enums import BuiltinMode, Mark
from harness.verdict import compare, html, markdown
from integration.test_html import CHROMIUM_FLAGS, _chromium
from support import upgrade_reports

CHECK = "training/test_training_trajectory[multisteps]"


def _code_changed(docs: dict[str, dict]) -> dict[str, dict]:
    """The training family the team's own; its trajectory check failing every golden value on every entry."""
    docs = copy.deepcopy(docs)
    for doc in docs.values():
        doc["own_families"] = ["training"]
        for check in doc["checks"]:
            if check["family"] == "training":
                check["own"] = True
            if check["id"] != CHECK:
                continue
            check["outcome"], check["message"] = "failed", "golden values differ (a long message, cut elsewhere)"
            for comparison in check["comparisons"]:
                if not comparison["label"].startswith("golden:") or comparison["dtype"] != "float32":
                    continue
                expected = comparison["expected"]
                index = len(expected) - 1
                moved = expected[index] * 1.0000763 + 1e-7  # hundreds of float32 ulps
                comparison.update(passed=False, mismatched=1, tolerance_used=80.0, max_rel_err=7.6e-5,
                                  worst={"index": [index], "expected": expected[index], "observed": moved,
                                         "ulps": 640.0})
    return docs


def _expected_cells(docs: dict[str, dict]) -> list[tuple[str, str, str]]:
    """(key, before, after) of every golden value the check fails, from the report itself."""
    check = next(c for c in docs["candidate"]["checks"] if c["id"] == CHECK)
    return [(c["label"].removeprefix("golden:"), f"[{c['worst']['index'][0]}] {c['worst']['expected']:.9g}",
             f"[{c['worst']['index'][0]}] {c['worst']['observed']:.9g}") for c in check["comparisons"]
            if not c["passed"]]


def test_every_differing_key_is_shown_with_numbers_in_the_comment_and_the_page(tmp_path):
    docs = _code_changed({name: upgrade_reports.load(name) for name in upgrade_reports.ENTRIES})
    parsed = [report_io.parse(docs[n], n) for n in upgrade_reports.ENTRIES]
    verdict = compare.judge(parsed[0], parsed[1:], builtin=BuiltinMode.REPORT)
    assert verdict.own_changes[0].change.mark == Mark.FAILING_BOTH
    cells = _expected_cells(docs)
    assert len(cells) == 11  # its float32 golden values (the counters, int64, left as they are)

    comment = markdown.markdown(verdict)
    rows = [line for line in comment.splitlines() if f"`{CHECK}`" in line]
    for key, before, after in cells:  # a row per key, its numbers whole
        row = next(r for r in rows if f"| `{key}` |" in r)
        assert f"| {before} → {after} | 640 ulp of float32" in row, row
        assert "your code or golden values since recording" in row
    assert "…" not in "".join(rows)

    page = tmp_path / "upgrade-report.html"
    page.write_text(html.page(verdict, parsed[1:]))
    common = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    own = dom.stdout[dom.stdout.index("id=\"own\""):]
    table = unescape(re.sub(r"<wbr>", "", own[:own.index("</table>")]))
    shown = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", table)]
    for key, before, after in cells:
        at = shown.index(key)
        assert shown[at + 1:at + 3] == [f"{before} → {after}", "640 ulp of float32, 0.0076% max rel err, 1 of "
                                        f"{shown[at + 2].rsplit(' of ', 1)[1]}"], shown[at - 2:at + 4]
    screenshot = tmp_path / "own-change.png"
    shot = subprocess.run([*common, "--window-size=1400,2400", f"--screenshot={screenshot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0 and screenshot.stat().st_size > 20_000, shot.stderr[-2000:]


def test_the_teams_family_comes_first_in_the_plots():
    """The tolerance plots and the curves show the team's own family before the ~70 built-in ones."""
    docs = _code_changed({name: upgrade_reports.load(name) for name in upgrade_reports.ENTRIES})
    parsed = [report_io.parse(docs[n], n) for n in upgrade_reports.ENTRIES]
    page = html.page(compare.judge(parsed[0], parsed[1:], builtin=BuiltinMode.REPORT), parsed[1:])
    titles = re.findall(r"([a-z_]+(?: \(built-in\))?): largest error / tolerance per check", page)
    assert titles[0] == "training" and len(titles) > 5, titles
    curves = page[page.index("id='changed-curves'"):]
    shown = [m for m in re.findall(r"(?:accumulation|activations|clipping|compositions|losses|masks|optimizers|"
                                   r"schedules|shapes|training|wrappers)/test_[a-z_]+", curves)]
    assert shown and shown[0].startswith("training/"), shown[:5]
