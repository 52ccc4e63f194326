"""Golden values that differ, kept until the end of a check so its failure names every one of them.

A loop such as ``for step, loss in enumerate(losses): check.golden(f"loss/step{step}", loss)`` used to
stop at the first step that differed; now the check goes on, and fails at the end of the test call
with a count and each key's message, like soft assertions (harness.contract.plugin raises it). Each
mismatch keeps the contract's own line, so pytest's output points there and not into the harness.
Inside a Hypothesis property a mismatch still raises at once: shrinking needs the exception.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys

from harness.model.report import Comparison, Tolerance


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One golden comparison that failed, and the contract line that made it."""

    message: str
    path: str
    lineno: int
    function: str
    in_ulps: bool = False  # a golden value judged within its ulps (in_ulps), which another host may round otherwise

    @classmethod
    def here(cls, message: str, in_ulps: bool = False) -> Mismatch:
        """The mismatch at the innermost frame pytest would show: the first one not hidden by
        `__tracebackhide__` (the `check` API hides its own)."""
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_locals.get("__tracebackhide__"):
            frame = frame.f_back
        return cls(message, frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, in_ulps)

    def location(self) -> str:
        """pytest's way of naming the line: the path relative to the working directory, when it is below it."""
        path = os.path.relpath(self.path) if self.path.startswith(os.getcwd() + os.sep) else self.path
        return f"{path}:{self.lineno}: in {self.function}"


def in_ulps(comparison: Comparison) -> bool:
    """Whether a comparison is a golden value judged within ulps, the only kind another host's rounding can move a
    few ulps: not an error type, a fact, a dtype or an exact value, nor another entry's values on this machine
    (`recorded:`)."""
    return comparison.label.startswith("golden:") and isinstance(comparison.tolerance, Tolerance)


def host_note(store, family, any_in_ulps: bool) -> str | None:
    """The note golden mismatches carry when their values were recorded on a CPU with other numerics features
    (GoldenStore.host_note), when one of them is a value judged in ulps (`any_in_ulps`): the note is about ulps."""
    return store.host_note(family) if any_in_ulps else None


def summary(mismatches: list[Mismatch], after: BaseException | None = None, note: str | None = None) -> str:
    """The check's failure message for the report: one mismatch's message alone (as when it raised at
    once), several as a count and then each message; then what ended the test, if it raised; then the
    note (the golden values were recorded on another CPU), if any."""
    if len(mismatches) == 1:
        text = mismatches[0].message
    else:
        text = f"{len(mismatches)} golden values differ from their recording:\n" + "\n".join(m.message for m in mismatches)
    if after is not None:
        text += f"\nafter {'it' if len(mismatches) == 1 else 'them'}, the check raised {type(after).__name__}: {after}"
    return text + (f"\n{note}" if note else "")


def display(mismatches: list[Mismatch], after: str | None = None, note: str | None = None) -> str:
    """pytest's failure text: each mismatch at its contract line (source shown), then the exception that
    ended the test, if any, as pytest rendered it."""
    blocks = ["1 golden value differs from its recording:" if len(mismatches) == 1 else
              f"{len(mismatches)} golden values differ from their recording (the check went on to compare them all):"]
    for mismatch in mismatches:
        source = linecache.getline(mismatch.path, mismatch.lineno).strip()
        blocks.append(f"{mismatch.location()}\n    {source}\nE   {mismatch.message}")
    if after is not None:
        blocks.append(f"after {'it' if len(mismatches) == 1 else 'them'}, the check raised:\n{after}")
    return "\n\n".join(blocks + ([note] if note else []))


def in_hypothesis() -> bool:
    """Whether a Hypothesis property is running (it needs the exception to shrink, not a mismatch kept)."""
    from hypothesis import currently_in_test_context

    return currently_in_test_context()
