"""The values a kind argument takes, read from the library's own code: a flag (`bool`) takes True and False,
`bool | None` None as well, a `Literal[...]` each of its members (also inside a tuple or a union:
`tuple[Literal['distance', 'learning_rate', 'heuristic'], float]`), and a string the callable's body compares
with constants (`if reduction == "mean": ... elif reduction == "sum"`) each string it is compared with. A releases's change that shows only at one
of those values (a mode, a distribution, a flag's off branch) is seen only by a contract that passes it, so the
ledger names, for each such value, the contracts that do (harness.coverage.audit checks it).

Read statically, as the surface is (the annotation's source text; nothing imports the library).
"""

from __future__ import annotations

import ast
import re
import textwrap

_LITERAL = re.compile(r"Literal\[([^\[\]]*)\]")
_MEMBER = re.compile(r"""'([^']*)'|"([^"]*)"|(-?\d+)|\b(True|False|None)\b""")
_FLAG = re.compile(r"^(?:Optional\[bool\]|bool(?:\s*\|\s*None)?|None\s*\|\s*bool)$")


def values(annotation: str | None, compared: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Each value the annotation admits, as the ledger writes it (a string's text, True, False, None), or for a
    string the strings the body compares it with (`compared`); () for an argument that takes more than a few
    named values (a float, an array, a callable)."""
    text = (annotation or "").strip()
    if compared and text in ("", "str", "str | None", "Optional[str]"):
        return compared
    if _FLAG.match(text):
        return ("True", "False", "None") if "None" in text or "Optional[" in text else ("True", "False")
    members: list[str] = []
    for literal in _LITERAL.findall(text):
        members += [next(g for g in m.groups() if g is not None) for m in _MEMBER.finditer(literal)]
    if members and re.search(r"\bNone\b|Optional\[", _LITERAL.sub("", text)):
        members.append("None")
    return tuple(dict.fromkeys(members))


def default_value(default: str | None) -> str | None:
    """The value a default's source text names (`'fan_in'` -> fan_in, `('heuristic', 1e-06)` -> heuristic, its
    first named member); None when the parameter is required or its default names none."""
    if default is None:
        return None
    found = _MEMBER.search(default)
    return next(g for g in found.groups() if g is not None) if found else None


def compared_strings(source: str, param: str) -> tuple[str, ...]:
    """The string constants a function's source compares `param` with (==, !=, in, not in a tuple, list or set of
    them), in the order they appear; () when its source does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return ()
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        left, right = node.left, node.comparators[0]
        if isinstance(right, ast.Name) and right.id == param and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            left, right = right, left
        if not (isinstance(left, ast.Name) and left.id == param):
            continue
        if isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            constants = [right]
        elif isinstance(node.ops[0], (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            constants = right.elts
        else:
            continue
        found += [c.value for c in constants if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return tuple(dict.fromkeys(found))
