"""The HTML report: one self-contained page whose plots render in headless Chromium and show what changed.

Here: the tests of one module, in-process (no subprocess, no pytester run); the others are in
tests/integration/test_html.py."""

import xml.etree.ElementTree as ET

import pytest

from harness.verdict import svg


NS = {"s": "http://www.w3.org/2000/svg"}


def test_integer_steps_get_integer_ticks():
    chart = ET.fromstring(svg.lines("t", [svg.Curve("baseline", list(range(11)), [0.5] * 5 + [1.0] * 6, 0)],
                                    "step", "lr"))
    xticks = [t.text for t in chart.iterfind(".//s:text[@class='tick xtick']", NS)]
    assert xticks == ["0", "2", "4", "6", "8", "10"]  # the old axis: 0, 2.5, 5, 7.5, 10
    yticks = [float(t.text) for t in chart.iterfind(".//s:text[@class='tick ytick']", NS)]
    assert yticks == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


@pytest.mark.parametrize("lo, hi, integer, expected", [
    (0, 64, True, [0, 10, 20, 30, 40, 50, 60]),
    (0, 3, True, [0, 1, 2, 3]),
    (0.0375, 1.0375, False, [0.2, 0.4, 0.6, 0.8, 1.0]),
    (-1, 2, True, [-1, 0, 1, 2]),
])
def test_ticks_are_nice_numbers(lo, hi, integer, expected):
    assert svg.nice_ticks(lo, hi, integer) == pytest.approx(expected)


def test_long_labels_are_shortened_with_the_full_text_as_tooltip():
    name, title = "test_" + "very_long_parameter_" * 10, "family: " + "title " * 40
    rows = [svg.DotRow(name, [svg.Dot(0.5, "circle", "within", "tip")]), svg.DotRow("test_short", [None])]
    chart = ET.fromstring(svg.error_dots(title, rows, ["baseline"], [("within tolerance", "circle")]))
    long_row, short_row = chart.iterfind(".//s:text[@class='row']", NS)
    assert long_row.find("s:title", NS).text == name and len(long_row.text) < len(name)
    assert short_row.text == "test_short" and short_row.find("s:title", NS) is None
    assert float(long_row.get("x")) - len(long_row.text) * 10 * 0.6 > 0  # monospace: the shown part fits
    shown = chart.find(".//s:text[@class='title']", NS)
    assert shown.find("s:title", NS).text == title
    assert len(shown.text) * 13 * 0.6 < float(chart.get("width"))
