"""The host's CPU as /proc/cpuinfo names it: its model, and the instruction-set features that change what
XLA on CPU computes. Where the CPU does 16-bit arithmetic natively (avx512_bf16, avx512_fp16, AMX; Arm's bf16,
fphp), XLA rounds every bfloat16 intermediate; elsewhere it may keep float32 inside a fusion: the same pins
give 16-bit values a few ulps apart by host. A golden file's provenance names the recording host, so a
mismatch on another host says so. Pure parsing: the caller reads the file."""

from __future__ import annotations

# x86 and Arm names of the features that decide XLA's vector code and its 16-bit arithmetic.
NUMERICS_FEATURES = frozenset({"avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16",
                               "asimdhp", "fphp", "bf16", "sve"})


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's model and features, from /proc/cpuinfo's text (x86 and Arm names)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("model name", "flags", "Features", "CPU implementer", "CPU part"):
            fields.setdefault(name.strip(), value.strip())
    return fields


def describe(cpuinfo: str) -> dict:
    """{"cpu": the model, "numerics_features": the NUMERICS_FEATURES it has, sorted}: what a golden file's
    provenance records of its host."""
    fields = cpu_fields(cpuinfo)
    model = fields.get("model name") or (
        f"Arm {fields['CPU implementer']} part {fields.get('CPU part', '?')}" if "CPU implementer" in fields else "unknown")
    features = (fields.get("flags") or fields.get("Features") or "").split()
    return {"cpu": model, "numerics_features": sorted(NUMERICS_FEATURES.intersection(features))}


def difference(recorded: dict | None, here: dict) -> str | None:
    """What a golden mismatch adds when its values were recorded on a CPU with other numerics features;
    None on the same features, or when the recording host is not known (recorded before hosts were noted)."""
    if not recorded or set(recorded.get("numerics_features", [])) == set(here.get("numerics_features", [])):
        return None
    theirs, mine = set(recorded.get("numerics_features", [])), set(here.get("numerics_features", []))
    parts = [f"this machine has {', '.join(sorted(mine - theirs))}" if mine - theirs else "",
             f"lacks {', '.join(sorted(theirs - mine))}" if theirs - mine else ""]
    return (f"the golden values were recorded on another CPU ({recorded.get('cpu', 'unknown')}): "
            f"{' and '.join(p for p in parts if p)}; XLA's 16-bit arithmetic can round differently there "
            "(docs/tolerances.md): a 16-bit value a few ulps off may be the machine, not the stack")
