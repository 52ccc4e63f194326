"""The verdict for people: terminal text, GitHub Markdown for a PR comment, and JSON for tools."""

from __future__ import annotations

from harness.verdict.compare import ORDER, SLOWER_THRESHOLD, UNCHANGED, Verdict

_VERSION_KEYS = ("python", "jax", "jaxlib", "optax", "flax", "numpy")


def _versions(v: dict) -> str:
    return " ".join(f"{k} {v.get(k) or '?'}" for k in _VERSION_KEYS)


def _magnitude(change) -> str:
    if change.max_abs_err is None:
        return "-"
    rel = f" / {change.max_rel_err:.2g}" if change.max_rel_err is not None else ""
    return f"{change.max_abs_err:.2g}{rel}"


def _counts(summary: dict) -> str:
    parts = [f"{summary[k]} {k}" for k in ("passed", "failed", "error", "skipped") if summary.get(k)]
    return f"{summary.get('total', 0)} checks: " + (", ".join(parts) or "none run")


def _entry_rows(verdict: Verdict) -> list[tuple[str, str, str, str]]:
    base = verdict.baseline
    rows = [("baseline", _versions(base["environment"]["versions"]), base["status"], _counts(base["summary"]))]
    for e in verdict.entries:
        versions = e.versions if e.status != "unresolvable" else dict(e.requested, python=e.requested_python)
        if e.status != "complete":
            marks = "not judged (see below)"
        else:
            marks = ", ".join(f"{n} {m}" for m, n in e.counts.items() if n and m != UNCHANGED) or "no change"
        rows.append((e.name, _versions(versions), e.status, marks))
    return rows


_SHOW_BASELINE_FAILURES = 10
_PR_COMMENT_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters


def _changed(entry) -> list:
    """Changed checks grouped by family, the worst marks first within a family."""
    return sorted((c for c in entry.changes if c.mark != UNCHANGED),
                  key=lambda c: (c.family, ORDER.index(c.mark), c.check_id))


def _shown_baseline_failures(verdict: Verdict) -> tuple[list[dict], int]:
    failures = verdict.baseline_failures
    return failures[:_SHOW_BASELINE_FAILURES], max(0, len(failures) - _SHOW_BASELINE_FAILURES)


def _attribution(verdict: Verdict) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """check id -> mark per entry, for every check that changed anywhere."""
    names = [e.name for e in verdict.entries]
    marks = {e.name: {c.check_id: c.mark for c in e.changes} for e in verdict.entries}
    ids = sorted({c.check_id for e in verdict.entries for c in e.changes if c.mark != UNCHANGED})
    return names, [(i, [marks[n].get(i, "-") for n in names]) for i in ids]


def text(verdict: Verdict) -> str:
    out = ["", f"VERDICT  {verdict.headline}", ""]
    for name, versions, status, counts in _entry_rows(verdict):
        out.append(f"  {name:12s} {versions}  [{status}] {counts}")
    if verdict.baseline.get("problem"):
        out.append(f"\n  baseline: {verdict.baseline['problem']}")
    shown, more = _shown_baseline_failures(verdict)
    for check in shown:
        out.append(f"\n  baseline {check['outcome']}: {check['id']}\n    {check['message']}")
    if more:
        out.append(f"\n  ... and {more} more baseline failures (all in the baseline report)")
    for index, entry in enumerate(verdict.entries):
        if entry.problem:
            out.append(f"\n  {entry.name}: {entry.problem}")
        changed = _changed(entry) if index == 0 else []  # the others appear in the attribution table
        if changed:
            out.append(f"\n  Changed on {entry.name}, by family:")
            out.append(f"    {'change':24s} {'check':58s} {'max abs / rel err':18s} tolerance")
            family = None
            for c in changed:
                if c.family != family:
                    family = c.family
                    out.append(f"  [{family}]")
                out.append(f"    {c.mark:24s} {c.check_id:58s} {_magnitude(c):18s} {c.tolerance}")
                if c.detail:
                    out.append(f"      {c.detail[:600]}")
        for w in entry.new_warnings:
            out.append(f"  new {w['category']} from {w['origin']} on {entry.name}: {w['message'][:200]}")
    perf = _performance_rows(verdict)
    if perf:
        out.append(f"\n  Performance, fastest steady-state call / baseline's (informational; flagged above "
                   f"{SLOWER_THRESHOLD}x; compile time ratio in brackets):")
        for name, cells in perf:
            out.append(f"    {name:28s} " + " ".join(f"{c:24s}" for c in cells))
    names, rows = _attribution(verdict)
    if len(names) > 1 and rows:
        out.append("\n  Attribution (which bump changes what):")
        out.append("    " + f"{'check':58s} " + " ".join(f"{n:18s}" for n in names))
        for check_id, marks in rows:
            out.append("    " + f"{check_id:58s} " + " ".join(f"{m:18s}" for m in marks))
    out.append(f"\n  exit status {verdict.exit_status}")
    return "\n".join(out)


def _ratio_cell(timing) -> str:
    if timing.steady_ratio is None:
        return "not measured"
    flag = " SLOWER" if timing.slower else ""
    compile_part = f" [{timing.compile_ratio:.2f}x]" if timing.compile_ratio is not None else ""
    return f"{timing.steady_ratio:.2f}x{compile_part}{flag}"


def _performance_rows(verdict: Verdict) -> list[tuple[str, list[str]]]:
    names = sorted({t.name for e in verdict.entries for t in e.timings})
    rows = []
    for name in names:
        cells = []
        for e in verdict.entries:
            t = next((t for t in e.timings if t.name == name), None)
            cells.append(f"{e.name}: " + (_ratio_cell(t) if t else "not measured"))
        rows.append((name, cells))
    return rows


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(verdict: Verdict) -> str:
    """The verdict for a PR comment; details are shortened until it fits GitHub's comment limit."""
    for detail_chars in (300, 120, 0):
        text = _markdown(verdict, detail_chars)
        if len(text) <= _PR_COMMENT_LIMIT:
            return text
    cut = text[:_PR_COMMENT_LIMIT].rsplit("\n", 1)[0]
    return cut + "\n\n(truncated to fit a PR comment: the full verdict is in upgrade-summary.json)\n"


def _markdown(verdict: Verdict, detail_chars: int) -> str:
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[verdict.exit_status]
    out = [f"## {icon} Upgrade verdict: {_md_escape(verdict.headline)}", "",
           "| entry | versions | status | result |", "|---|---|---|---|"]
    for name, versions, status, counts in _entry_rows(verdict):
        out.append(f"| {name} | {versions} | {status} | {counts} |")
    if verdict.baseline.get("problem"):
        out += ["", f"**baseline**: {_md_escape(verdict.baseline['problem'][:800])}"]
    shown, more = _shown_baseline_failures(verdict)
    if shown:
        out += ["", "**Baseline fails its own checks:**", ""]
        out += [f"- `{c['id']}`: {_md_escape(c['message'][:400])}" for c in shown]
        if more:
            out.append(f"- ... and {more} more (all in the baseline report)")
    for index, entry in enumerate(verdict.entries):
        if entry.problem:
            out += ["", f"**{entry.name}**: {_md_escape(entry.problem[:800])}"]
        changed = _changed(entry) if index == 0 else []  # the others appear in the attribution table
        if changed:
            out += ["", f"### Changed on `{entry.name}`", "",
                    "| family | change | check | max abs / rel err | tolerance | detail |", "|---|---|---|---|---|---|"]
            out += [f"| {c.family} | {c.mark} | `{c.check_id}` | {_magnitude(c)} | {c.tolerance} | "
                    f"{_md_escape(c.detail[:detail_chars])} |" for c in changed]
        if entry.new_warnings:
            out += ["", f"New warnings on `{entry.name}`:", ""]
            out += [f"- {w['category']} from {w['origin']}: {_md_escape(w['message'][:200])}" for w in entry.new_warnings]
    perf = _performance_rows(verdict)
    if perf:
        out += ["", f"<details><summary>Performance (informational): fastest steady-state call / baseline's, "
                f"flagged above {SLOWER_THRESHOLD}x; compile-time ratio in brackets</summary>", "",
                "| operation | " + " | ".join(e.name for e in verdict.entries) + " |",
                "|---|" + "---|" * len(verdict.entries)]
        out += [f"| {name} | " + " | ".join(c.split(": ", 1)[1] for c in cells) + " |" for name, cells in perf]
        out += ["", "</details>"]
    names, rows = _attribution(verdict)
    if len(names) > 1 and rows:
        out += ["", "### Attribution", "", "| check | " + " | ".join(names) + " |",
                "|---|" + "---|" * len(names)]
        out += [f"| `{i}` | " + " | ".join(marks) + " |" for i, marks in rows]
    unchanged = [c for c in verdict.entries[0].changes if c.mark == UNCHANGED] if verdict.entries else []
    if unchanged:
        out += ["", f"<details><summary>{len(unchanged)} unchanged checks on {verdict.entries[0].name}</summary>",
                "", "| check | kind | max abs / rel err | tolerance |", "|---|---|---|---|"]
        out += [f"| `{c.check_id}` | {c.kind} | {_magnitude(c)} | {c.tolerance} |" for c in unchanged]
        out += ["", "</details>"]
    out += ["", f"Exit status {verdict.exit_status} (0 no contract regressed, 1 a contract regressed, "
            "2 the harness could not judge)."]
    return "\n".join(out) + "\n"


def as_json(verdict: Verdict) -> dict:
    return {
        "exit_status": verdict.exit_status,
        "headline": verdict.headline,
        "baseline": {"versions": verdict.baseline["environment"]["versions"],
                     "status": verdict.baseline["status"], "summary": verdict.baseline["summary"]},
        "baseline_failures": [{"id": c["id"], "message": c["message"]} for c in verdict.baseline_failures],
        "entries": [
            {"name": e.name, "versions": e.versions, "status": e.status, "problem": e.problem,
             "counts": e.counts, "changes": [c.as_dict() for c in e.changes if c.mark != UNCHANGED],
             "unchanged": sum(c.mark == UNCHANGED for c in e.changes), "new_warnings": e.new_warnings}
            for e in verdict.entries
        ],
    }
