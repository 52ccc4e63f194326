"""A change in a reviewer's words: what the check's input was, what the baseline did, what this entry
does, and by how much, without the harness's internal key prefixes (those stay in the JSON).
"""

from __future__ import annotations

import dataclasses
import os

from harness.model import departure
from harness.model.enums import ComparisonKind, Mark
from harness.model.verdict import KeyMove
from harness import numerical_noise
from harness.model.report import (EXACT, NAN_STEPS_FACT, CheckRecord, Comparison, Json, NoiseJudgement, Tolerance,
                                  WorstElement)
from harness.verdict import bits, classify

SHORT = 90  # characters of a value shown before "…"


@dataclasses.dataclass(frozen=True)
class Explanation:
    before: str  # what the baseline did
    after: str  # what this entry does
    size: str  # how far apart, in ulps or percent where numeric ("" when not numeric)


def _numbers(value: Json) -> Json:
    """Floats with 9 significant digits (enough to tell float32 values apart), lists kept."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    return [_numbers(v) for v in value] if isinstance(value, list) else value


def short(value: Json, limit: int = SHORT) -> str:
    text = value if isinstance(value, str) else repr(_numbers(value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _error_words(name: str | None) -> str:
    return "no error" if name is None else f"raises {name}"


def _error(check: CheckRecord, comparison: Comparison) -> Explanation:
    key = comparison.label.split(":", 1)[-1]
    seen = check.errors_observed.get(key)
    after = _error_words(comparison.observed)
    if seen is not None and comparison.observed is None and isinstance(seen.result, list):
        after += f" (returns {len(seen.result)} array{'s' * (len(seen.result) != 1)})"
    elif seen is not None and seen.message:
        after += f": {short(seen.message, 70)}"
    return Explanation(_error_words(comparison.expected), after, "")


def _max_ulps(comparison: Comparison) -> int | None:
    """The largest move in ulps of the comparison's own dtype, from the exactly kept values."""
    after = comparison.values.values if comparison.values is not None else None
    if not after or not isinstance(comparison.expected, list) or len(after) != len(comparison.expected):
        return None
    pairs = [(e, a) for e, a in zip(comparison.expected, after) if isinstance(e, (int, float))
             and isinstance(a, (int, float))]
    try:
        return max((bits.ulps_between(e, a, comparison.dtype) for e, a in pairs), default=None)
    except (ValueError, OverflowError, KeyError):
        return None


def _numeric_size(comparison: Comparison) -> str:
    tolerance = comparison.tolerance
    parts = []
    moved = _max_ulps(comparison)
    if moved:
        parts.append(f"{moved} ulp of {comparison.dtype}")
    if comparison.max_rel_err is not None:
        parts.append(f"{comparison.max_rel_err * 100:.3g}% max rel err")
    if isinstance(tolerance, Tolerance) and comparison.tolerance_used is not None:
        allclose = f" (assert_allclose {comparison.allclose.shown})" if comparison.allclose else ""
        parts.append(f"{comparison.tolerance_used:.3g}x its {tolerance.ulps:g} ulp tolerance{allclose}")
    if comparison.mismatched and comparison.size:
        parts.append(f"{comparison.mismatched} of {comparison.size} values")
    if comparison.noise is not None:
        parts.append(noise_size(comparison.noise))
    return ", ".join(parts)


def _where(comparison: Comparison, diffs: list[tuple[str, Json, Json]]) -> str:
    """Where the differing leaves are: a layout's leaf names (".acc_grads['bias']"), else their paths."""
    if classify.is_layout(comparison.expected):
        names = [comparison.expected[int(p[1:].split("]", 1)[0])][0] for p, _, _ in diffs]
    else:
        names = [p.lstrip(".") for p, _, _ in diffs]
    names = [n for n in dict.fromkeys(names) if n]
    return f" (at {', '.join(names[:6])}{', …' if len(names) > 6 else ''})" if names else ""


def _nan_steps(fact: Json) -> str:
    steps = fact.get("steps", []) if isinstance(fact, dict) else []
    return f"NaN at steps {', '.join(map(str, steps))}" if steps else "no NaN"


def _numeric(comparison: Comparison) -> Explanation:
    """Values kept exactly (NaN and inf as words, which the plain JSON lists cannot hold)."""
    after = comparison.values.values
    appeared = sum(isinstance(v, str) and not isinstance(e, str) for v, e in zip(after, comparison.expected))
    size = f"NaN/inf in {appeared} of {len(after)} values where the baseline had numbers" if appeared else \
        _numeric_size(comparison)
    return Explanation(short(comparison.expected), short(after), size)


def _fact(comparison: Comparison) -> Explanation:
    if comparison.label.endswith(f"/{NAN_STEPS_FACT}"):
        return Explanation(_nan_steps(comparison.expected), _nan_steps(comparison.observed), "")
    diffs = classify.differing_leaves(comparison.expected, comparison.observed)
    if diffs and all(classify.is_dtype_name(a) and classify.is_dtype_name(b) for _, a, b in diffs):
        pairs = list(dict.fromkeys((a, b) for _, a, b in diffs))
        before = " / ".join(dict.fromkeys(a for a, _ in pairs))
        return Explanation(before, " / ".join(dict.fromkeys(b for _, b in pairs)) + _where(comparison, diffs), "")
    if classify.is_layout(comparison.expected) and classify.is_layout(comparison.observed):
        before = {tuple(map(str, x)) for x in comparison.expected}
        after = {tuple(map(str, x)) for x in comparison.observed}
        return Explanation(short([x for x in comparison.expected if tuple(map(str, x)) not in after] or "same leaves"),
                           short([x for x in comparison.observed if tuple(map(str, x)) not in before] or "same leaves"),
                           "")
    return Explanation(short(comparison.expected), short(comparison.observed), "")


def _key(comparison: Comparison) -> str:
    """'final_params/dense1/b' for 'golden:final_params/dense1/b'."""
    return comparison.label.split(":", 1)[-1]


def _at(worst: WorstElement) -> str:
    return f"[{', '.join(map(str, worst.index))}]" if worst.index else ""


def _worst_element(failing: list[Comparison], compared: int) -> Explanation:
    """Arrays too large to show whole, or several leaves of a tree: the element furthest outside its
    tolerance, before -> after, its size, and how many values and leaves moved."""
    worst = max(failing, key=lambda c: (c.tolerance_used or 0.0, c.max_rel_err or 0.0))
    element = worst.worst
    parts = []
    if element.ulps is not None:
        ulp_dtype = worst.tolerance.ulp_dtype if isinstance(worst.tolerance, Tolerance) else None
        parts.append(f"{element.ulps:.3g} ulp of {ulp_dtype or worst.dtype}")
    elif isinstance(element.observed, str) or isinstance(element.expected, str):
        parts.append("NaN/inf where the baseline had " + ("a number" if isinstance(element.observed, str)
                                                          else element.expected))
    if worst.max_rel_err is not None:
        parts.append(f"{worst.max_rel_err * 100:.3g}% max rel err")
    if worst.size:
        parts.append(f"{worst.mismatched} of {worst.size} values")
    if compared > 1:
        parts.append(f"{len(failing)} of {compared} leaves outside tolerance")
    noise = max((c.noise for c in failing if c.noise is not None), key=lambda n: n.used, default=None)
    if noise is not None:
        parts.append(noise_size(noise))
    return Explanation(f"{_key(worst)}{_at(element)} = {short(element.expected)}", short(element.observed),
                       ", ".join(parts))


def _number(value: Json) -> str:
    """A kept value whole: a float in the digits that tell float32 values apart, never cut."""
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def _key_move(check: CheckRecord, comparison: Comparison) -> KeyMove:
    """One failing comparison as the value it is about: before → after in numbers, and its size."""
    key = _key(comparison)
    element = comparison.worst
    if element is not None:
        at = _at(element)
        parts = [f"{element.ulps:.3g} ulp of {comparison.dtype}"] if element.ulps is not None else []
        parts += [f"{comparison.max_rel_err * 100:.3g}% max rel err"] if comparison.max_rel_err is not None else []
        parts += [f"{comparison.mismatched} of {comparison.size} values"] if comparison.size else []
        return KeyMove(key, f"{at} {_number(element.expected)}".strip(), f"{at} {_number(element.observed)}".strip(),
                       ", ".join(parts))
    if comparison.kind == ComparisonKind.ERROR_CONTRACT:
        told = _error(check, comparison)
    elif isinstance(comparison.expected, list) and comparison.values is not None and comparison.values.values:
        told = _numeric(comparison)
    else:
        told = _fact(comparison)
    return KeyMove(key, told.before, told.after, told.size)


def key_moves(check: CheckRecord | None) -> list[KeyMove]:
    """Every comparison the check fails, each as its value's move (a check names every golden key that differs)."""
    if check is None:
        return []
    return [_key_move(check, c) for c in check.comparisons if not c.passed]


def noise_size(noise: NoiseJudgement) -> str:
    """'0.38x the 1.2e-07 allowed (4x the noise measured on the baseline)': a move against its noise; a noise
    measured as 0 (the perturbed compilations did not move the value) said as such, not as none measured."""
    if noise.measured > 0:
        return (f"{noise.used:.2g}x the {noise.allowed:.2g} allowed ({numerical_noise.FACTOR:g}x the noise measured "
                "when it was recorded)")
    return "its noise measured as 0 when it was recorded (the perturbed compilations did not move it): no allowance"


def _within_noise(other: CheckRecord) -> Explanation:
    """A check whose golden values moved beyond their ulps within their noise: the element furthest outside its
    ulps, its size at the value, and the move against the noise."""
    moved = classify.within_noise(other)
    worst = max(moved, key=lambda c: c.noise.used)
    element = worst.worst
    parts = []
    if element is not None and element.ulps is not None:
        ulp_dtype = worst.tolerance.ulp_dtype if isinstance(worst.tolerance, Tolerance) else None
        parts.append(f"{element.ulps:.3g} ulp of {ulp_dtype or worst.dtype} at the value")
    parts.append(f"{len(moved)} golden value{'s' * (len(moved) != 1)} within noise, up to {noise_size(worst.noise)}")
    if element is None:
        return Explanation(_key(worst), "", ", ".join(parts))
    return Explanation(f"{_key(worst)}{_at(element)} = {short(element.expected)}", short(element.observed),
                       ", ".join(parts))


def reversed_move(told: Explanation) -> tuple[str, str]:
    """Before and after of a move told the other way round (the golden values first, then what differs from
    them): what it names stays in front ('key[i] = ', the leaves '(at ...)' last)."""
    before, after = told.before, told.after
    name = ""
    if " = " in before:
        name, before = before.split(" = ", 1)
        name += " = "
    where = ""
    if after.endswith(")") and " (at " in after:
        after, where = after.split(" (at ", 1)
        where = " (at " + where
    return f"{name}{after}", f"{before}{where}"


def explain(base: CheckRecord | None, other: CheckRecord | None, mark: Mark) -> Explanation:
    """Before, after and size of one check's change on an entry."""
    if mark == Mark.MISSING:
        return Explanation("ran", "did not run" + (f": {short(other.message)}" if other else ""), "")
    if mark == Mark.NOISE and other is not None:
        return _within_noise(other)
    if other is None or not mark.changes_contract:
        return Explanation("", "", "")
    failed = classify.first_failure(other)
    if failed is None:  # ended by an exception, or a property whose example failed
        return Explanation("passed", short(other.falsifying_example or other.message, 160), "")
    if failed.kind == ComparisonKind.ERROR_CONTRACT:
        return _error(other, failed)
    if failed.departure is not None and failed.departure.holds_again:  # the baseline's recorded departure gone
        stated = departure.stated(failed.departure)
        return Explanation(f"{failed.label} departs from its stated {stated} "
                           f"({departure.size_text(failed.departure.size)})", "holds it again", "")
    numeric = [c for c in other.comparisons if c.values is not None and c.kind != ComparisonKind.BOUND]
    failing = [c for c in numeric if not c.passed and c.worst is not None]
    if failed.worst is not None and (len(failing) > 1 or not isinstance(failed.expected, list)):
        return _worst_element(failing, len(numeric))
    if isinstance(failed.expected, list) and failed.values is not None and failed.values.values is not None:
        return _numeric(failed)
    if failed.tolerance != EXACT and isinstance(failed.expected, list):
        return Explanation(short(failed.expected), short(failed.observed), _numeric_size(failed))
    return _among_facts(other, failed, _fact(failed))


def _among_facts(check: CheckRecord, failed: Comparison, told: Explanation) -> Explanation:
    """A golden fact of a check that holds several (a transform's finiteness after each step): the part of its key
    that tells it from the others named ("step 1 updates = {...}"), and how many more of them differ, so the line
    says which one moved. A check with one fact is told as it was."""
    facts = [c for c in check.comparisons if c.kind == failed.kind == ComparisonKind.GOLDEN
             and c.tolerance == EXACT and c.values is None and c.label.startswith("golden:")]
    if len(facts) < 2 or " = " in told.before:
        return told
    keys = [_key(c) for c in facts]
    shared = os.path.commonprefix(keys)
    shared = shared[:shared.rfind("/") + 1]  # whole key parts: "nonfinite/optax.adamw/"
    name = _key(failed)[len(shared):] or _key(failed)
    more = sum(not c.passed for c in facts) - 1
    after = told.after + (f" (and {more} more of its {len(facts)} facts)" if more else "")
    return dataclasses.replace(told, before=f"{name} = {told.before}", after=after)
