"""A contract module that does not import: one failed check, its message naming the file and line where Python
stopped (a syntax error's own line, which pytest's last lines leave out) and what it said."""

from __future__ import annotations

import pytest

from harness.contract.outcome import collection_failure


def _report(tmp_path, pytester_source: str):
    """pytest's own collection report of a module holding `pytester_source`, collected in-process."""
    (tmp_path / "contracts").mkdir()
    module = tmp_path / "contracts" / "test_broken.py"
    module.write_text(pytester_source)
    found = []

    class Keep:
        def pytest_collectreport(self, report):
            if report.failed:
                found.append(report)

    pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--collect-only", "--rootdir", str(tmp_path),
                 str(module)], plugins=[Keep()])
    (report,) = found
    return report


@pytest.mark.parametrize("source, line, said", [
    ("import os\n\ndef test_a(check:\n    pass\n", 3, "SyntaxError: '(' was never closed"),
    ("x = 1\nif x:\nreturn_value = 2\n", 3, "IndentationError: expected an indented block after 'if' statement on "
                                           "line 2"),
])
def test_a_syntax_error_is_named_at_its_file_and_line(tmp_path, source, line, said):
    report = _report(tmp_path, source)
    check = collection_failure(report, [tmp_path / "contracts"], tmp_path)
    assert check.message.startswith(f"contracts/test_broken.py could not be collected: contracts/test_broken.py:"
                                    f"{line}: {said}"), check.message
    assert check.exception in ("SyntaxError", "IndentationError") and check.own


def test_an_import_error_keeps_its_message(tmp_path):
    report = _report(tmp_path, "import optax_gone_after_the_bump\n")
    check = collection_failure(report, [tmp_path / "contracts"], tmp_path)
    assert "No module named 'optax_gone_after_the_bump'" in check.message
