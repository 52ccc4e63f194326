"""A team's project: its [tool.upgrade-harness] table, read and checked once.

    [tool.upgrade-harness]
    baseline-from = "requirements.txt"   # the baseline's pins: requirements.txt, uv.lock, poetry.lock or pyproject.toml
    contracts = ["contracts"]            # the project's own contract modules (pytest files using `check`)
    golden = "golden"                    # golden values, recorded from the baseline (commit them)
    locks = "locks"                      # the baseline's full lock (`upgrade-harness lock`; commit it)
    builtin = "report"                   # the built-in Optax contracts: "judge", "report", "all" or false
    pythonpath = ["."]                   # what the contracts import the project's code from
    python = "3.12"                      # optional: the entries' Python (default: the harness's)
    pins-outside-index = "ignore"        # optional: the baseline's file may have index options, URLs, paths, -e
    envs-size-limit = "10GiB"            # optional: unused entry environments in .nox/ are pruned beyond it
    re-recorded = "fail"                 # optional: golden values a branch re-records fail its pull-request check
                                         # until recorded with a reason ("fail", the default), or are listed ("report")
    [tool.upgrade-harness.candidate]     # optional: the default candidate (default: the harness's)
    optax = "0.2.8"

builtin: "judge" (every family runs and their changes decide the exit status, as yours do; `true` means
this too, and it is the default), "report" (only the built-in tests of what your code calls run, shown
after yours while only yours decide: harness.stack.selection), "all" (report every family), false (not
run). `--contracts DIR`, `--builtin judge|report|all`, `--no-builtin` and `--baseline-from [REV:]PATH` (a
file as a git revision holds it: harness.stack.pins_source) add to or override the table for one run.
This checkout is a project too: its own pins (harness/matrix.toml), locks/ and golden/.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from harness import golden_layout
from harness.errors import HarnessError
from harness.model.enums import BuiltinMode, ReportPart
from harness.model.golden_changes import Policy
from harness.stack import name_clash
from harness.stack.environments import envs
from harness.stack.pins_source import PinsSource, parse as parse_pins_source
from harness.stack.selection import team_code
from harness.stack.selection.select import Scope, Selection, select
from harness.stack.workspace import Workspace

TABLE = "upgrade-harness"
BUILTIN_PACKAGE = "harness.builtin"
KEYS = ("baseline-from", "contracts", "golden", "locks", "builtin", "pythonpath", "python", "candidate",
        "pins-outside-index", "envs-size-limit", "re-recorded")
OUTSIDE_INDEX = ("refuse", "ignore")  # pins-outside-index: what the baseline's file may say besides index pins
# The files of the project's code (its pythonpath folders) a contract's result may depend on: an entry's report
# key digests them (harness.stack.run.report_key), and a team's pull-request workflow runs when one changes.
CODE = (".py", ".pyi", ".pyx", ".so", ".ini", ".toml", ".cfg", ".json", ".yaml", ".yml")


@dataclasses.dataclass(frozen=True)
class Project:
    """Where one project keeps what the harness reads and writes."""

    root: Path
    own_contracts: tuple[Path, ...]  # the project's contract directories (none in this checkout)
    golden: Path
    locks: Path
    builtin: BuiltinMode  # what the built-in contracts count for (OFF: not run)
    baseline_from: Path | None  # None: this checkout's harness/matrix.toml
    pythonpath: tuple[Path, ...] = ()
    python: str | None = None
    candidate: dict[str, str] | None = None
    # "ignore": the baseline's file may point outside the package index (other indexes, URLs, paths, -e, git);
    # those lines are not installed, the rest of what it pins is, from the index. "refuse": it may not.
    pins_outside_index: str = "refuse"
    # Entry environments no current plan uses are pruned while all of them are over this (bytes; inf: never).
    envs_size_limit: float = envs.DEFAULT_LIMIT
    # What golden values a branch changed against the base branch's do to its check (harness.model.golden_changes).
    re_recorded: Policy = Policy.FAIL
    baseline_revision: str | None = None  # `--baseline-from REV:PATH`: baseline_from as git revision REV holds it
    builtin_scope: Scope = Scope.ALL  # which built-in families run: all, or those covering what the code calls
    imports_flax: bool = True  # whether the project's code imports flax (this checkout's contracts do)
    # The built-in families this run takes and why (load() decides; None: the whole package, as the checkout).
    selection: Selection | None = None

    @property
    def baseline_source(self) -> PinsSource | None:
        """Where the baseline's pins are read: baseline_from, at baseline_revision when one is given."""
        return None if self.baseline_from is None else PinsSource(self.baseline_from, self.baseline_revision)

    @property
    def suite(self) -> list[str]:
        """pytest's arguments for the contracts an entry runs, built-in first. The built-in ones by
        package or module name (--pyargs): the copy installed in the entry's environment, not the host's."""
        return self.builtin_suite + [str(p) for p in self.own_contracts]

    @property
    def builtin_suite(self) -> list[str]:
        """pytest's arguments for the built-in contracts the run takes (none when they are off)."""
        if self.builtin == BuiltinMode.OFF:
            return []
        if self.selection is None or (self.selection.scope == Scope.ALL and not self.selection.without_flax):
            return ["--pyargs", BUILTIN_PACKAGE]
        return ["--pyargs", *self.selection.modules] if self.selection.modules else []

    @property
    def has_own_tests(self) -> bool:
        """Whether the contract directories hold a test module (pytest's names): a project that `init` gave its
        contracts/ folder and no contract yet has none, and a run of them alone would find nothing."""
        return any(next(d.rglob("test_*.py"), None) or next(d.rglob("*_test.py"), None)
                   for d in self.own_contracts if d.is_dir())

    def suite_of(self, part: ReportPart) -> list[str]:
        """pytest's arguments for the contracts of one part of an entry's report (harness.stack.entry_side.parts)."""
        if part == ReportPart.OWN:
            return [str(p) for p in self.own_contracts]
        return self.builtin_suite if part == ReportPart.BUILTIN else self.suite

    def runs_family(self, family: str) -> bool:
        """Whether this run takes the built-in family (the data-parallel one runs in a process of its own)."""
        return self.builtin != BuiltinMode.OFF and (self.selection is None or self.selection.runs(family))


def find_root(start: Path) -> Path | None:
    """The nearest directory from `start` upwards whose pyproject.toml has a [tool.upgrade-harness] table."""
    for folder in [start, *start.parents]:
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and TABLE in read_toml(pyproject).get("tool", {}):
            return folder
    return None


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{path} cannot be read as TOML ({exc}); fix it and run again.") from None


def _strings(value, key: str, source: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise HarnessError(f'{source}: [tool.{TABLE}] {key} must be a path or a list of paths, e.g. {key} = ["contracts"].')
    return value


def _path(value, key: str, source: Path) -> str:
    if not isinstance(value, str) or not value:
        raise HarnessError(f'{source}: [tool.{TABLE}] {key} must be one path, e.g. {key} = "{key}".')
    return value


def _dirs(root: Path, names: list[str], what: str, source: str) -> tuple[Path, ...]:
    found = []
    for name in names:
        path = (root / name).resolve()
        if not path.is_dir():
            raise HarnessError(f"{what} directory {path} ({source}) does not exist; create it or fix the path.")
        found.append(path)
    return tuple(dict.fromkeys(found))


def _table(root: Path) -> dict:
    pyproject = root / "pyproject.toml"
    table = read_toml(pyproject).get("tool", {}).get(TABLE) if pyproject.is_file() else None
    if not isinstance(table, dict):
        raise HarnessError(f"{pyproject} has no [tool.{TABLE}] table; run `upgrade-harness init` in {root}.")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise HarnessError(f"{pyproject}: [tool.{TABLE}] has unknown key(s) {', '.join(unknown)}; "
                           f"the keys are {', '.join(KEYS)}.")
    return table


# The table's (and --builtin's) builtin values: what they count for, and which families run. `true` is
# what tables said before "judge" and "report" existed.
ALL = "all"  # report every family, not only those covering what the code calls
_BUILTIN_VALUES = {True: (BuiltinMode.JUDGE, Scope.ALL), "judge": (BuiltinMode.JUDGE, Scope.ALL),
                   "report": (BuiltinMode.REPORT, Scope.USED), ALL: (BuiltinMode.REPORT, Scope.ALL),
                   False: (BuiltinMode.OFF, Scope.ALL), "off": (BuiltinMode.OFF, Scope.ALL)}


def _builtin(table: dict, source: Path) -> tuple[BuiltinMode, Scope]:
    value = table.get("builtin", True)
    # `1 == True` in a dict lookup: only a real boolean or one of the words is a value.
    if isinstance(value, (bool, str)) and value in _BUILTIN_VALUES and value != "off":
        return _BUILTIN_VALUES[value]
    raise HarnessError(f'{source}: [tool.{TABLE}] builtin must be "judge", "report", "all" or false (not {value!r}): '
                       '"judge" lets the built-in contracts\' changes decide the exit status (true means this too), '
                       '"report" shows those covering what your code calls after yours while only yours decide, '
                       '"all" reports every one, false does not run them.')


def _envs_size_limit(table: dict, source: Path) -> float:
    value = table.get("envs-size-limit", envs.DEFAULT_LIMIT)
    try:
        return envs.parse_size("off" if value is False else str(value))
    except ValueError as exc:
        raise HarnessError(f"{source}: [tool.{TABLE}] envs-size-limit: {exc}; "
                           'e.g. envs-size-limit = "10GiB".') from None


def _re_recorded(table: dict, source: Path) -> Policy:
    value = table.get("re-recorded", Policy.FAIL.value)
    if value not in tuple(Policy):
        raise HarnessError(f'{source}: [tool.{TABLE}] re-recorded must be "fail" (the default: golden values a '
                           'branch re-records fail its pull-request check until recorded with a reason) or "report" '
                           f"(listed, not failed), not {value!r}.")
    return Policy(value)


def _project(root: Path) -> Project:
    table, source = _table(root), root / "pyproject.toml"
    builtin, scope = _builtin(table, source)
    candidate = table.get("candidate")
    if candidate is not None and not (isinstance(candidate, dict) and all(isinstance(v, str) for v in candidate.values())):
        raise HarnessError(f'{source}: [tool.{TABLE}.candidate] must map packages to versions, e.g. optax = "0.2.8".')
    python = table.get("python")
    if python is not None and not isinstance(python, str):
        raise HarnessError(f'{source}: [tool.{TABLE}] python must be a string, e.g. python = "3.12".')
    outside_index = table.get("pins-outside-index", "refuse")
    if outside_index not in OUTSIDE_INDEX:
        raise HarnessError(f'{source}: [tool.{TABLE}] pins-outside-index must be "refuse" (the default) or "ignore" '
                           f'(not {outside_index!r}): "ignore" says your pins of jax, jaxlib, optax, flax and numpy '
                           "are the package index's builds, whatever else the baseline's file points at.")
    baseline_from = table.get("baseline-from")
    if baseline_from is None:
        raise HarnessError(f'{source}: [tool.{TABLE}] needs baseline-from, the file that pins your stack, '
                           'e.g. baseline-from = "requirements.txt" (or uv.lock, poetry.lock, or pyproject.toml).')
    found = Project(
        root=root,
        own_contracts=_dirs(root, _strings(table.get("contracts", []), "contracts", source), "contracts", str(source)),
        golden=root / _path(table.get("golden", "golden"), "golden", source),
        locks=root / _path(table.get("locks", "locks"), "locks", source),
        builtin=builtin, builtin_scope=scope,
        baseline_from=root / _path(baseline_from, "baseline-from", source),
        pythonpath=_dirs(root, _strings(table.get("pythonpath", ["."]), "pythonpath", source), "pythonpath", str(source)),
        python=python, candidate=dict(candidate) if candidate else None, pins_outside_index=outside_index,
        envs_size_limit=_envs_size_limit(table, source), re_recorded=_re_recorded(table, source),
    )
    name_clash.check(root, found.pythonpath, TABLE)
    return found


def at(root: Path) -> Project:
    """The project whose table is in `root`/pyproject.toml, as its table says (no run's options)."""
    return _project(root)


def _checkout(root: Path) -> Project:
    return Project(root=root, own_contracts=(), golden=root / "golden", locks=root / "locks",
                   builtin=BuiltinMode.JUDGE, baseline_from=None)


def code_of(found: Project, ws: Workspace) -> team_code.TeamCode:
    """What the project's code and contracts call (its tests/, golden, locks and environments left out)."""
    skip = (found.golden, found.locks, ws.envdir, ws.published)
    return team_code.read(found.root, team_code.files(found.root, found.pythonpath, found.own_contracts, skip))


def with_selection(found: Project, ws: Workspace) -> Project:
    """The project with the built-in tests its run takes: in report mode those of what its code
    calls, else all; never those needing Flax when its code does not import flax."""
    code = code_of(found, ws)
    # Without contracts of its own a project's built-in ones are judged (harness.verdict.own): all of them.
    reported = found.builtin == BuiltinMode.REPORT and found.own_contracts
    scope = found.builtin_scope if reported else Scope.ALL
    return dataclasses.replace(found, imports_flax=code.imports_flax, selection=select(scope, code))


def load(ws: Workspace) -> Project:
    """The workspace's project, with this run's --contracts / --builtin / --no-builtin / --baseline-from
    applied: read and checked once per command (kept in the workspace, whose derived workspaces share it)."""
    given = ws.options
    # ws.published too: a team's selection scans its code without the reports directory (and its .nox/).
    key = (ws.root, ws.is_checkout, ws.stage, ws.published, given.contracts, given.builtin, given.baseline_from,
           given.platform)
    if key not in ws.loaded:
        ws.loaded[key] = _load(ws)
    return ws.loaded[key]


def _load(ws: Workspace) -> Project:
    found = _checkout(ws.root) if ws.is_checkout else _project(ws.root)
    given = ws.options  # this run's options, given by the command or told to the session
    if given.contracts:
        found = dataclasses.replace(found, own_contracts=tuple(dict.fromkeys(found.own_contracts + _dirs(
            Path.cwd(), [str(d) for d in given.contracts], "--contracts", "given with --contracts"))))
    if given.builtin:  # --builtin MODE, --builtin all or --no-builtin
        mode, scope = _BUILTIN_VALUES[given.builtin]
        found = dataclasses.replace(found, builtin=mode, builtin_scope=scope)
    if given.baseline_from:
        given_from = parse_pins_source(str(given.baseline_from), Path.cwd())
        found = dataclasses.replace(found, baseline_from=given_from.path, baseline_revision=given_from.revision)
    if given.platform:  # values recorded on an accelerator are its own (harness.golden_layout.on_platform)
        found = dataclasses.replace(found, golden=golden_layout.on_platform(found.golden, given.platform))
    if ws.stage is not None:  # accept's or a recording's staged copy (harness.stack.staging)
        found = dataclasses.replace(found, golden=ws.in_stage(found.golden), locks=ws.in_stage(found.locks))
    if not ws.is_checkout:
        found = with_selection(found, ws)
    if not found.suite:
        raise HarnessError("there are no contracts to run: the built-in ones are switched off and no "
                           f"contracts directory is given; set contracts = [\"DIR\"] in [tool.{TABLE}] or pass --contracts DIR.")
    return found
