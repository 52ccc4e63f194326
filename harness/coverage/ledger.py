"""The committed ledger (harness/coverage/ledger.toml): every public callable of the libraries a training step
calls (harness.coverage.libraries: Optax, the parts of Flax and JAX) is in scope, with the contract that
exercises each of its parameters, or out of scope with a one-line reason.

An in-scope callable is covered when every parameter names a contract and nothing is listed as
missing; otherwise it is a gap, and the ledger says what is missing (`missing` for the callable and
all its parameters, `gaps` for single parameters). Gaps are allowed only where the ledger lists them: the audit fails on
a callable or parameter it does not account for (harness.coverage.audit).
"""

from __future__ import annotations

import dataclasses
import enum
import tomllib
from pathlib import Path

from harness.errors import HarnessError

LEDGER = Path(__file__).resolve().parent / "ledger.toml"


class Area(enum.Enum):
    """What a user reaches for the callable to do: the areas in scope."""

    ACCUMULATE = "accumulate"
    SCHEDULE = "schedule"
    CLIP = "clip"  # clip or normalise gradients
    MASK = "mask"  # mask, route or skip updates
    WEIGHT_DECAY = "weight_decay"
    OPTIMIZER = "optimizer"  # an optimizer a team builds its step from (optax.adam, optax.sgd)
    UPDATE_RULE = "update_rule"  # a transform an optimizer is built from (optax.scale_by_adam, optax.trace)
    LOSS = "loss"  # a loss function a step minimises, or a helper of its targets (optax.softmax_cross_entropy)
    TRAIN_STATE = "train_state"  # what a Flax step updates through: nnx.Optimizer, TrainState, their methods
    ACTIVATION = "activation"  # a function a model applies to its activations (jax.nn.relu, jax.nn.softmax)
    INITIALIZER = "initializer"  # how a model's parameters are first drawn (jax.nn.initializers)
    RANDOM = "random"  # the PRNG a step draws from: keys, splits, dropout's and shuffling's draws


# The areas whose callables a training step differentiates through: each says which contracts take its gradient
# at the edges of its formula (saturation, ties, zeros, the dtype's extremes, NaN and inf), or why it has none.
GRADIENT_AREAS = (Area.LOSS, Area.ACTIVATION)


@dataclasses.dataclass(frozen=True)
class InScope:
    name: str
    area: Area
    params: dict[str, tuple[str, ...]]  # parameter -> the contracts exercising it at a non-default value
    gaps: dict[str, str]  # parameter -> what is missing
    missing: str | None  # what is missing for the callable as a whole (no contract yet)
    calls: tuple[str, ...] = ()  # further contracts that call it (the only ones for a callable without parameters)
    gradient: tuple[str, ...] = ()  # the contracts that take its gradient at the edges of its formula
    no_gradient: str | None = None  # why it has no gradient to check (GRADIENT_AREAS only)
    # a kind argument (harness.coverage.kinds) -> each of its values past the default and the off value of a flag
    # -> the contracts that pass it
    values: dict[str, dict[str, tuple[str, ...]]] = dataclasses.field(default_factory=dict)

    @property
    def covered(self) -> bool:
        return self.missing is None and not self.gaps and bool(self.contracts())

    def contracts(self) -> set[str]:
        return ({c for ids in self.params.values() for c in ids} | set(self.calls)
                | {c for by_value in self.values.values() for ids in by_value.values() for c in ids})


@dataclasses.dataclass(frozen=True)
class Ledger:
    path: Path
    in_scope: dict[str, InScope]
    out_of_scope: dict[str, str]  # name -> why
    # An out-of-scope callable -> the in-scope ones it builds on (its contracts run for a team that calls it).
    built_on: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def of(self, package: str) -> Ledger:
        """The lines of one library (the first part of each name: optax, flax, jax)."""
        def mine(name: str) -> bool:
            return name.split(".", 1)[0] == package
        return Ledger(self.path, {n: e for n, e in self.in_scope.items() if mine(n)},
                      {n: w for n, w in self.out_of_scope.items() if mine(n)},
                      {n: b for n, b in self.built_on.items() if mine(n)})


def _problem(path: Path, where: str, what: str) -> HarnessError:
    return HarnessError(f"{path}: {where}: {what}")


def _ids(path: Path, where: str, value) -> tuple[str, ...]:
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and "/" in v for v in value):
        raise _problem(path, where, 'name a contract as "family/test_name" (or a list of them)')
    return tuple(value)


def _texts(path: Path, where: str, table) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(v, str) and v.strip() for v in table.values()):
        raise _problem(path, where, 'give each name a one-line text: name = "why"')
    return dict(table)


def _in_scope(path: Path, name: str, entry) -> InScope:
    where = f"[in_scope.{name!r}]"
    if not isinstance(entry, dict):
        raise _problem(path, where, "must be a table")
    keys = {"area", "params", "gaps", "missing", "contracts", "gradient", "no_gradient", "values"}
    unknown = set(entry) - keys
    if unknown:
        raise _problem(path, where, f"unknown keys {sorted(unknown)}; the keys are {', '.join(sorted(keys))}")
    try:
        area = Area(entry.get("area"))
    except ValueError:
        raise _problem(path, where, f"area must be one of {[a.value for a in Area]}") from None
    params = entry.get("params", {})
    if not isinstance(params, dict):
        raise _problem(path, where + ".params", "must be a table: parameter = \"family/test_name\"")
    missing = entry.get("missing")
    if missing is not None and (not isinstance(missing, str) or not missing.strip()):
        raise _problem(path, where + ".missing", "say in one line what is missing")
    calls = _ids(path, where + ".contracts", entry["contracts"]) if "contracts" in entry else ()
    if missing is None and not params and not calls:
        raise _problem(path, where, 'name the contracts that call it (contracts = ["family/test_name"]) or say what is missing')
    gradient = _ids(path, where + ".gradient", entry["gradient"]) if "gradient" in entry else ()
    no_gradient = entry.get("no_gradient")
    if no_gradient is not None and (not isinstance(no_gradient, str) or not no_gradient.strip()):
        raise _problem(path, where + ".no_gradient", "say in one line why it has no gradient to check")
    if gradient and no_gradient is not None:
        raise _problem(path, where, "give gradient or no_gradient, not both")
    return InScope(name, area, {p: _ids(path, f"{where}.params.{p}", v) for p, v in params.items()},
                   _texts(path, where + ".gaps", entry.get("gaps", {})), missing, calls, gradient, no_gradient,
                   _values(path, where + ".values", entry.get("values", {})))


def _values(path: Path, where: str, table) -> dict[str, dict[str, tuple[str, ...]]]:
    """[in_scope."NAME".values]: each kind argument -> { value = "family/test_name" or a list of them }."""
    if not isinstance(table, dict) or not all(isinstance(v, dict) and v for v in table.values()):
        raise _problem(path, where, 'must be a table: parameter = { value = "family/test_name", ... }')
    return {param: {value: _ids(path, f"{where}.{param}.{value}", ids) for value, ids in by_value.items()}
            for param, by_value in table.items()}


def read(path: Path = LEDGER) -> Ledger:
    """The ledger, checked for form (what it says is checked against the surface by the audit)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read the ledger ({exc}); restore it with git checkout.") from exc
    unknown = set(data) - {"in_scope", "out_of_scope", "built_on"}
    if unknown:
        raise _problem(path, "top level", f"unknown tables {sorted(unknown)}; the tables are in_scope, out_of_scope, "
                                          "built_on")
    in_scope = {name: _in_scope(path, name, e) for name, e in data.get("in_scope", {}).items()}
    out = _texts(path, "[out_of_scope]", data.get("out_of_scope", {}))
    both = sorted(set(in_scope) & set(out))
    if both:
        raise _problem(path, "in_scope and out_of_scope", f"{both[0]} is in both; keep one line")
    return Ledger(path, in_scope, out, _built_on(path, data.get("built_on", {}), in_scope, out))


def _built_on(path: Path, table, in_scope: dict[str, InScope], out: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """[built_on]: each out-of-scope name -> in-scope names it builds on."""
    if not isinstance(table, dict):
        raise _problem(path, "[built_on]", 'must be a table: "optax.NAME" = ["optax.IN_SCOPE", ...]')
    found = {}
    for name, value in table.items():
        names = (value,) if isinstance(value, str) else value
        if name not in out or not isinstance(names, list | tuple) or not names or any(n not in in_scope for n in names):
            raise _problem(path, f"[built_on] {name!r}", "must be an out-of-scope name listing in-scope names")
        found[name] = tuple(names)
    return found
