"""One report from the reports of a run's shards (the nightly's runners, each judging `--shard I/N`):

    python -m harness.stack.sensitivity.merge reports/sensitivity.json shards/*/sensitivity.json

The shards must be of one selection (sample, seed, N), one optax and one cosmic-ray, and together hold
every shard once: a missing or doubled shard would give a score of part of the mutants.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.model import sensitivity as model
from harness.model.codec import from_json, to_json
from harness.stack.sensitivity import render


def read(path: Path) -> model.SensitivityReport:
    try:
        return from_json(model.SensitivityReport, json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"cannot read the sensitivity report {path} ({exc}); give the files the shards wrote") from None


def merge(reports: list[model.SensitivityReport]) -> model.SensitivityReport:
    if not reports:
        raise HarnessError("no shard reports to merge")
    first = reports[0]
    count = int(first.selection.shard.split("/")[1])
    same = {(r.optax, r.cosmic_ray, r.selection.sample, r.selection.seed, r.selection.shard.split("/")[1],
             tuple(r.selection.modules), tuple(sorted(r.outside_scope.items())), tuple(sorted(r.libraries.items())))
            for r in reports}
    if len(same) != 1:
        raise HarnessError(f"the shard reports are of different runs: {sorted(same)}")
    shards = sorted(int(r.selection.shard.split("/")[0]) for r in reports)
    if shards != list(range(1, count + 1)):
        raise HarnessError(f"the shards given are {shards}, not each of 1..{count} once")
    return model.report(
        [m for r in reports for m in r.mutants], started_at=min(r.started_at for r in reports),
        finished_at=max(r.finished_at for r in reports), optax=first.optax, cosmic_ray=first.cosmic_ray,
        selection=model.Selection(first.selection.sample, first.selection.seed, f"1-{count}/{count}",
                                  first.selection.modules),
        mutants_found=first.mutants_found, outside_scope=first.outside_scope, libraries=first.libraries,
        seconds=max(r.seconds for r in reports),
        workers=sum(r.workers for r in reports))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, *inputs = (Path(a) for a in argv)
    try:
        report = merge([read(p) for p in inputs])
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(to_json(report), indent=2) + "\n")
    out.with_suffix(".md").write_text(render.markdown(report))
    print(f"wrote {out} and {out.with_suffix('.md')}: {report.summary.scored} mutants scored, score {report.summary.score}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
