"""The HTML report: one self-contained page whose plots render in headless Chromium."""

import copy
import shutil
import subprocess

import pytest

from harness.model import report_io
from harness.verdict import compare, html

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def page_file(recorded_suite, tmp_path):
    _, base = recorded_suite()
    base = copy.deepcopy(base)
    check = next(c for c in base["checks"] if c["id"] == "demo/test_golden_value")
    check["series"] = {"lr": {"x": [0, 5, 10], "y": [0.1, 0.05, 0.0]}}
    cand = copy.deepcopy(base)
    cand["entry"]["name"] = "candidate"
    cand_check = next(c for c in cand["checks"] if c["id"] == "demo/test_golden_value")
    cand_check["series"]["lr"]["y"] = [0.1, 0.06, 0.0]
    cand_check["comparisons"][0].update(tolerance_used=3.0, passed=False)
    cand_check.update(outcome="failed", message="golden:value: 1 of 2 elements outside tolerance")
    path = tmp_path / "upgrade-report.html"
    base, cand = report_io.parse(base), report_io.parse(cand)
    path.write_text(html.page(compare.judge(base, [cand]), [cand]))
    return path


def test_page_is_self_contained_with_both_kinds_of_plot(page_file):
    text = page_file.read_text()
    assert text.count('<polyline class="curve"') == 2  # baseline and candidate curves of one series
    assert 'class="dot"' in text and "tolerance" in text
    assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def _chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("headless Chromium is needed for this check: `nox -s tests` installs Debian's chromium "
                    "package with apt-get; install it (apt-get install chromium) and run again")
    return found


def test_page_renders_in_headless_chromium_with_plots_visible(page_file, tmp_path):
    chromium = _chromium()
    common = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", page_file.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'id="headline"' in dom.stdout and "REGRESSED" in dom.stdout
    assert dom.stdout.count("<polyline") == 2 and "<circle" in dom.stdout
    screenshot = page_file.with_suffix(".png")
    shot = subprocess.run([*common, "--window-size=1200,1600", f"--screenshot={screenshot}", page_file.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.stat().st_size > 20_000  # a rendered page with charts, not a blank one
