"""The version matrix: the one place that says which stacks the harness compares.

The pins live in harness/matrix.toml (data, so `nox -s accept` can rewrite them safely); a team's
project takes its baseline from its own files and its default candidate from here
(harness.stack.project). Every other part (noxfile sessions, lock files, reports, the upgrade verdict) reads the
entries from here. Entries pin python, jax, jaxlib, optax, flax and numpy.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from harness.atomic import atomic_write_text
from harness.errors import HarnessError
from harness.model.report import STACK_VERSION_KEYS
from harness.stack import paths

PACKAGES = STACK_VERSION_KEYS[1:]  # what an entry pins besides python: jax, jaxlib, optax, flax, numpy

# What a project may leave unpinned when its code does not import it: its entries then install none
# (nothing else of the stack depends on it) and the built-in families that need it do not run.
OPTIONAL = ("flax",)

# Packages that are bumped together when attributing a change: jaxlib follows jax.
GROUPS = {"jax": ("jax", "jaxlib"), "optax": ("optax",), "flax": ("flax",), "numpy": ("numpy",)}

BASELINE = "baseline"
CANDIDATE = "candidate"


_VERSION = re.compile(r"^[A-Za-z0-9_.+!\-]+$")
_PYTHON_VERSION = re.compile(r"^3\.[0-9]+$")


@dataclasses.dataclass(frozen=True)
class Pins:
    """matrix.toml: the Python of every entry, and the baseline's and the candidate's package pins."""

    python: str
    baseline: dict[str, str]
    candidate: dict[str, str]
    # Where each side's pins were read (a team's: `origin/main:requirements.txt`); None: this file.
    baseline_from: str | None = None
    candidate_from: str | None = None
    # The rest of a team's set, which every entry installs too (harness.stack.pins.pins_from.TeamPins); none here.
    baseline_with: tuple[str, ...] = ()


def matrix_path() -> Path:
    return paths.DEFAULT_MATRIX


def _table(data: dict, name: str, source: Path) -> dict[str, str]:
    table = data.get(name)
    if not isinstance(table, dict) or set(table) != set(PACKAGES):
        found = sorted(table) if isinstance(table, dict) else "nothing"
        raise HarnessError(f"{source}: [{name}] must pin exactly {', '.join(PACKAGES)} (found {found}); "
                           "fix the file (git diff shows what changed).")
    bad = [k for k, v in table.items() if not isinstance(v, str) or not _VERSION.match(v)]
    if bad:
        raise HarnessError(f"{source}: [{name}] {', '.join(bad)}: write each pin as an exact version string, "
                           'e.g. jax = "0.11.2".')
    return {pkg: table[pkg] for pkg in PACKAGES}


def parse_pins(text: str, source: Path) -> Pins:
    """matrix.toml's text as checked pins; HarnessError naming the file and the fix when it is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HarnessError(f"{source} is not valid TOML ({exc}); fix it (git diff shows what changed).") from None
    python = data.get("python")
    if not isinstance(python, str) or not _PYTHON_VERSION.match(python):
        raise HarnessError(f'{source}: python must be a major.minor version string, e.g. python = "3.12".')
    return Pins(python, _table(data, "baseline", source), _table(data, "candidate", source))


def load_pins(path: Path) -> Pins:
    """Read and check a matrix.toml (read at every call: `nox -s accept` rewrites it). The pins of the
    project being judged, this checkout's or a team's, are harness.stack.pins.current's."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise HarnessError(f"{path} is missing; restore it with `git checkout -- {path.name}`.") from None
    except OSError as exc:
        raise HarnessError(f"{path} is unreadable ({exc.strerror or exc}); fix its permissions.") from None
    return parse_pins(text, path)


def render_pins(pins: Pins, header: str) -> str:
    """matrix.toml's fixed format: the header comments, python, then the two tables in PACKAGES order."""
    lines = [header.rstrip("\n"), "", f'python = "{pins.python}"']
    for name, table in (("baseline", pins.baseline), ("candidate", pins.candidate)):
        lines += ["", f"[{name}]", *(f'{pkg} = "{table[pkg]}"' for pkg in PACKAGES)]
    return "\n".join(lines).lstrip("\n") + "\n"


def header_of(text: str) -> str:
    """The comment lines (and blank lines between them) before matrix.toml's first setting."""
    lines = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            break
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n")


def write_pins(pins: Pins, path: Path | None = None) -> None:
    """Rewrite matrix.toml keeping its header comments; refuses pins that would not read back the same."""
    path = path or matrix_path()
    text = render_pins(pins, header_of(path.read_text() if path.exists() else ""))
    if parse_pins(text, path) != pins:
        raise HarnessError(f"cannot write {path}: the pins would not read back unchanged ({pins}).")
    atomic_write_text(path, text)


PYTHON = load_pins(matrix_path()).python  # the default; a project may set its own (project_pins)


@dataclasses.dataclass(frozen=True)
class Entry:
    """One stack to run the contract suite in."""

    name: str
    pins: dict[str, str]
    description: str
    python: str = PYTHON
    locked: bool = True  # False for an ad-hoc candidate: resolved live, no lock file.
    # Set by the upgrade's plan (harness.stack.pins.plan), which resolves every entry before any suite runs:
    lock_file: str | None = None  # the lock it resolved (installed as is, never resolved again)
    notes: tuple[str, ...] = ()  # why pins differ from what was asked ("flax 0.12.12 → 0.12.6: ...")
    resolved_at: str | None = None
    problem: str | None = None  # why it could not be resolved: it is reported unresolvable, not run
    pins_from: str | None = None  # where its pins were read: "origin/main:requirements.txt", "--candidate ..."
    # The rest of the team's set it installs with its pins, as its pins file says (`chex==0.1.92`, `pywin32==306;
    # sys_platform == "win32"`): kept unless the pins force a move (harness.stack.pins.resolve). None in this checkout.
    locked_with: tuple[str, ...] = ()

    @property
    def requirements(self) -> list[str]:
        """Its pins as requirement lines (the rest of its set: locked_with)."""
        return [f"{pkg}=={self.pins[pkg]}" for pkg in PACKAGES if pkg in self.pins]

    @property
    def pin_text(self) -> str:
        return " ".join(self.requirements)


def bumped_groups(base: dict[str, str], other: dict[str, str]) -> list[str]:
    """The package groups whose pins differ between two stacks."""
    return [g for g, pkgs in GROUPS.items() if any(base.get(p) != other.get(p) for p in pkgs)]


def single_package_entries(base: Entry, candidate: Entry) -> list[Entry]:
    """One entry per bumped group, the rest at baseline: tells which package caused a change."""
    groups = bumped_groups(base.pins, candidate.pins)
    if len(groups) < 2:
        return []
    entries = []
    for group in groups:
        pins = dict(base.pins)
        pins.update({p: candidate.pins[p] for p in GROUPS[group] if p in candidate.pins})
        entries.append(
            Entry(
                name=f"{group}-only",
                pins=pins,
                description=f"baseline with only {'/'.join(GROUPS[group])} bumped to the candidate",
                python=base.python,
                locked=candidate.locked,
                locked_with=base.locked_with,  # the baseline's set, only the group bumped
            )
        )
    return entries


_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([A-Za-z0-9_.+\-!]+)\s*$")


LATEST = "latest"  # `--candidate latest`, or `optax==latest`: the newest release that resolves
LATEST_PACKAGES = ("jax", "jaxlib", "optax", "flax")  # what `--candidate latest` moves


@dataclasses.dataclass(frozen=True)
class CandidateRequest:
    """`--candidate` as typed, parsed once where it comes in: the pins it names (a version may be LATEST)."""

    text: str
    pins: dict[str, str]
    source: str | None = None  # the file it was read from (`--candidate-from`); None: typed as `--candidate`
    locked_with: tuple[str, ...] = ()  # the rest of that file's set (typed: the baseline's set is kept)

    @classmethod
    def parse(cls, text: str) -> CandidateRequest:
        return cls(text, parse_candidate(text))


def parse_candidate(text: str) -> dict[str, str]:
    """Parse `--candidate "jax==X jaxlib==X optax==Y flax==Z"` (a version may be `latest`; the whole
    candidate may be `latest`) into pins."""
    pins: dict[str, str] = {}
    for token in text.replace(",", " ").split():
        if token.lower() == LATEST:
            pins.update({pkg: LATEST for pkg in LATEST_PACKAGES})
            continue
        match = _REQ.match(token)
        if not match:
            raise HarnessError(
                f"--candidate: cannot read {token!r}. Write exact pins (or `latest`) separated by spaces, "
                f'e.g. --candidate "jax==0.12.0.1 jaxlib==0.12.0.1 optax==latest", or --candidate latest.'
            )
        name = match.group(1).lower().replace("_", "-")
        if name not in PACKAGES:
            raise HarnessError(
                f"--candidate: {name!r} is not a package the matrix pins; "
                f"the candidate may pin {', '.join(PACKAGES)}."
            )
        pins[name] = LATEST if match.group(2).lower() == LATEST else match.group(2)
    for group in GROUPS.values():  # jax==latest takes the newest jaxlib too, unless one is named
        if any(pins.get(p) == LATEST for p in group):
            pins.update({p: LATEST for p in group if p not in pins})
    if not pins:
        raise HarnessError('--candidate is empty; give pins such as "jax==0.12.0.1 jaxlib==0.12.0.1".')
    return pins


def entries(pins: Pins, candidate_override: CandidateRequest | None = None, *, committed: bool,
            baseline_given: bool = False) -> dict[str, Entry]:
    """All matrix entries of `pins` by name, with the candidate replaced when an ad-hoc one is given.
    committed: whether the candidate's lock is committed (this checkout's); a project's is resolved by the plan.
    baseline_given: whether this run's --baseline-from chose the baseline's pins (resolved for the run)."""
    py, locked = pins.python, committed
    # A one-run --baseline-from is resolved for the run, never written over the committed lock.
    baseline = Entry(BASELINE, dict(pins.baseline), "the pinned stack the golden values come from", py,
                     locked=not baseline_given, pins_from=pins.baseline_from or paths.MATRIX_FILE,
                     locked_with=pins.baseline_with)
    if candidate_override:
        adhoc = dict(pins.baseline)
        adhoc.update(candidate_override.pins)
        source = candidate_override.source
        candidate = Entry(CANDIDATE, adhoc, f"the pins of {source}" if source else "ad-hoc candidate given with "
                          "--candidate", py, locked=False,
                          pins_from=source or f"--candidate {candidate_override.text!r}",
                          locked_with=candidate_override.locked_with if source else pins.baseline_with)
    else:
        candidate = Entry(CANDIDATE, dict(pins.candidate), "the newest releases: the bump under review", py,
                          locked=locked, pins_from=pins.candidate_from or paths.MATRIX_FILE,
                          locked_with=pins.baseline_with)
    skew_pins = dict(pins.baseline, jax=pins.candidate["jax"])
    result = {e.name: e for e in [baseline, candidate, *single_package_entries(baseline, candidate)]}
    if not candidate_override and locked:
        result["jaxlib-skew"] = Entry(
            "jaxlib-skew", skew_pins, "new jax on the baseline jaxlib, a pairing jax allows", py,
            locked_with=pins.baseline_with,
        )
    return result


def upgrade_plan(all_entries: dict[str, Entry]) -> list[Entry]:
    """What `nox -s upgrade` runs: baseline, candidate, and the single-package entries."""
    base, cand = all_entries[BASELINE], all_entries[CANDIDATE]
    return [base, cand, *single_package_entries(base, cand)]
