"""The golden values the branch changed against its base branch's: a line per file saying what wrote it and why,
then every value, before → after in numbers, its size and the check that reads it (harness.verdict.rerecorded)."""

from __future__ import annotations

import dataclasses
import re
from html import escape

from harness.model.golden_changes import GoldenChanges, ValueChange, Writer
from harness.verdict.html_cells import breakable
from harness.verdict.md_cells import esc
from harness.verdict.section import Judged, Section


@dataclasses.dataclass(frozen=True)
class File:
    path: str
    writer: Writer
    values: list[ValueChange]


@dataclasses.dataclass(frozen=True)
class ReRecorded:
    title: str
    files: list[File]


def _rows(judged: Judged) -> ReRecorded | None:
    changes: GoldenChanges | None = judged.verdict.golden_changes
    if changes is None or not changes.values:
        return None
    files: dict[str, list[ValueChange]] = {}
    for value in changes.values:
        files.setdefault(value.file, []).append(value)
    return ReRecorded(changes.line or "", [File(path, values[0].writer, values) for path, values in files.items()])


def _before_after(v: ValueChange) -> str:
    return f"{v.before if v.before is not None else '(none)'} → {v.after if v.after is not None else '(none)'}"


def _text(found: ReRecorded | None) -> list[str]:
    if found is None:
        return []
    out = [f"\n  {found.title}:"]
    for file in found.files:
        out.append(f"    {file.path}: written by {file.writer.said}")
        for v in file.values:
            size = f"  [{v.size_text}]" if v.size_text else ""
            out.append(f"      {v.kind.upper()}  {v.key}  {_before_after(v)}{size}"
                       + (f"  ({v.check})" if v.check else ""))
    return out


def _markdown(found: ReRecorded | None, _cuts: object) -> list[str]:
    if found is None:
        return []
    out = ["", f"### {esc(found.title)}"]
    for file in found.files:
        out += ["", f"`{esc(file.path)}`: written by {esc(file.writer.said)}", "",
                "| change | key | before → after | size | check |", "|---|---|---|---|---|"]
        out += [f"| {v.kind} | `{esc(v.key)}` | {esc(_before_after(v))} | {esc(v.size_text)} | "
                + (f"`{esc(v.check)}`" if v.check else "") + " |" for v in file.values]
    return out


def _html(found: ReRecorded | None) -> str:
    if found is None:
        return ""
    parts = [f"<h2 id='re-recorded'>{escape(found.title)}</h2>"]
    for file in found.files:
        rows = "".join(
            f"<tr><td class='mark'>{escape(v.kind)}</td><td><code>{breakable(v.key)}</code></td>"
            f"<td class='num'>{escape(_before_after(v))}</td><td>{escape(v.size_text)}</td>"
            f"<td>{f'<code>{breakable(v.check)}</code>' if v.check else ''}</td></tr>" for v in file.values)
        said = re.sub(r"`([^`]*)`", r"<code>\1</code>", escape(file.writer.said))  # the command as code, not in ticks
        parts.append(f"<h3><code>{escape(file.path)}</code>: written by {said}</h3>"
                     "<table><tr><th>change</th><th>key</th><th>before → after</th><th>size</th><th>check</th></tr>"
                     f"{rows}</table>")
    return "".join(parts)


SECTION = Section("re-recorded", _rows, _text, _markdown, _html)
