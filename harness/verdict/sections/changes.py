"""What changed: an import failure, the contracts that changed (grouped, with their cases, the API
changes each one touches and the release that first changed it), the bits that moved within tolerance,
and each entry's problem and new warnings. The HTML page shows the attribution table here too."""

from __future__ import annotations

import dataclasses
from html import escape

from harness.model.verdict import Verdict
from harness.verdict import api_view, departure_view, groups, views
from harness.verdict.html_cells import breakable
from harness.verdict.md_cells import esc, more
from harness.verdict.section import Cuts, Judged, Section


@dataclasses.dataclass(frozen=True)
class Changes:
    verdict: Verdict
    changed: list[groups.ChangeGroup]  # contracts that changed
    changed_api: list[list[str]]  # per changed group: the API changes it touches, and the departures it holds
    bits: list[groups.ChangeGroup]  # contracts whose bits moved within tolerance
    bits_api: list[list[str]]
    attribution: tuple[list[str], list[tuple[str, list[str]]]]  # the HTML page's (views.attribution)
    changed_yours: list[str]  # per changed group: where the team's code calls what it covers ('' for none)
    bits_yours: list[str]


def _rows(judged: Judged) -> Changes:
    v = judged.verdict
    changed, bits = views.contract_groups(v), views.bits_groups(v)
    # Under each changed contract: the API changes it touches, then the departures its checks are judged against.
    departing = departure_view.rows(v)
    notes = [api_view.links(v.api_diff, v.baseline, g.changes)
             + departure_view.under(departing, [c.check_id for c in g.changes]) for g in changed]
    return Changes(v, changed, notes,
                   bits, [api_view.links(v.api_diff, v.baseline, g.changes) for g in bits], views.attribution(v),
                   [views.your_code(v, g.changes) for g in changed], [views.your_code(v, g.changes) for g in bits])


def _text_group(group: groups.ChangeGroup, cases: bool, first_changed: dict[str, str],
                api: list[str] = (), yours: str = "") -> list[str]:
    out = [f"    {group.contract}  {group.cases_text}".rstrip()]
    if yours:
        out.append(f"      {yours}")
    if group.about:
        out.append(f"      what it pins: {group.about}")
    if group.before_after:
        out.append(f"      {group.before_after}" + (f"  [{group.size}]" if group.size else ""))
    out += [f"      {line}" for line in api]
    if groups.first_changed(group, first_changed):
        out.append(f"      first changed in {groups.first_changed(group, first_changed)}")
    varying = len({(c.before, c.after) for c in group.changes}) > 1
    for c in group.changes if cases else []:
        said = "; ".join(x for x in (c.input, f"{c.before} → {c.after}" if varying else "") if x)
        if said:
            out.append(f"        - {groups.case_id(c.check_id) or c.check_id}: {said}")
    return out


def _text_groups(title: str, found: list[groups.ChangeGroup], apis: list[list[str]] | None, cases: bool,
                 first_changed: dict[str, str], yours: list[str]) -> list[str]:
    out = [f"\n  {title}"] if found else []
    mark = None
    for i, group in enumerate(found):
        if group.mark != mark:
            mark = group.mark
            out.append(f"  {mark.upper()}: {groups.MEANING.get(mark, '')}")
        out += _text_group(group, cases, first_changed, apis[i] if apis else [], yours[i])
    return out


def _text(found: Changes) -> list[str]:
    v = found.verdict
    out = []
    if v.import_failure:
        f = v.import_failure
        out += [f"\n  IMPORT FAILURE: {f.text}", "    library frames, outermost first: " + " > ".join(f.frames)]
    name = v.entries[0].name if v.entries else ""
    out += _text_groups(views.changed_title(v, name) + ":", found.changed, found.changed_api, cases=True,
                        first_changed=v.first_changed, yours=found.changed_yours)
    out += _text_groups(views.bits_title(v, name) + ":", found.bits, None, cases=False, first_changed={},
                        yours=found.bits_yours)
    for entry in v.entries:
        if entry.problem:
            out.append(f"\n  {entry.name}: {entry.problem}")
        for w in entry.new_warnings:
            out.append(f"  new {w.category} from {w.origin} on {entry.name}: {w.message[:200]}")
    return out


def _group_row(g: groups.ChangeGroup, first_changed: dict[str, str], api: list[str] = (), yours: str = "") -> str:
    what = f"`{g.contract}`" + (f"<br>**{esc(yours)}**" if yours else "") + (f"<br>{esc(g.about)}" if g.about else "")
    first = groups.first_changed(g, first_changed)
    what += f"<br>**first changed in {esc(first)}**" if first else ""
    what += "".join(f"<br>{esc(line)}" for line in api)
    return f"| **{g.mark}** | {what} | {esc(g.cases_text)} | {esc(g.before_after)} | {esc(g.size)} |"


def _markdown(found: Changes, cuts: Cuts) -> list[str]:
    v = found.verdict
    out = []
    if v.import_failure:
        f = v.import_failure
        out += ["", "### Import failure", "", f"**{esc(f.text)}**", "",
                f"Library frames, outermost first: {' → '.join(f'`{frame}`' for frame in f.frames)}"]
    if found.changed:
        name = v.entries[0].name
        out += ["", f"### {views.changed_title(v, f'`{name}`')}", "",
                "| change | contract | cases | before → after | size |", "|---|---|---|---|---|"]
        out += [_group_row(g, v.first_changed, api, yours)
                for g, api, yours in zip(found.changed, found.changed_api, found.changed_yours)]
        cases = [(g, c) for g in found.changed for c in g.changes]
        limit = len(cases) if cuts.cases is None else cuts.cases
        if limit:
            out += ["", f"<details><summary>The {len(cases)} cases: input and outcome</summary>", ""]
            out += [f"- {g.mark}: `{c.check_id}`: " + esc("; ".join(x for x in (c.input, f"{c.before} → {c.after}")
                                                                    if x and x != " → ")) for g, c in cases[:limit]]
            out += more(limit, len(cases), "cases") + ["", "</details>"]
        elif cases:
            out += ["", f"({len(cases)} cases: inputs and outcomes in upgrade-report.html)"]
    if found.bits:
        out += ["", f"<details><summary>{views.bits_title(v)}: {sum(len(g.changes) for g in found.bits)} checks"
                "</summary>", "", "| contract | cases | what moved |", "|---|---|---|"]
        out += [f"| `{g.contract}`{f'<br>{esc(yours)}' if yours else ''} | {esc(g.cases_text)} | "
                f"{esc(groups.bits_text(g))} |" for g, yours in zip(found.bits, found.bits_yours)]
        out += ["", "</details>"]
    for entry in v.entries:
        if entry.problem:
            out += ["", f"**{entry.name}**: {esc(entry.problem[:800])}"]
        if entry.new_warnings:
            out += ["", f"New warnings (deprecations and others) on `{entry.name}`:", ""]
            out += [f"- {w.category} from {w.origin}: {esc(w.message[:200])}" for w in entry.new_warnings]
    return out


def _first_changed(group: groups.ChangeGroup, found: dict[str, str]) -> str:
    text = groups.first_changed(group, found)
    return f"<div class='first-changed'>first changed in <b>{escape(text)}</b></div>" if text else ""


def _group_rows(group: groups.ChangeGroup, first_changed: dict[str, str], api: list[str] = (), yours: str = "") -> str:
    cases = "".join(f"<li><code>{breakable(groups.case_id(c.check_id) or c.check_id)}</code>: "
                    f"{breakable('; '.join(x for x in (c.input, f'{c.before} → {c.after}') if x and x != ' → '))}"
                    f"<div class='detail'>{breakable(c.detail[:600])}</div></li>"
                    for c in group.changes)
    return (f"<tr><td class='mark'>{escape(group.mark)}</td><td><code>{breakable(group.contract)}</code>"
            + (f"<div class='your-code'><b>{escape(yours)}</b></div>" if yours else "")
            + f"<div class='detail'>{escape(group.about)}</div>{_first_changed(group, first_changed)}"
            + "".join(f"<div class='api-link'>{escape(line)}</div>" for line in api) + "</td>"
            f"<td>{escape(group.cases_text)}"
            f"<details><summary>inputs and outcomes</summary><ul>{cases}</ul></details></td>"
            f"<td>{breakable(group.before_after or group.changes[0].detail[:300])}</td><td>{escape(group.size)}</td></tr>")


def _html(found: Changes) -> str:
    v = found.verdict
    out = []
    if v.import_failure:
        f = v.import_failure
        out.append(f"<h3 id='import-failure'>Import failure</h3><p><b>{escape(f.text)}</b></p>"
                   f"<p class='detail'>Library frames, outermost first: {escape(' → '.join(f.frames))}</p>")
    for entry in v.entries:
        if entry.problem:
            out.append(f"<p><b>{escape(entry.name)}</b>: {escape(entry.problem)}</p>")
    for title, found_groups, apis, yours in (
            (views.changed_title(v, "the candidate"), found.changed, found.changed_api, found.changed_yours),
            (views.bits_title(v), found.bits, found.bits_api, found.bits_yours)):
        if found_groups:
            rows = "".join(_group_rows(g, v.first_changed, api, mine) for g, api, mine in zip(found_groups, apis, yours))
            out.append(f"<h3>{escape(title)}</h3><table><tr><th>change</th><th>contract</th><th>cases</th>"
                       f"<th>before → after</th><th>size</th></tr>{rows}</table>")
    names, rows = found.attribution
    if len(names) > 1 and rows:
        head = "".join(f"<th>{escape(n)}</th>" for n in names)
        body = "".join(f"<tr><td><code>{breakable(i)}</code></td>" + "".join(f"<td>{escape(m)}</td>" for m in marks)
                       + "</tr>" for i, marks in rows)
        out.append(f"<h3 id='attribution'>Attribution: which bump changes what</h3>"
                   f"<table><tr><th>check</th>{head}</tr>{body}</table>")
    return "".join(out)


SECTION = Section("changes", _rows, _text, _markdown, _html)
