"""Turning what pytest saw of one check into the report's CheckRecord: outcome, message, errors.

A contract failure, an unreadable golden value, a skip, a crash and a module that does not import
each get their own outcome and a message that says which, so the verdict can mark them apart.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from harness.contract import replay
from harness.contract.checks import Check, ContractFailure
from harness.contract.families import check_id, family, is_own
from harness.contract.golden import GoldenProblem
from harness.model.enums import CheckKind, ComparisonKind, Outcome
from harness.model.report import CheckRecord

_COMPARED_NOTHING = "the check compared nothing: a check that cannot fail is a defect"
# The check's kind is its most telling comparison, in this order.
_KIND_ORDER = ((ComparisonKind.ERROR_CONTRACT, CheckKind.ERROR_CONTRACT), (ComparisonKind.GOLDEN, CheckKind.GOLDEN),
               (ComparisonKind.REFERENCE, CheckKind.REFERENCE), (ComparisonKind.EQUIVALENCE, CheckKind.REFERENCE),
               (ComparisonKind.EXACT, CheckKind.EXACT), (ComparisonKind.BOUND, CheckKind.EXACT))


def find(exc, cls):
    """exc itself, or the first exception of type cls in its group members, cause or context."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, cls):
            return exc
        seen.add(id(exc))
        for sub in getattr(exc, "exceptions", None) or ():  # ExceptionGroup from Hypothesis
            found = find(sub, cls)
            if found is not None:
                return found
        exc = exc.__cause__ or exc.__context__
    return None


def _outcome(call, rep) -> tuple[Outcome, str]:
    """The outcome and its message, from the exception that ended the check (if any)."""
    if call.excinfo is None:  # passed, skipped without an exception, or failed by pytest itself (strict xpass)
        return Outcome(rep.outcome) if rep.outcome in set(Outcome) else Outcome.FAILED, ""
    exc = call.excinfo.value
    if type(exc).__name__ == "DidNotReproduce":  # a replayed falsifying example (replay.py) that passes here
        return Outcome.PASSED, "the replayed falsifying example passes here"
    if isinstance(exc, ContractFailure):  # the check's own failure decides, whatever ended the test after it
        return Outcome.FAILED, str(exc)  # (golden mismatches kept to the end: Check.raise_mismatches)
    golden_problem, contract_failure = find(exc, GoldenProblem), find(exc, ContractFailure)
    if golden_problem is not None:
        return Outcome.ERROR, str(golden_problem)
    if contract_failure is not None:
        return Outcome.FAILED, str(contract_failure)
    if rep.skipped:
        return Outcome.SKIPPED, _skip_reason(rep)
    if call.when == "setup":
        return Outcome.ERROR, f"setup failed: {type(exc).__name__}: {exc}"
    return Outcome.FAILED, f"{type(exc).__name__}: {str(exc).strip()[:2000]}"


def _kind(check: Check | None, is_property: bool) -> CheckKind:
    if is_property:
        return CheckKind.PROPERTY
    kinds = check.kinds if check else []
    return next((kind for made, kind in _KIND_ORDER if made in kinds), CheckKind.GOLDEN)


def record(item, call, rep, check: Check | None, examples: int | None, own_dirs: list[Path] = ()) -> CheckRecord:
    """The report's record of one check; examples is the Hypothesis example count of a property; own_dirs: the
    project's contract directories (a check collected from them is one of its own)."""
    outcome, message = _outcome(call, rep)
    own = is_own(Path(str(item.path)), list(own_dirs))
    if outcome == Outcome.PASSED and check is not None and not check.comparisons and not check.recording:
        outcome, message = Outcome.ERROR, _COMPARED_NOTHING
    comparisons = list(check.comparisons.values()) if check else []
    abs_errs = [c.max_abs_err for c in comparisons if c.max_abs_err is not None]
    rel_errs = [c.max_rel_err for c in comparisons if c.max_rel_err is not None]
    is_property = examples is not None
    return CheckRecord(
        id=check_id(item), nodeid=item.nodeid, family=family(item), kind=_kind(check, is_property),
        outcome=outcome,
        exception=type(call.excinfo.value).__name__ if call.excinfo is not None and not rep.skipped else None,
        duration_s=round(rep.duration, 4), message=message,
        falsifying_example=_falsifying(rep) if outcome == Outcome.FAILED and is_property else None,
        reproduce_failure=replay.blob(_failure_text(rep)) if outcome == Outcome.FAILED and is_property else None,
        examples=examples, max_abs_err=max(abs_errs) if abs_errs else None,
        max_rel_err=max(rel_errs) if rel_errs else None, comparisons=comparisons,
        errors_observed=dict(check.errors_observed) if check else {},
        series=dict(check.curves) if check else {},
        about=about(item), input=check.input if check else None, own=own or None,
        raised_at=_raised_at(item, call, outcome) if own else None,
    )


_HARNESS = Path(__file__).resolve().parents[1]


def _raised_at(item, call, outcome: Outcome) -> str | None:
    """Where a check's code raised, when it ended by an exception that is no contract's failure (an
    AssertionError, a golden value that differs, is one): the innermost frame under the project's root that is
    neither an installed package's nor the harness's, as path:line from the root; None otherwise."""
    if outcome != Outcome.FAILED or call.excinfo is None or find(call.excinfo.value, AssertionError) is not None:
        return None
    root = Path(str(item.config.rootpath)).resolve()
    for entry in reversed(call.excinfo.traceback):
        path = Path(str(entry.path)).resolve()
        if path.is_relative_to(root) and "site-packages" not in path.parts and not path.is_relative_to(_HARNESS):
            return f"{path.relative_to(root).as_posix()}:{entry.lineno + 1}"
    return None


def about(item) -> str:
    """What the contract pins, in the test author's words: the docstring's first sentence."""
    doc = " ".join((getattr(getattr(item, "obj", None), "__doc__", None) or "").split())
    sentences = [s for s in re.split(r"(?<=[.;:])\s", doc) if s]
    # A one- or two-word lead ("Finding:", "max_norm <= 0:") says too little alone: keep the next part too.
    first = " ".join(sentences[:2]) if sentences and len(sentences[0].split()) < 3 else (sentences or [""])[0]
    return first.rstrip(".;:")


_STOPPED_AT = re.compile(r'^E\s+File "(?P<path>[^"]+)", line (?P<line>\d+)')


def _where_python_stopped(lines: list[str], root: Path) -> str | None:
    """A syntax error as `file:line: SyntaxError: ...` (pytest's last lines show the code and the caret, not the
    line's number); None for any other failure."""
    found = next((m for ln in lines if (m := _STOPPED_AT.match(ln))), None)
    if found is None or not lines[-1][2:].strip():
        return None
    path = Path(found["path"])
    shown = path.resolve().relative_to(root.resolve()).as_posix() if path.resolve().is_relative_to(root.resolve()) \
        else str(path)
    return f"{shown}:{found['line']}: {lines[-1][2:].strip()}"


def collection_failure(report, own_dirs: list[Path] = (), root: Path = Path()) -> CheckRecord:
    """A module that fails to import (an API gone after a bump): one failed check for the module (own_dirs: the
    project's contract directories, where its own modules are; root: pytest's, which its node id is under)."""
    fam = Path(report.nodeid).stem.removeprefix("test_")
    text = str(report.longrepr)
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    message = f"{report.nodeid} could not be collected: " + (_where_python_stopped(lines, root)
                                                             or " ".join(ln[2:].strip() for ln in lines[-3:])
                                                             or text[-500:])
    return CheckRecord(
        id=f"{fam}/collection", nodeid=report.nodeid, family=fam, kind=CheckKind.COLLECTION, outcome=Outcome.FAILED,
        duration_s=0.0, exception=_exception_name(text), message=message, falsifying_example=None, examples=None,
        max_abs_err=None, max_rel_err=None, comparisons=[], errors_observed={}, series={},
        library_frames=library_frames(text), own=is_own(root / report.nodeid, list(own_dirs)) or None,
    )


def collection_refused(report, own_dirs: list[Path] = (), root: Path = Path()) -> CheckRecord:
    """A module its platform cannot run, refused as it was collected: one skipped check for the module, its
    reason "not on this platform: ..." (harness.platforms)."""
    failed = collection_failure(report, own_dirs, root)
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    return dataclasses.replace(failed, outcome=Outcome.SKIPPED, exception=None, message=reason, library_frames=[])


# A traceback frame in an installed package, as pytest ("<venv>/site-packages/optax/x.py:39: in f")
# or Python ('File "<venv>/site-packages/optax/x.py", line 39') prints it.
_FRAME = re.compile(r"site-packages/([^\s:\"]+\.py)(?::(\d+):|\", line (\d+))")


def library_frames(longrepr: str) -> list[str]:
    """The installed libraries' frames of a traceback, outermost first, each once: "optax/x.py:39"."""
    frames = [f"{path}:{line or line2}" for path, line, line2 in _FRAME.findall(longrepr)]
    return list(dict.fromkeys(frames))


def _exception_name(longrepr: str) -> str | None:
    """The exception type in a collection error's text ("E   ModuleNotFoundError: ...")."""
    found = re.findall(r"^E\s+([A-Za-z_][\w.]*(?:Error|Exception))\b", longrepr, flags=re.M)
    return found[-1].rsplit(".", 1)[-1] if found else None


def _skip_reason(rep) -> str:
    if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3:
        return str(rep.longrepr[2])
    return str(rep.longrepr)


def _failure_text(rep) -> str:
    """The failure's traceback and the report's sections (Hypothesis prints a replayed case in one)."""
    return "\n".join([rep.longreprtext or "", *(content for _, content in rep.sections)])


def _falsifying(rep) -> str | None:
    """Hypothesis's minimal failing example, as it printed it."""
    lines = _failure_text(rep).splitlines()
    for i, line in enumerate(lines):
        if "Falsifying example" in line or "Failing test case" in line:
            block = [line.strip()]
            for follow in lines[i + 1:]:
                if not follow.strip() or follow.startswith(("E ", "-", "+")) and "Falsifying" in follow:
                    break
                block.append(follow.rstrip())
                if follow.strip() == ")":
                    break
            return "\n".join(block)[:4000]
    return None
