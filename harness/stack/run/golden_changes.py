"""The project's golden values on this branch against its base branch's, computed from git when the baseline's pins
come from a revision (`--baseline-from origin/main:requirements.txt`: the pull-request check, or a plain upgrade in
a bump branch): every key whose value the branch changed since it left the base branch (their merge base, as a pull
request's diff), before → after in numbers, and what the branch's file says wrote it.
Written beside the run's plan (its CI job has the history; the judge job reads the file), shown by the verdict.
Plain Python: the host has no NumPy, so values are compared as the files hold them (exact floats in JSON)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from harness import golden_layout
from harness.errors import HarnessError
from harness.model import golden_changes
from harness.model.float_formats import SIGNIFICAND_BITS, number, spacing
from harness.model.golden_changes import GoldenChanges, ValueChange, ValueChangeKind, Writer
from harness.stack import project
from harness.stack.pins.pin_files import GitRevision, git, top_level
from harness.stack.workspace import Workspace

SHOWN_WHOLE = 4  # elements of a value shown whole; a larger one is shown at the element that moved most
DIGITS = {"float64": 17, "float32": 9, "float16": 5, "bfloat16": 4}  # significant digits that tell the value apart


def compute(ws: Workspace) -> GoldenChanges | None:
    """The branch's golden values against the baseline's revision's; None when the baseline's pins come from no
    revision (nothing to compare with). HarnessError when git cannot read the revision's golden directory."""
    found = project.load(ws)
    if found.baseline_revision is None or ws.is_checkout:
        return None
    top = _top(found.root)
    revision = GitRevision(top, _fork_point(top, found.baseline_revision))
    golden = found.golden
    if not golden.resolve().is_relative_to(top):
        return None  # a golden directory outside the repository has no base branch's copy
    before = _documents_at(revision, golden)
    after = {path.relative_to(golden).as_posix(): doc for path in sorted(golden.rglob("*.json"))
             if (doc := _golden_document(_read(path))) is not None} if golden.is_dir() else {}
    shown = Path(os.path.relpath(golden, found.root)).as_posix()  # it may lie outside the project's root
    values: list[ValueChange] = []
    for name in sorted(set(before) | set(after)):
        values += file_changes(f"{shown}/{name}", before.get(name), after.get(name))
    return GoldenChanges(found.baseline_revision, shown, found.re_recorded, tuple(values))


def write(ws: Workspace, directory: Path) -> GoldenChanges | None:
    """The changes computed and written into `directory` (the run's reports, beside its plan); None: not compared."""
    changes = compute(ws)
    if changes is not None:
        golden_changes.write(directory / golden_changes.GOLDEN_CHANGES_FILE, changes)
    return changes


def _top(root: Path) -> Path:
    top = top_level(root)
    if top is None:
        raise HarnessError(f"{root} is not in a git repository: the base branch's golden values cannot be read; "
                           "give --baseline-from a file's path alone, or run inside the repository.")
    return top


def _fork_point(top: Path, revision: str) -> str:
    """Where this branch left `revision` (their merge base): what the branch changed, not what the base branch
    changed since (a pull request's diff). The revision itself when they share no history."""
    done = git(top, "merge-base", revision, "HEAD")
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.decode().strip()
    if git(top, "rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true":
        raise HarnessError(f"this clone is shallow: where the branch left {revision} is not in its history, so the "
                           "golden values the branch changed cannot be told from those the base branch changed since; "
                           "fetch the whole history (actions/checkout with `fetch-depth: 0`, or `git fetch "
                           "--unshallow`) and run again.")
    return revision


def _documents_at(revision: GitRevision, golden: Path) -> dict[str, dict]:
    """The golden files `revision` holds under `golden`, by their path inside it."""
    inside = revision.in_repository(golden.resolve())
    done = git(revision.top, "ls-tree", "-r", "-z", "--name-only", revision.revision, "--", inside)
    if done.returncode != 0:
        raise HarnessError(f"git cannot list {revision.revision}:{inside} "
                           f"({done.stderr.decode(errors='replace').strip()}); fetch the base branch "
                           "(`git fetch origin`) and run again.")
    found = {}
    for line in done.stdout.decode(errors="surrogateescape").split("\0"):  # -z: names as they are, never quoted
        if not line.endswith(".json"):
            continue
        try:
            doc = _golden_document(revision.read_text(revision.top / line))
        except (OSError, UnicodeDecodeError):
            continue
        if doc is not None:
            found[line[len(inside) + 1:] if inside != "." else line] = doc
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _golden_document(text: str | None) -> dict | None:
    """A golden file's JSON object (a family name and its values); None for any other file (a checkpoint's)."""
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        return None
    ok = isinstance(doc, dict) and isinstance(doc.get("values"), dict) and isinstance(doc.get("family"), str)
    return doc if ok else None


def file_changes(file: str, before: dict | None, after: dict | None) -> list[ValueChange]:
    old, new = (before or {}).get("values", {}), (after or {}).get("values", {})
    writer = _writer(before, after)
    family = (after or before)["family"]
    out = []
    for key in sorted(set(old) | set(new)):
        was, now = golden_layout.without_noise(old.get(key)), golden_layout.without_noise(new.get(key))
        if was == now:
            continue
        out.append(_change(family, key, file, was, now, writer))
    return out


def _writer(before: dict | None, after: dict | None) -> Writer:
    """What the branch's file says wrote it; for a file the branch removed, nothing."""
    if after is None:
        return Writer(None, None)
    provenance = after.get("provenance") or {}
    accepted = provenance.get(golden_layout.ACCEPTED) or {}
    written = provenance.get(golden_layout.VALUES_DIGEST)  # the values as the file's last recording wrote them
    if written is not None and written != golden_layout.values_digest(after.get("values") or {}):
        return Writer(None, None, by_hand=True)  # edited since, whatever recording wrote it before
    if before is not None and provenance == (before.get("provenance") or {}):
        return Writer(None, None, by_hand=True)
    return Writer(accepted.get("command"), accepted.get("reason") or None)


def _numeric(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("values"), list) and "dtype" in entry


def _change(family: str, key: str, file: str, was, now, writer: Writer) -> ValueChange:
    kind = (ValueChangeKind.ADDED if was is None else ValueChangeKind.REMOVED if now is None
            else ValueChangeKind.CHANGED)
    if kind == ValueChangeKind.CHANGED and _numeric(was) and _numeric(now) \
            and len(was["values"]) == len(now["values"]) and was["dtype"] == now["dtype"]:
        return _numeric_change(family, key, file, was, now, writer)
    shown = [None if e is None else _whole(e) for e in (was, now)]
    entry = now if now is not None else was
    size = len(entry["values"]) if _numeric(entry) else 1
    return ValueChange(family, key, file, kind, shown[0], shown[1], entry.get("dtype") if _numeric(entry) else None,
                       size if kind != ValueChangeKind.CHANGED else 1, size, None, None, writer)


def _numeric_change(family: str, key: str, file: str, was: dict, now: dict, writer: Writer) -> ValueChange:
    dtype = was.get("precision") or was["dtype"]
    a, b = [number(v) for v in was["values"]], [number(v) for v in now["values"]]
    moved = [i for i, (x, y) in enumerate(zip(a, b)) if not _same(x, y)]
    finite = [i for i in moved if math.isfinite(a[i]) and math.isfinite(b[i])]
    floating = dtype in SIGNIFICAND_BITS
    ulps = {i: _ulps(a[i], b[i], dtype) if floating else abs(b[i] - a[i]) for i in finite}
    worst = max(finite, key=ulps.__getitem__) if finite else (moved[0] if moved else 0)
    rels = [abs(b[i] - a[i]) / abs(a[i]) for i in finite if a[i]]
    before = _element(a, worst, dtype, was["shape"])  # each side in the precision it was judged in
    after = _element(b, worst, now.get("precision") or now["dtype"], now["shape"])
    return ValueChange(family, key, file, ValueChangeKind.CHANGED, before, after, dtype, len(moved), len(a),
                       max(ulps.values()) if floating and ulps else None, max(rels) if rels else None, writer,
                       non_finite=len(finite) < len(moved))


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def _ulps(x: float, y: float, dtype: str) -> float:
    return abs(y - x) / spacing(x, dtype)


def _text(x: float, dtype: str | None) -> str:
    if isinstance(x, bool) or (isinstance(x, int) and dtype not in SIGNIFICAND_BITS):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.{DIGITS.get(dtype or '', 17)}g}"


def _element(values: list[float], index: int, dtype: str, shape: list[int]) -> str:
    """The value whole when it is small, else its element that moved most, with its index."""
    if len(values) <= SHOWN_WHOLE:
        texts = [_text(v, dtype) for v in values]
        return texts[0] if not shape else f"[{', '.join(texts)}]"
    return f"[{', '.join(map(str, _unravel(index, shape)))}] {_text(values[index], dtype)}"


def _unravel(index: int, shape: list[int]) -> list[int]:
    out = []
    for size in reversed(shape):
        out.append(index % size)
        index //= size
    return out[::-1]


def _whole(entry) -> str:
    """A fact, an error type or a departure as the file holds it; a numeric value in numbers."""
    if _numeric(entry):
        dtype = entry.get("precision") or entry["dtype"]
        return _element([number(v) for v in entry["values"]], 0, dtype, entry["shape"]) \
            if len(entry["values"]) <= SHOWN_WHOLE else f"{entry['dtype']}{entry['shape']}"
    if isinstance(entry, dict) and "error" in entry:
        return entry["error"] or "no error"
    return json.dumps(entry.get("fact", entry) if isinstance(entry, dict) else entry, sort_keys=True)
