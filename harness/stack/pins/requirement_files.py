"""A requirements file as pip reads it: its requirement lines with their file and line (`-r` includes and `-c`
constraints followed, at the same git revision for a revision's file), and the lines that point outside the
package index. Any text ends in lines or in a HarnessError naming the file and line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.errors import HarnessError
from harness.stack.pins.pin_files import Files

_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--no-index")
_EDITABLE = ("-e", "--editable")
_INCLUDE = ("-r", "--requirement")
_CONSTRAINT = ("-c", "--constraint")


@dataclasses.dataclass(frozen=True)
class Line:
    """One requirement of the file (or of a file it includes): where it is, its text, and whether it
    came from a constraints file (`-c`), which pins a version without asking for the package."""

    where: str  # "requirements.txt:3"
    text: str
    constraint: bool = False
    poetry: bool = False  # read from Poetry's syntax (`jax = "0.11.2"`): its fix is said in that syntax


@dataclasses.dataclass(frozen=True)
class Outside:
    """A line that makes packages come from somewhere other than the package index."""

    where: str
    text: str
    reason: str


def text_of(path: Path, files: Files) -> str:
    """The file's text; HarnessError naming the file (and the line of a byte that is not UTF-8)."""
    try:
        return files.read_text(path)
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise HarnessError(f"{files.name(path)}:{line}: not UTF-8 ({exc.reason}); save the file as UTF-8 (`pip freeze` "
                           "from PowerShell writes UTF-16).") from None
    except OSError as exc:
        raise HarnessError(f"{files.shown(path)} cannot be read ({exc}); fix its permissions or give another "
                           "file.") from None


def _option(line: str) -> tuple[str, str] | None:
    """("--index-url", "URL") for an option line (`-i URL`, `--index-url=URL`, `-rfile`), else None."""
    if not line.startswith("-"):
        return None
    head, _, rest = line.partition(" ")
    if head.startswith("--"):
        name, equals, value = head.partition("=")
        return name, (value if equals else rest).strip()
    if len(head) > 2:  # -rfile, -iURL
        return head[:2], f"{head[2:]} {rest}".strip()
    return head, rest.strip()


def lines_of(path: Path, files: Files, seen: frozenset[Path] = frozenset(),
                       constraint: bool = False) -> tuple[list[Line], list[Outside]]:
    """Each requirement line, following `-r other.txt` and `-c constraints.txt`, and the lines that
    point outside the package index."""
    lines: list[Line] = []
    outside: list[Outside] = []
    text = text_of(path, files)
    for number, raw in enumerate(text.splitlines(), 1):  # as pip numbers them
        line = raw.split(" #")[0].strip().rstrip("\\").strip()
        where = f"{files.name(path)}:{number}"
        if not line or line.startswith("#"):
            continue
        option = _option(line)
        if option is not None:
            name, value = option
            if name in _INCLUDE or name in _CONSTRAINT:
                included = _included(path, value, files, where, name)
                if included not in seen:
                    more, elsewhere = lines_of(included, files, seen | {path.resolve()},
                                                         constraint or name in _CONSTRAINT)
                    lines, outside = lines + more, outside + elsewhere
            elif name in _INDEX_OPTIONS:
                outside.append(Outside(where, line, "another package index or a directory of files: pip would "
                                                    "take packages from there"))
            elif name in _EDITABLE:
                outside.append(Outside(where, line, "an editable install from a local path or a repository"))
            continue  # other options (--hash on its own line, --pre, --trusted-host): not pins
        lines.append(Line(where, line.split(" --")[0].strip(), constraint))  # `pkg==1 --hash=...`
    return lines, outside


def _included(path: Path, value: str, files: Files, where: str, option: str) -> Path:
    """The file an `-r`/`-c` line names, which must exist (at the same revision, for a revision's file)."""
    try:
        included = (path.parent / value).resolve()
        found = bool(value) and files.is_file(included)
    except (OSError, ValueError):  # a name the file system cannot hold (a NUL byte)
        raise HarnessError(f"{where}: cannot include {value!r}: not a file name; fix the {option} line.") from None
    except HarnessError as exc:  # a revision cannot hold it (outside its repository)
        raise HarnessError(f"{where}: {exc}") from None
    if not found:
        raise HarnessError(f"{where}: includes {files.shown(included)}, which does not exist; fix the {option} line.")
    return included


def url_or_path(text: str) -> bool:
    """A line that is a path or URL rather than a requirement (`./vendored/thing`, `git+https://...`)."""
    return "/" in text or "\\" in text or text.startswith(".") or text.endswith((".whl", ".tar.gz", ".zip"))


def order(line: Outside) -> tuple[str, int]:
    name, _, number = line.where.rpartition(":")
    return (name, int(number)) if number.isdigit() else (line.where, 0)
