"""The same pins judged on the CPU and on an accelerator: the verdict on the second names the contract changes only
one of them shows (and why the other does not: unchanged there, or not on that platform), and the chip's own
drift against the CPU's baseline values; records of other pins are never read. Reports of the default matrix,
their platform rewritten (no accelerator here)."""

from __future__ import annotations

import copy

import numpy as np

from harness import platforms
from harness.model import platform_marks, report_io
from harness.verdict import across_platforms, compare, render
from support import upgrade_reports

BASE, CAND = upgrade_reports.load("baseline"), upgrade_reports.load("candidate")


def _on(doc: dict, backend: str, kinds: list[str]) -> dict:
    doc = copy.deepcopy(doc)
    doc["environment"]["jax"].update(backend=backend, device_kinds=kinds, device_count=1)
    return doc


def _verdict(base: dict, cand: dict, folder):
    """The verdict on the pair, its record kept in `folder`, the baseline's report file written as a run writes it."""
    b, c = report_io.parse(base, "baseline"), report_io.parse(cand, "candidate")
    (folder / "run").mkdir(exist_ok=True)
    report_io.write(folder / "run" / "baseline.json", b)
    return across_platforms.applied(compare.judge(b, [c]), folder, c, folder / "run" / "baseline.json")


def _changed_ids(doc_base: dict, doc_cand: dict) -> list[str]:
    verdict = compare.judge(report_io.parse(doc_base, "b"), [report_io.parse(doc_cand, "c")])
    return sorted(c.check_id for c in verdict.entries[0].contract_changes)


def test_a_change_only_the_chip_shows_and_one_only_the_cpu_shows_are_named(tmp_path):
    on_cpu = _verdict(_on(BASE, "cpu", ["cpu"]), _on(CAND, "cpu", ["cpu"]), tmp_path)
    assert on_cpu.across_platforms == []  # the first platform judged: nothing to contrast yet
    changed = _changed_ids(BASE, CAND)
    assert len(changed) > 3
    # On the chip: the first changed check does not change there (its candidate check is the baseline's), the
    # second is refused as not on this platform on both sides; one unchanged check changes only there.
    tpu_base, tpu_cand = _on(BASE, "tpu", ["TPU v5 lite"]), _on(CAND, "tpu", ["TPU v5 lite"])
    by_id = {c["id"]: i for i, c in enumerate(tpu_cand["checks"])}
    same, refused = changed[0], changed[1]
    tpu_cand["checks"][by_id[same]] = copy.deepcopy(next(c for c in tpu_base["checks"] if c["id"] == same))
    for doc in (tpu_base, tpu_cand):
        check = next(c for c in doc["checks"] if c["id"] == refused)
        check.update(outcome="skipped", message=f"Skipped: {platforms.NOT_HERE}: tpu has no float64", comparisons=[])
    unchanged = next(c["id"] for c in tpu_base["checks"] if c["id"] not in changed and c["outcome"] == "passed"
                     and any(k["kind"] == "golden" for k in c["comparisons"]))
    moved = next(c for c in tpu_cand["checks"] if c["id"] == unchanged)
    moved.update(outcome="failed", message="a golden value moved on the chip")
    next(k for k in moved["comparisons"] if k["kind"] == "golden")["passed"] = False

    on_tpu = _verdict(tpu_base, tpu_cand, tmp_path)

    [contrast] = on_tpu.across_platforms
    assert contrast.here == "tpu (1 TPU v5 lite)" and contrast.there.startswith("cpu (1 cpu), judged ")
    assert [check for check, _ in contrast.only_here] == [unchanged]
    assert dict((check, why) for check, _, why in contrast.only_there) == {same: "unchanged",
                                                                           refused: platforms.NOT_HERE}
    assert contrast.on_both == len(changed) - 2
    assert contrast.drift == "none: every value kept exactly is the same bit for bit"  # the same baseline values
    text = render.text(on_tpu)
    assert f"only on tpu: {unchanged} (value changed)" in text
    assert f"only on cpu: {refused} (" in text and f"; on tpu: {platforms.NOT_HERE})" in text
    assert "(judged on tpu: 1 TPU v5 lite)" in on_tpu.headline


def test_the_chips_own_drift_counts_the_baseline_values_that_differ_from_the_cpus(tmp_path):
    _verdict(_on(BASE, "cpu", ["cpu"]), _on(CAND, "cpu", ["cpu"]), tmp_path)
    tpu_base = _on(BASE, "tpu", ["TPU v5 lite"])
    kept = next(k for c in tpu_base["checks"] for k in c["comparisons"]
                if k.get("count") == 1 and k.get("values") and k["values"].get("dtype") == "float32"
                and k["values"].get("values") and isinstance(k["values"]["values"][0], float)
                and k["values"]["values"][0] != 0)
    value = np.float32(kept["values"]["values"][0])
    kept["values"]["values"][0] = float(np.nextafter(value, np.float32(np.inf)))  # one ulp up, on the chip
    kept["values"]["digest"] = "another digest"  # as the entry would have hashed the moved values
    on_tpu = _verdict(tpu_base, _on(CAND, "tpu", ["TPU v5 lite"]), tmp_path)
    assert on_tpu.across_platforms[0].drift.startswith("1 of ")
    assert "max 1 ulp" in on_tpu.across_platforms[0].drift


def test_records_of_other_pins_are_never_read_and_an_accelerator_without_one_says_how_to_get_it(tmp_path):
    other = copy.deepcopy(CAND)
    other["environment"]["versions"]["optax"] = "0.2.7"
    _verdict(_on(BASE, "cpu", ["cpu"]), _on(other, "cpu", ["cpu"]), tmp_path)
    on_tpu = _verdict(_on(BASE, "tpu", ["TPU v5 lite"]), _on(CAND, "tpu", ["TPU v5 lite"]), tmp_path)
    assert on_tpu.across_platforms == []
    assert "no verdict on the CPU for the same pins yet" in render.text(on_tpu)
    # On a TPU host JAX's own choice is the chip: the CPU's verdict is asked for by name, not by leaving it out.
    assert "run the same upgrade with --platform cpu" in render.text(on_tpu)
    assert len(list(tmp_path.glob("*.json"))) == 2  # one record per pins and platform


def test_a_cpu_verdict_alone_says_nothing_across_platforms(tmp_path):
    text = render.text(_verdict(_on(BASE, "cpu", ["cpu"]), _on(CAND, "cpu", ["cpu"]), tmp_path))
    assert "Across platforms" not in text and "Same pins on" not in text
    assert platform_marks.others(tmp_path, "x", "tpu") == []
