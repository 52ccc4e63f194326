"""The words a check not applicable on its stack is skipped with, which the recording and the verdict count.

A built-in check calling what the stack under test lacks (a callable, a parameter, a module: found by
harness.contract.stack_lacks) is skipped "not on this stack: optax 0.2.5 has no optax.freeze"; like a
platform's refusal (harness.platforms.NOT_HERE) it is named and counted, never a failure. On the baseline it
says the check has nothing to judge on that stack; on a candidate whose baseline ran it, the API went away.
"""

from __future__ import annotations

NOT_ON_STACK = "not on this stack"  # the start of the skip's reason


def said(message: str | None) -> bool:
    """A skipped check's message says the stack lacks what it calls (pytest prefixes it "Skipped: ")."""
    return NOT_ON_STACK in (message or "")


def what(message: str | None) -> str:
    """What the stack lacks, from such a message ("optax 0.2.5 has no optax.freeze")."""
    text = message or ""
    return text[text.index(NOT_ON_STACK) + len(NOT_ON_STACK):].lstrip(": ").strip() if said(text) else text
