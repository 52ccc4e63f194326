"""Where the host side keeps things. Two kinds of project share the code:

- this checkout (HARNESS_PROJECT unset): pins in harness/matrix.toml, locks/, golden/, reports/;
- a team's project (HARNESS_PROJECT = its root, set by the `upgrade-harness` command and by the
  noxfile `upgrade-harness init` writes): its [tool.upgrade-harness] table says where its contracts,
  golden values and locks are (harness.stack.project).

What depends on the project (its root, whether it is this checkout, its reports, the matrix it reads,
its .nox/) is not here: it is the workspace a command is handed (harness.stack.workspace).
"""

from __future__ import annotations

from pathlib import Path

from harness import env_vars, golden_layout

PACKAGE = Path(__file__).resolve().parents[1]  # the harness package (in a checkout or site-packages)
SOURCE = PACKAGE.parent  # this checkout, when the harness runs from one
MATRIX_FILE = "harness/matrix.toml"  # relative to the checkout (accept rewrites it)
DEFAULT_MATRIX = PACKAGE / "matrix.toml"  # this checkout's pins; a project's default candidate
SUITE_INI = PACKAGE / "contract" / "pytest.ini"
# The suite's pytest process, `python -m` this: pytest's command line, ended without Python's teardown.
SUITE_MAIN = "harness.contract.suite_main"
# The built-in contracts' golden values the tool ships: in its wheel, or this checkout's golden/.
BUILTIN_GOLDEN = PACKAGE / "builtin" / "golden" if (PACKAGE / "builtin" / "golden").is_dir() else SOURCE / "golden"


def builtin_golden(platform: str | None) -> Path:
    """The tool's own golden values of the built-in contracts recorded on `platform` (None, cpu: BUILTIN_GOLDEN)."""
    return golden_layout.on_platform(BUILTIN_GOLDEN, platform)


def project_root(environ) -> Path:
    """The project being judged: HARNESS_PROJECT in `environ` (harness.stack.boundary), else this checkout."""
    return Path(environ.get(env_vars.PROJECT) or SOURCE).resolve()


def invoked_from(session_dir: str) -> Path:
    """The directory the user typed the command in, which relative paths they gave are taken from: the
    `upgrade-harness` command's (it runs nox in the project's root), else nox's own invoked_from."""
    from harness.stack import boundary

    return boundary.invoked_from(session_dir, env_vars.INVOKED_FROM)
