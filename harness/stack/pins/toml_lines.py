"""Where a value of a TOML pins file is written: the line of a table's key, or of one string or inline table in
its array. tomllib gives values without their lines, and a message that names `uv.lock:312` needs them. The
text is read as the tools that write these files lay it out (uv.lock, a hand-written pyproject.toml): one
`[table]` or `[[array]]` header a line, one `key = ` at the start of a line; a value written otherwise (a
dotted key, an inline `project = {...}`) is placed at the nearest line found (its table's header).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib

from harness.errors import HarnessError

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")
_DECODE_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _path(header: str) -> str:
    """`project.optional-dependencies` of `[ project . "optional-dependencies" ]`."""
    return ".".join(part.strip().strip("\"'") for part in header.split("."))


@dataclasses.dataclass(frozen=True)
class TomlLines:
    """The header line of every table (by path, and index for an array of tables) and the line of every key."""

    text_lines: tuple[str, ...]
    tables: dict[tuple[str, int], int]
    keys: dict[tuple[str, int, str], int]

    @classmethod
    def of(cls, text: str) -> TomlLines:
        tables: dict[tuple[str, int], int] = {("", 0): 1}
        keys: dict[tuple[str, int, str], int] = {}
        counts: dict[str, int] = {}
        table, index = "", 0
        lines = tuple(text.split("\n"))  # as TOML counts them (str.splitlines also splits at \x0c, \u2028...)
        for number, line in enumerate(lines, 1):
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                table = _path(header.group(2))
                if header.group(1) == "[[":
                    counts[table] = counts.get(table, 0) + 1
                    index = counts[table] - 1
                else:  # a sub-table of the latest element of an array of tables: `[package.metadata]`
                    parents = [p for p in counts if table.startswith(p + ".")]
                    index = counts[max(parents, key=len)] - 1 if parents else 0
                tables.setdefault((table, index), number)
                continue
            key = _KEY.match(line)
            if key:
                keys.setdefault((table, index, key.group(1).strip("\"'")), number)
        return cls(lines, tables, keys)

    def table(self, path: str, index: int = 0) -> int:
        """The header's line; 1 when the table has none (written inline, or the document's top)."""
        return self.tables.get((path, index), 1)

    def key(self, path: str, key: str, index: int = 0) -> int:
        """The line of `key = ` in the table; its header's when the key is not written at a line's start."""
        return self.keys.get((path, index, key), self.table(path, index))

    def within(self, path: str, key: str, needle: str, index: int = 0) -> int:
        """The first line holding `needle` in the key's value (from the key's line to the next key or header):
        one string of an array written one a line; the key's line when no line holds it."""
        start = self.key(path, key, index)
        for number in range(start, len(self.text_lines) + 1):
            line = self.text_lines[number - 1]
            if number > start and (_KEY.match(line) or _HEADER.match(line)):
                break
            if needle in line:
                return number
        return start

    def string(self, path: str, key: str, value: str, index: int = 0) -> int:
        """The line of the string `value` in the key's array, written with either quote."""
        for quoted in (f'"{value}"', f"'{value}'"):
            number = self.within(path, key, quoted, index)
            if self.text_lines and quoted in self.text_lines[number - 1]:
                return number
        return self.key(path, key, index)


def load(text: str, shown: str) -> dict:
    """The TOML document; HarnessError naming `shown` and the line tomllib stopped at."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _DECODE_LINE.search(str(exc))
        line = found.group(1) if found else len(text.rstrip("\n").split("\n"))  # "(at end of document)"
        where = f"{shown}:{line}"
        raise HarnessError(f"{where}: cannot be read as TOML ({exc}); fix it and run again.") from None
