"""The host's CPU as /proc/cpuinfo names it: its model, and the features that change what XLA on CPU
computes for the same program. Measured on the pinned baseline: native 16-bit arithmetic (avx512_bf16,
avx512_fp16, AMX; Arm's bf16 and fphp) makes XLA round every bfloat16 intermediate where other hosts keep
float32 inside a fusion (bfloat16 values a few ulps apart), and a CPU without fused multiply-add rounds
float32 products that others fuse (cancellations 9-11 ulps apart); the vector width (AVX2 or AVX-512) moved
nothing. A golden file's provenance names the recording host, so a mismatch on another host says so. Pure
parsing: the caller reads the file."""

from __future__ import annotations

# x86 and Arm names of those features (64-bit Arm always has fused multiply-add: no flag names it).
NUMERICS_FEATURES = frozenset({"fma", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16", "bf16", "fphp",
                               "asimdhp"})


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's model and features, from /proc/cpuinfo's text (x86 and Arm names)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("model name", "flags", "Features", "CPU implementer", "CPU part"):
            fields.setdefault(name.strip(), value.strip())
    return fields


def describe(cpuinfo: str) -> dict:
    """{"cpu": the model, "numerics_features": the NUMERICS_FEATURES it has, sorted, or None where the text
    names no features}: what a golden file's provenance records of its host."""
    fields = cpu_fields(cpuinfo)
    model = fields.get("model name") or (
        f"Arm {fields['CPU implementer']} part {fields.get('CPU part', '?')}" if "CPU implementer" in fields else "unknown")
    features = fields.get("flags") or fields.get("Features")
    return {"cpu": model,
            "numerics_features": None if features is None else sorted(NUMERICS_FEATURES.intersection(features.split()))}


def difference(recorded, here: dict) -> str | None:
    """What a golden mismatch adds when its values were recorded on a CPU with other numerics features;
    None on the same features, or when either host's features are not known (recorded before hosts were
    noted, or a machine without /proc/cpuinfo)."""
    theirs = recorded.get("numerics_features") if isinstance(recorded, dict) else None
    mine = here.get("numerics_features")
    if not isinstance(theirs, list) or not isinstance(mine, list) or set(theirs) == set(mine):
        return None
    theirs, mine = set(theirs), set(mine)
    parts = [f"has {', '.join(sorted(mine - theirs))}" if mine - theirs else "",
             f"lacks {', '.join(sorted(theirs - mine))}" if theirs - mine else ""]
    return (f"the golden values were recorded on another CPU ({recorded.get('cpu', 'unknown')}): this machine "
            f"{' and '.join(p for p in parts if p)}; XLA rounds differently there (16-bit intermediates, fused "
            "multiply-add; docs/tolerances.md): a value a few ulps off may be the machine, not the stack")
