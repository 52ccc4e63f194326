"""The package stays readable: short functions, no reaching into private names. A module holds one concept,
whatever its length (docs/contributing.md): it is split when its concepts divide, never to meet a line count.
The layer contracts themselves are import-linter's ([tool.importlinter] in pyproject.toml)."""

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "harness"
MODULES = sorted(HARNESS.rglob("*.py"))
MAX_FUNCTION_LINES = 60


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(HARNESS)))
def test_functions_are_short(path):
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(_tree(path))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(HARNESS)))
def test_no_module_uses_another_modules_private_names(path):
    tree = _tree(path)
    harness_modules = set()  # local names bound to harness modules
    reached = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
            reached += [f"from {node.module} import {a.name}" for a in node.names if _private(a.name)]
            harness_modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            harness_modules |= {a.asname or a.name for a in node.names if a.name.startswith("harness")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in harness_modules and _private(node.attr):
            reached.append(f"{node.value.id}.{node.attr}")
    assert not reached


def test_the_probe_finds_a_private_reach(tmp_path):
    """The check above can fail: a module that reads another's private helper is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("from harness.verdict import views\nx = views._private_helper\n")
    with pytest.raises(AssertionError):
        test_no_module_uses_another_modules_private_names(probe)


HOST_AND_JUDGE = [p for p in MODULES if {"stack", "verdict", "model"} & set(p.relative_to(HARNESS).parts[:1])]
BOUNDARY = HARNESS / "stack" / "boundary.py"  # the one module of the host that reads its process environment


def _environ_uses(path: Path) -> list[int]:
    """Lines reading or writing `os.environ` (the code, not text it writes: a team's generated noxfile)."""
    return [node.lineno for node in ast.walk(_tree(path))
            if isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os"]


@pytest.mark.parametrize("path", [p for p in HOST_AND_JUDGE if p != BOUNDARY],
                         ids=lambda p: str(p.relative_to(HARNESS)))
def test_the_host_reads_its_environment_only_through_its_boundary(path):
    """A run's options travel as typed objects (the Workspace's RunOptions) from where a command comes in;
    what a child process is told is built from the declaration (harness.stack.boundary.child_environment)."""
    assert _environ_uses(path) == []


def test_the_boundary_check_sees_a_use():
    assert _environ_uses(BOUNDARY)  # the check above would otherwise pass on any file


def _module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, known: set[str]) -> set[str]:
    """The package's modules `path` imports at its top level, those under `if TYPE_CHECKING:` (or any `if`/`try`)
    counted too: a function's own import is left out (it runs when called, after both modules exist)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(body) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))

    visit(_tree(path).body)
    return {m for m in found if m in known and m != name}


def test_no_import_loop_counting_type_checking_imports():
    """Two modules that import each other are one concept split in two, or a loop a type hint hides: none."""
    known = {_module_name(p) for p in MODULES}
    graph = {_module_name(p): _imported(p, known) for p in MODULES}
    loops, seen, path = [], set(), []

    def walk(module: str) -> None:
        if module in path:
            loops.append(path[path.index(module):] + [module])
            return
        if module in seen:
            return
        seen.add(module)
        path.append(module)
        for other in sorted(graph[module]):
            walk(other)
        path.pop()

    for module in sorted(graph):
        walk(module)
    assert not loops, loops[:3]


COMMANDS = HARNESS / "stack" / "commands"
# The other processes' own `python -m` command lines, each its layer's one entry point (the layers keep them
# from importing the host's commands): the verdict's, the coverage audit's, the contract side's rollback runner.
OWN_ENTRY_POINTS = {HARNESS / "verdict" / "cli.py", HARNESS / "coverage" / "cli.py",
                    HARNESS / "contract" / "rollbacks.py"}


def _argparse_uses(path: Path) -> list[int]:
    """Lines importing argparse or naming argparse.Namespace (a parsed command line handed on)."""
    lines = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "Namespace":
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", [p for p in MODULES if COMMANDS not in p.parents and p not in OWN_ENTRY_POINTS],
                         ids=lambda p: str(p.relative_to(HARNESS)))
def test_no_parsed_command_line_leaves_the_commands(path):
    """A command parses its line and hands on typed values (harness.run_options.RunOptions, a request
    dataclass of its own): no other module imports argparse or takes its Namespace."""
    assert not _argparse_uses(path), f"{path.relative_to(HARNESS)}:{_argparse_uses(path)}"


def test_the_argparse_probe_sees_a_use(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def prepare(ws, args: 'argparse.Namespace'):\n    import argparse\n")
    assert _argparse_uses(probe) == [2]  # the import; a string annotation is no attribute
    probe.write_text("import argparse\n\ndef prepare(args: argparse.Namespace):\n    pass\n")
    assert _argparse_uses(probe) == [1, 3]
