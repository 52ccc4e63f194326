"""`upgrade-harness init`: make a team's repository a project the harness can judge.

It adds the [tool.upgrade-harness] table to pyproject.toml (creating the file if there is none), a
small noxfile.py, a contracts directory with a guide, and reports/ and .nox/ to .gitignore. It never
changes what is already there: an existing table or noxfile is left alone and said so.
"""

from __future__ import annotations

import re
from pathlib import Path

import tomlkit
import tomlkit.exceptions
import tomlkit.items

from harness.errors import HarnessError
from harness.stack import project
from harness.stack.ci import github_workflows, init_ci, tool_source
from harness.stack.commands import options
from harness.stack.pins import agreement, pins_from, project_pins
from harness.stack.pins.pins_from import BASELINE_FILES

NOXFILE = '''"""upgrade-harness sessions for this project (written by `upgrade-harness init`).

  nox -s upgrade    baseline vs candidate, then the verdict (the same as `upgrade-harness upgrade`)
  nox -s golden     record golden values from the baseline
  nox -l            the entries and their pins

Run it with the nox of the environment upgrade-harness is installed in.
"""

import os

os.environ["HARNESS_PROJECT"] = os.path.dirname(os.path.abspath(__file__))  # this project, whatever the shell says

import harness.stack.sessions  # noqa: E402,F401  (registers the sessions)
'''

CONTRACTS_GUIDE = '''"""Your own upgrade-harness contracts: pytest modules (test_*.py) here, run in every matrix entry.

Each test takes the `check` fixture and states what your training relies on (README: "Your own
contracts" has the whole `check` API and a worked example).
"""
# For example, contracts/test_losses.py (its family, `losses`, names its golden file, golden/losses.json;
# any name will do, a built-in family's too: yours stays apart from it):
#
#     import numpy as np
#     from my_project.train import train
#
#     def test_loss_trajectory(check):
#         """Five steps of our training loop from a fixed seed: the losses are golden."""
#         for step, loss in enumerate(train(steps=5, seed=0)):
#             check.golden(f"loss/step{step}", np.float32(loss))
#
# Keep a value's dtype (np.float32(loss), or the array itself): it is judged in ulps of that dtype. A
# Python float that holds exactly a float32 value is judged as float32 too, and the golden file says so;
# `check.golden(key, value, dtype="float32")` states it outright.
#
# The fast loop while writing one (only your contracts, a few seconds a round):
#     upgrade-harness golden --no-builtin       record its golden values from the baseline
#     upgrade-harness run baseline --no-builtin -- -k test_loss_trajectory
# Then `upgrade-harness upgrade` judges the candidate. The family (the golden file's name) is the
# module's name without `test_`, or `pytestmark = pytest.mark.family("name")`.


def pytest_ignore_collect(collection_path, config):
    """Your own `pytest` leaves these contracts alone: they need the harness's `check` fixture and the
    baseline's stack, which only an upgrade-harness run provides (a report, a recording or a harness profile)."""
    harness_run = any(config.getoption(name, default=None) for name in (
        "--harness-report", "--harness-record-golden", "--harness-profile"))
    if not harness_run and collection_path.suffix == ".py":
        return True
    return None
'''
GITIGNORE = ("reports/", ".nox/")


def _note(out: tomlkit.items.Table, key: str, text: str) -> None:
    """A comment after the key's value, two spaces out as a person writes it."""
    out[key].comment(text)
    out[key].trivia.comment_ws = "  "


def table(baseline_from: str, contracts: str, builtin: str, outside_index: str = "refuse") -> tomlkit.items.Table:
    """The [tool.upgrade-harness] table with the comments that say what each key is for (tomlkit writes
    the values, so a path with a quote or a backslash is a valid TOML string)."""
    out = tomlkit.table()
    out.add(tomlkit.comment("The stack your training runs with today; its exact pins are the baseline the golden "
                            "values come from."))
    out.add("baseline-from", baseline_from)
    if outside_index == "ignore":
        out.add(pins_from.OUTSIDE_INDEX_KEY, "ignore")
        _note(out, pins_from.OUTSIDE_INDEX_KEY, "its index options, URLs, paths, -e lines and git sources are not "
                                                "installed: the rest of what it pins is, from the package index")
    out.add(tomlkit.comment('Your own contract modules: pytest files using the `check` fixture (README: "Your own '
                            'contracts").'))
    out.add("contracts", [contracts])
    out.add("golden", "golden")
    _note(out, "golden", "golden values recorded from the baseline (`upgrade-harness golden`): commit them")
    out.add("locks", "locks")
    _note(out, "locks", "the baseline's full lock, written on first use: commit it")
    out.add(tomlkit.comment('The built-in Optax / Flax NNX contracts: "report" runs those covering what your code '
                            "calls and lists their changes after yours, while"))
    out.add(tomlkit.comment('only your contracts decide the verdict and the exit status; "judge" lets them decide '
                            'too ("all": every family); false skips them.'))
    out.add("builtin", False if builtin == "off" else builtin)
    out.add("pythonpath", ["."])
    _note(out, "pythonpath", "where your contracts import your training code from")
    out.add(tomlkit.comment("The bump to judge; without this table, the harness's own candidate (the newest "
                            "releases it knows)."))
    out.add(tomlkit.comment(f"[tool.{project.TABLE}.candidate]"))
    out.add(tomlkit.comment('optax = "0.2.8"'))
    return out


def _newline(text: str) -> str | None:
    """The file's line ending when every line has the same one (CRLF or LF); None for a mix."""
    crlf = text.count("\r\n")
    lone = text.count("\n") - crlf
    if crlf and lone:
        return None
    return "\r\n" if crlf else "\n"


def _in_line_endings(original: str, new: str) -> str:
    """`new` (tomlkit writes what it adds with LF) in the line endings of `original`."""
    if _newline(original) == "\r\n":
        return re.sub(r"(?<!\r)\n", "\r\n", new)
    return new


def with_table(text: str, added: tomlkit.items.Table, source: Path) -> str:
    """`text` (a pyproject.toml, maybe empty) with [tool.upgrade-harness] added; everything already
    there (comments, order, line endings) kept as written."""
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise HarnessError(f"{source} cannot be read as TOML ({exc}); fix it and run init again.") from None
    tool = doc.get("tool")
    if tool is None:
        tool = tomlkit.table(is_super_table=True)
        doc.append("tool", tool)
    elif not isinstance(tool, tomlkit.items.Table):
        raise HarnessError(f"{source}: `tool` is not a table (it is written inline); write it as [tool.*] tables, "
                           f"or add [tool.{project.TABLE}] by hand (README: \"The table\").")
    tool.append(project.TABLE, added)
    written = _in_line_endings(text, tomlkit.dumps(doc))
    return written.lstrip("\r\n") if not text.strip() else written


def _baseline_file(root: Path, given: str | None, outside_index: str) -> tuple[str, pins_from.TeamPins]:
    """The file the baseline's pins come from, and what it pins, checked now: a range or a missing pin is said at
    init (flax only when the project's code imports it)."""
    optional = project_pins.optional_packages(root)
    if given:
        return given, pins_from.read_all((root / given).resolve(), outside_index, optional=optional)
    problems = []
    for name in BASELINE_FILES:
        if (root / name).is_file():
            try:
                return name, pins_from.read_all(root / name, outside_index, optional=optional)
            except agreement.Disagreement:
                raise  # the project's own files disagree: said at once, not passed over for the next file
            except HarnessError as exc:
                problems.append(str(exc))
    found = "\n  ".join(problems) if problems else f"none of {', '.join(BASELINE_FILES)} is here"
    raise HarnessError(f"no file in {root} pins your stack exactly:\n  {found}\nPin jax, jaxlib, optax, flax and "
                       "numpy exactly (in requirements.txt), or lock them (`uv lock` writes uv.lock, `poetry lock` "
                       "poetry.lock: every version a lock holds is exact), or give the file with --baseline-from "
                       "PATH.")


_TOOLS = {"uv.lock": "uv's lock", "poetry.lock": "Poetry's lock"}


def read_text(name: str, found: pins_from.TeamPins) -> str:
    """What init read from the baseline's file: `poetry.lock (Poetry's lock): jax 0.11.2, ...; and 32 other
    packages it locks, every group and extra`."""
    tool = _TOOLS.get(Path(name).name)
    stack = ", ".join(f"{package} {version}" for package, version in found.pins.items())
    others = (f"; and {len(found.locked_with)} other packages it {'locks' if tool else 'pins'}"
              + (", every group and extra" if tool else "") if found.locked_with else "")
    return f"{name}{f' ({tool})' if tool else ''}: {stack}{others}"


def _append_gitignore(root: Path) -> list[str]:
    """reports/ and .nox/ added to .gitignore unless it ignores them already, in the file's line endings."""
    path = root / ".gitignore"
    text = path.read_bytes().decode("utf-8", errors="surrogateescape") if path.is_file() else ""
    have = [line.strip() for line in text.splitlines()]
    missing = [line for line in GITIGNORE if line not in have and line.rstrip("/") not in have]
    if missing:
        newline = _newline(text) or "\n"
        added = ("" if not text or text.endswith("\n") else newline) + newline.join(missing) + newline
        path.write_bytes((text + added).encode("utf-8", errors="surrogateescape"))
    return missing


USAGE = options.Usage(prog="upgrade-harness init", description=(
    "`upgrade-harness init`: make a team's repository a project the harness can judge."), own=(
    options.own("--baseline-from", metavar="PATH", help=(
        "the file that pins your stack exactly (default: the first of "
        f"{', '.join(pins_from.BASELINE_FILES)} that does)")),
    options.own("--contracts", default="contracts", metavar="DIR", help="your contracts' directory"),
    options.own("--builtin", choices=("report", "all", "judge", "off"), default="report", help=(
        "the built-in contracts: report the changes of those covering what your code calls without deciding "
        "the exit status (default), report every family (all), judge them like your own, or off (false)")),
    options.own("--no-builtin", action="store_const", const="off", dest="builtin", help="the same as --builtin off"),
    options.own(f"--{pins_from.OUTSIDE_INDEX_KEY}", choices=project.OUTSIDE_INDEX, default="refuse",
                dest="outside_index", help=(
                    "ignore: your baseline's file may also point outside the package index (index options, URLs, "
                    "paths, -e, git sources); those lines are not installed, the rest of what it pins is, from "
                    "the index (default: refuse such a file)")),
    options.own("--ci", choices=init_ci.PROVIDERS, help=(
        f"also write the CI workflows: github writes {github_workflows.PR_FILE} (pull requests that change "
        f"your pins) and {github_workflows.NIGHTLY_FILE} (the newest releases every night)")),
    options.own(tool_source.FLAG, dest="tool_from", metavar="REQUIREMENT",
                help="what CI installs as the tool, pinned (default: where the running tool came from)"),
    options.own("--force", action="store_true", help="with --ci: replace workflow files written before")))


def main(argv: list[str], root: Path) -> int:
    """Write what is missing in `root`; HarnessError for a refusal, HelpShown after --help (harness.cli runs
    it in the command frame, harness.stack.commands.frame)."""
    args = options.parse(USAGE, argv)
    pyproject = root / "pyproject.toml"
    ci_tool = init_ci.prepare(root, args.force, args.tool_from) if args.ci else None  # its refusals before anything is written
    if pyproject.is_file() and project.TABLE in project.read_toml(pyproject).get("tool", {}):
        if ci_tool is not None:  # a project set up before: only its workflows
            return init_ci.main(root, ci_tool)
        raise HarnessError(f"{pyproject} already has a [tool.{project.TABLE}] table; nothing was changed "
                           "(edit the table, or remove it to start again).")
    baseline_from, read_pins = _baseline_file(root, args.baseline_from, args.outside_index)
    text = pyproject.read_bytes().decode("utf-8") if pyproject.is_file() else ""
    new_text = with_table(text, table(baseline_from, args.contracts, args.builtin, args.outside_index),
                          pyproject)  # refusals first
    said = []
    contracts = root / args.contracts
    if not contracts.is_dir():
        contracts.mkdir(parents=True)
        said.append(f"created {args.contracts}/")
    if not (contracts / "conftest.py").exists():
        (contracts / "conftest.py").write_text(CONTRACTS_GUIDE)
        said.append(f"wrote {args.contracts}/conftest.py: how to write a contract, and a hook that keeps your own "
                    "pytest away from the contracts")
    else:
        hook = CONTRACTS_GUIDE[CONTRACTS_GUIDE.index("def pytest_ignore_collect"):].strip()
        said.append(f"left {args.contracts}/conftest.py as it is; so that your own pytest does not collect the "
                    "contracts (they need the harness's `check` fixture), add:\n      "
                    + "\n      ".join(hook.splitlines()))
    pyproject.write_text(new_text, newline="")
    said.append(f"{'added the table to' if text else 'wrote'} pyproject.toml: [tool.{project.TABLE}], "
                f"baseline from {read_text(baseline_from, read_pins)}")
    noxfile = root / "noxfile.py"
    if noxfile.exists():
        said.append("left noxfile.py as it is; to get the sessions there too, add:\n      "
                    + "\n      ".join(NOXFILE.split('"""\n\n', 1)[1].strip().splitlines()))
    else:
        noxfile.write_text(NOXFILE)
        said.append("wrote noxfile.py (`nox -s upgrade` runs the same upgrade)")
    missing = _append_gitignore(root)
    if missing:
        said.append(f"added {', '.join(missing)} to .gitignore")
    if ci_tool is not None:
        said.extend(init_ci.write(root, ci_tool))
    print("upgrade-harness init:\n  " + "\n  ".join(said))
    print("next:\n  upgrade-harness golden     record golden values from the baseline (commit golden/ and locks/)\n"
          "  upgrade-harness upgrade    judge the candidate against them")
    return 0


COMMANDS = (options.Declaration("init", "Make a team's repository a project the harness can judge.", USAGE,
                                lambda call: main(list(call.argv), call.invoked_from),
                                route=options.Route.WITHOUT_PROJECT),)
