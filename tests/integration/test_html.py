"""The HTML report: one self-contained page whose plots render in headless Chromium and show what changed."""

import copy
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html import escape, unescape

import numpy as np
import pytest

from harness.model import report_io
from harness.verdict import compare, html
from unit.verdict.test_html import NS  # noqa: F401 (shared with it)

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _check(doc, name):
    return next(c for c in doc["checks"] if c["id"] == f"demo/{name}")


def _fail(doc, name, **comparison):
    check = _check(doc, name)
    check.update(outcome="failed", message=f"{name} failed")
    check["comparisons"][0].update(passed=False, message=f"{name}: differs", **comparison)


@pytest.fixture
def make_page(recorded_suite, tmp_path):
    """make_page(change_candidate): the page of the synthetic suite's baseline against a candidate that
    `change_candidate(doc)` edits; the baseline keeps a changed "lr" and an unchanged "momentum" curve."""
    _, recorded = recorded_suite()

    def make(change_candidate=lambda doc: None):
        base = copy.deepcopy(recorded)
        _check(base, "test_golden_value")["series"] = {"lr": {"x": [0, 5, 10], "y": [0.1, 0.05, 0.0]},
                                                       "momentum": {"x": [0, 10], "y": [0.9, 0.9]}}
        cand = copy.deepcopy(base)
        cand["entry"]["name"] = "candidate"
        _check(cand, "test_golden_value")["series"]["lr"]["y"] = [0.1, 0.06, 0.0]
        change_candidate(cand)
        base, cand = report_io.parse(base), report_io.parse(cand)
        verdict = compare.judge(base, [cand])
        path = tmp_path / "upgrade-report.html"
        path.write_text(html.page(verdict, [cand]))
        return path, verdict

    return make


@pytest.fixture
def page_file(make_page):
    return make_page(lambda doc: _fail(doc, "test_golden_value", tolerance_used=3.0))[0]


def _svgs(text: str) -> list[ET.Element]:
    """Every inline chart, parsed: the SVG is well-formed XML even inside the HTML page."""
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", text, re.S)]


def _dots(text: str) -> list[tuple[str, str, str, float, ET.Element]]:
    """(kind, entry index, tooltip, x of the marker, the marker) of every dot on the tolerance charts."""
    found = []
    for chart in _svgs(text):
        for g in chart.iterfind(".//s:g[@class='dot']", NS):
            shape = g[1]
            x = float(shape.get("cx") or re.match(r"M([-\d.]+)", shape.get("d")).group(1))
            found.append((g.get("data-kind"), g.get("data-entry"), g.find("s:title", NS).text, x, shape))
    return found


def _column_x(text: str, label: str) -> float:
    """Where an edge column ("0", "> 100x", "no ulp measure") sits: its label above the rows."""
    for chart in _svgs(text):
        for t in chart.iterfind(".//s:text[@class='tick']", NS):
            if t.text == label:
                return float(t.get("x"))
    raise AssertionError(f"no column labelled {label!r}")


def test_page_is_self_contained_with_both_kinds_of_plot(page_file):
    text = page_file.read_text()
    assert text.count('<polyline class="curve"') == 3  # lr: baseline and candidate; momentum: one, unchanged
    assert 'class="dot"' in text and "tolerance" in text
    assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_changed_curve_comes_first_with_its_difference_in_float32_ulps(page_file):
    text = page_file.read_text()
    changed, unchanged = text.index("Changed curves"), text.index("<details id='unchanged-curves'>")
    diff = text.index('<polyline class="diff"')
    assert changed < diff < unchanged  # the difference panel sits with the changed curve, before the folded ones
    assert text.index('data-label="baseline = candidate (identical)"') > unchanged  # momentum, folded away
    moved = int(np.float32(0.06).view(np.int32)) - int(np.float32(0.05).view(np.int32))
    assert f"candidate, step 5: +{moved} float32 ulps" in text
    assert "candidate, step 0: +0 float32 ulps" in text


def test_failed_beyond_tolerance_and_unchanged_values_have_their_own_markers(page_file):
    dots = _dots(page_file.read_text())
    value = [d for d in dots if "test_golden_value" in d[2]]
    assert {(kind, entry) for kind, entry, *_ in value} == {("within", "0"), ("beyond", "1")}
    assert value[0][4].tag.endswith("circle") and value[1][4].tag.endswith("path")
    assert "3 x the tolerance" in next(d[2] for d in value if d[0] == "beyond")


def test_failed_exact_and_error_contract_checks_appear_as_markers(make_page):
    """Checks with no tolerance_used (an exact comparison, an error contract) used to be left off the chart."""
    def change(doc):
        _fail(doc, "test_golden_counter")
        _fail(doc, "test_error", expected="ValueError", observed=None)

    path, _ = make_page(change)
    text = path.read_text()
    dots = _dots(text)
    exact = [d for d in dots if "test_golden_counter" in d[2]]
    error = [d for d in dots if "test_error" in d[2]]
    assert [(k, e) for k, e, *_ in exact] == [("exact", "1")] and "exact mismatch" in exact[0][2]
    assert [(k, e) for k, e, *_ in error] == [("error", "1")] and "now silent" in error[0][2]
    assert exact[0][3] == error[0][3] == _column_x(text, "no ulp measure")
    assert "exact mismatch" in text and "error contract changed" in text  # both in the legend


@pytest.mark.parametrize("failure, kind", [
    (dict(max_abs_err=float("inf"), tolerance_used=1e9), "nonfinite"),  # NaN observed: an infinite error
    (dict(tolerance_used=None), "beyond"),  # a failed bound, say: beyond its tolerance, by no measured ratio
])
def test_failures_without_a_ratio_sit_in_the_no_measure_column(make_page, failure, kind):
    path, _ = make_page(lambda doc: _fail(doc, "test_reference", **failure))
    text = path.read_text()
    found = [(k, x) for k, entry, tip, x, _ in _dots(text) if "test_reference" in tip and entry == "1"]
    assert found == [(kind, _column_x(text, "no ulp measure"))]


def test_zero_and_capped_errors_sit_at_labelled_edges_not_clamped_silently(make_page):
    path, _ = make_page(lambda doc: _fail(doc, "test_golden_value", tolerance_used=1e9))
    text = path.read_text()
    value = {kind: (tip, x) for kind, _, tip, x, _ in _dots(text) if "test_golden_value" in tip}
    zero, over = _column_x(text, "0"), _column_x(text, "> 100x")
    assert value["within"][1] == zero and "largest error 0 x the tolerance" in value["within"][0]  # its own golden
    assert value["beyond"][1] == over and ">= 1e9 (capped)" in value["beyond"][0]
    inside = [x for kind, _, _, x, _ in _dots(text) if kind == "within" and x != zero]
    assert inside and all(zero < x < over for x in inside)  # the rest on the log axis between the edges


def test_entries_with_the_same_value_do_not_hide_each_other(page_file):
    chart = next(c for c in _svgs(page_file.read_text()) if c.find(".//s:g[@class='dot']", NS) is not None)
    same = [g for g in chart.iterfind(".//s:g[@class='dot']", NS) if "test_reference" in g.find("s:title", NS).text]
    assert len(same) == 2  # baseline and candidate, both within tolerance at the same value
    (a, b) = [g[1] for g in same]
    assert a.get("cx") == b.get("cx") and a.get("cy") != b.get("cy") and a.get("fill") != b.get("fill")
    legend = [t.text for t in chart.iterfind(".//s:text[@class='legend']", NS)]
    assert legend[:2] == ["baseline", "candidate"]


def test_legends_show_line_swatches_in_each_entrys_colour_and_dash(page_file):
    chart = next(c for c in _svgs(page_file.read_text()) if c.find(".//s:polyline[@class='curve']", NS) is not None)
    swatches = {(s.get("stroke"), s.get("stroke-dasharray")) for s in chart.iterfind(".//s:line[@class='swatch']", NS)}
    curves = {(p.get("stroke"), p.get("stroke-dasharray")) for p in chart.iterfind(".//s:polyline", NS)}
    assert swatches == curves and len(curves) == 2


def _chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("headless Chromium is needed for this check: `nox -s tests` installs Debian's chromium "
                    "package with apt-get; install it (apt-get install chromium) and run again")
    return found


def test_page_renders_in_headless_chromium_with_plots_visible(make_page, tmp_path):
    page_file, verdict = make_page(lambda doc: _fail(doc, "test_golden_value", tolerance_used=3.0))
    chromium = _chromium()
    common = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", page_file.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'id="headline"' in dom.stdout and escape(verdict.headline, quote=False) in dom.stdout
    assert dom.stdout.count("<polyline") == 4  # lr: two curves and their difference; momentum: one curve
    assert "<circle" in dom.stdout
    screenshot = page_file.with_suffix(".png")
    shot = subprocess.run([*common, "--window-size=1200,1600", f"--screenshot={screenshot}", page_file.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.stat().st_size > 20_000  # a rendered page with charts, not a blank one


# The right edge of the page's widest cell, heading or chart, and the document's own scroll width.
WIDTH_PROBE = ("<script>const edges = [...document.querySelectorAll('body *')]"
               ".map(e => e.getBoundingClientRect().right);"
               "document.body.setAttribute('data-scroll-width', String(Math.ceil(Math.max("
               "document.documentElement.scrollWidth, ...edges))));</script></body>")


def _width(page: str, tmp_path) -> int:
    """The page's width in a 1,400-pixel window of headless Chromium."""
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", WIDTH_PROBE, 1))
    common = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900"]
    dom = subprocess.run([*common, "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    return int(re.search(r'data-scroll-width="(\d+)"', dom.stdout).group(1))


def test_the_default_verdicts_page_fits_a_1400_pixel_window(tmp_path):
    """The default upgrade's verdict (the real reports of optax 0.2.6 -> 0.2.8), in a 1,400-pixel window:
    nothing scrolls sideways, so the size column of the table of changes is on screen."""
    from support import upgrade_reports

    reports = {name: report_io.parse(upgrade_reports.load(name), name) for name in upgrade_reports.ENTRIES}
    others = [reports[n] for n in upgrade_reports.ENTRIES[1:]]
    assert _width(html.page(compare.judge(reports["baseline"], others), others), tmp_path) <= 1400


def _long_id_page() -> tuple[str, str]:
    """The default verdict with one changed contract renamed longer still (a name with no space to break at),
    and its id."""
    from support import upgrade_reports

    docs = {name: upgrade_reports.load(name) for name in ("baseline", "candidate")}
    changed = next(c["id"] for c in docs["candidate"]["checks"] if c["outcome"] == "failed")
    family, name = changed.split("[")[0].split("/")
    long_name = name + "_" + "_".join(["with_a_long_descriptive_part"] * 6)
    for doc in docs.values():
        for check in doc["checks"]:
            if check["id"].split("[")[0] == f"{family}/{name}":
                check["id"] = check["id"].replace(name, long_name)
                check["nodeid"] = check["nodeid"].replace(name, long_name)
    base, cand = (report_io.parse(docs[n], n) for n in ("baseline", "candidate"))
    return html.page(compare.judge(base, [cand]), [cand]), f"{family}/{long_name}"


def test_a_long_unbroken_name_wraps_in_its_cell(tmp_path):
    """A contract or leaf name with no space to break at (optimizer/opt_state/inner_opt_state/1/... is 64
    characters) wraps inside its cell rather than pushing the size column off-screen: the default verdict
    with one changed contract renamed longer still."""
    from harness.verdict.html_cells import breakable

    page, long_id = _long_id_page()
    assert f"<code>{breakable(long_id)}</code>" in page
    assert _width(page, tmp_path) <= 1400


# Every table cell's lines, measured character by character (its <details> opened, as a reader opens them):
# the header cells that take more than one line, and the places a cell's text breaks between two characters
# of one word (a letter or digit, then a letter, digit or underscore), each with the text around it.
BREAK_PROBE = r"""<script>
document.querySelectorAll('details').forEach(d => d.open = true);
const wrapped = [], inside = [];
for (const cell of document.querySelectorAll('th, td')) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let lines = 1, top = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let previous = null;
    for (let i = 0; i < n.length; i++) {
      const range = document.createRange(); range.setStart(n, i); range.setEnd(n, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      if (top !== null && rect.top > top + 2) {
        lines++;
        if (previous !== null && /[A-Za-z0-9]/.test(previous) && /\w/.test(n.data[i]))
          inside.push(n.data.slice(Math.max(0, i - 20), i) + '|' + n.data.slice(i, i + 10));
      }
      previous = n.data[i]; top = rect.top;
    }
  }
  if (cell.tagName === 'TH' && lines > 1) wrapped.push(cell.textContent);
}
document.body.setAttribute('data-breaks', JSON.stringify({wrapped, inside}));
</script></body>"""


@pytest.mark.parametrize("window", [1400, 1000])
def test_no_word_breaks_inside_a_table_cell_and_headers_take_one_line(tmp_path, window):
    """Found: the table's columns were squeezed until words broke mid-word ("baselin e", "si z e"). In the
    default verdict with a long check id, in a 1,400- and a 1,000-pixel window, with every <details> open:
    each header cell is one line, and no cell breaks inside a word (a long id wraps after / [ - _ :)."""
    page, _ = _long_id_page()
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", BREAK_PROBE, 1))
    common = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={window},900"]
    dom = subprocess.run([*common, "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = json.loads(unescape(re.search(r'data-breaks="([^"]*)"', dom.stdout).group(1)))
    assert page.count("<th>") >= 10 and page.count("<details>") >= 5  # what is measured is there
    assert found == {"wrapped": [], "inside": []}
