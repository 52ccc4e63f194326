"""Whatever a pins file holds, reading it ends in pins or in a HarnessError naming the file and the line (exit 2,
`<command>: message`), never in another exception: a malformed version in uv.lock was a `packaging` traceback
(exit 1). Each reader is fuzzed over one malformed line or value put into a valid file (requirements.txt and
the files it includes, uv.lock, pyproject.toml); a revision's file (`REV:PATH`) is read by the same readers
(tests/integration/test_pins_from_git.py fuzzes the REV:PATH itself)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.version import Version

from harness.errors import HarnessError
from harness.stack.pins import pins_from
from support.team_files import PINS, Locked, line_of, pyproject, stack, uv_lock

FUZZ = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
REQUIREMENTS = "".join(f"{name}=={version}\n" for name, version in PINS.items())
# What str.splitlines (and so pip) splits a line at: a generated line holds none of them.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
TOKENS = ["jax", "jaxlib", "optax", "flax", "numpy", "chex", "Optax", "==", "===", ">=", "~=", "!=", "<", "*",
          "0.2.6", "0.2.x", "0.2.66", "1!2", "v1", "[cpu]", "[", "]", ";", " ; ", "sys_platform == 'win32'",
          "python_version", "extra ==", "@", " @ ", "file:///x", "git+https://e.invalid/x", "./x", "../y", "x.whl",
          "-r ", "-c ", "-e ", "-i ", "--index-url=", "--hash=sha256:0", "--pre", "#", " #", "\\", ",", ".", "/",
          "${VAR}", "\t", " ", "\x00", "é", "'", '"', "requirements.txt", "base.txt", "."]
GARBAGE_LINE = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(st.characters(
    blacklist_categories=("Cs",), blacklist_characters=LINE_BREAKS), max_size=4)), max_size=8).map("".join)


def toml_values() -> st.SearchStrategy[str]:
    """One TOML value, as text: strings (JSON's escapes are TOML's, save a surrogate pair's, which TOML
    refuses), numbers, booleans, arrays, inline tables with a source's keys."""
    string = st.text(max_size=12).map(json.dumps)
    return st.one_of(
        string,
        st.sampled_from(['"0.2.x"', '"1.0+local"', '"1!2.0"', '"v1.0"', '""', '" 1.0"', '"jax"', '"Jax_Lib"',
                         '"optax"', '"team"', '"chex"', '"sys_platform == \'win32\'"', '"python_version <"']),
        st.integers().map(str), st.booleans().map(lambda b: str(b).lower()), st.just("1.5"),
        st.lists(string, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.dictionaries(st.sampled_from(["registry", "git", "path", "editable", "virtual", "url", "name", "x"]),
                        st.one_of(string, st.integers().map(str)), max_size=3).map(
            lambda d: "{ " + ", ".join(f"{k} = {v}" for k, v in d.items()) + " }"),
    )


def _read(path, mode: str = "refuse") -> pins_from.TeamPins | HarnessError:
    try:
        found = pins_from.read_all(path, mode)
    except HarnessError as exc:
        return exc
    for version in found.pins.values():
        Version(version)  # every pin is a version the harness can compare
    for line in found.locked_with:
        Requirement(line)  # every other line is a requirement uv can take
    return found


def _names_a_line(problem: HarnessError, name: str, lines: range) -> bool:
    return any(f"{name}:{number}" in str(problem) for number in lines)


def test_a_malformed_version_in_uv_lock_is_named_at_its_line(tmp_path):
    """The reported failure: `version = "0.2.x"` for optax was a traceback from `packaging` (exit 1)."""
    text = uv_lock(stack(optax="0.2.x"))
    path = tmp_path / "uv.lock"
    path.write_text(text)
    with pytest.raises(HarnessError) as refused:
        pins_from.read(path)
    line = line_of(text, 'version = "0.2.x"')
    assert f"uv.lock:{line}: optax's version '0.2.x' is not a version" in str(refused.value)
    assert "re-lock with `uv lock`" in str(refused.value)


@pytest.mark.parametrize("pin, words", [
    ("optax===0.2.x", "requirements.txt:3: optax===0.2.x: '0.2.x' is not a version"),
    ("optax==0.2.x", "requirements.txt:3: cannot read 'optax==0.2.x' as a requirement"),
    ("chex>=0.1.x", "requirements.txt:4: cannot read 'chex>=0.1.x' as a requirement"),
])
def test_a_malformed_version_in_a_requirements_file_is_named_at_its_line(tmp_path, pin, words):
    path = tmp_path / "requirements.txt"
    path.write_text(REQUIREMENTS.replace("optax==0.2.6", pin if pin.startswith("optax") else f"optax==0.2.6\n{pin}"))
    with pytest.raises(HarnessError, match=re.escape(words)):
        pins_from.read(path)


@FUZZ
@given(line=GARBAGE_LINE, at=st.integers(0, len(PINS)), mode=st.sampled_from(["refuse", "ignore"]))
def test_requirements_txt_with_any_one_line_more(tmp_path, line, at, mode):
    lines = REQUIREMENTS.splitlines()
    lines.insert(at, line)
    path = tmp_path / "requirements.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = _read(path, mode)
    if isinstance(found, HarnessError):
        assert _names_a_line(found, "requirements.txt", range(at + 1, at + 2)), str(found)


@FUZZ
@given(line=st.binary(max_size=12), at=st.integers(0, len(PINS)))
def test_requirements_txt_with_any_bytes_on_one_line(tmp_path, line, at):
    try:
        assume(not any(c in line.decode("utf-8") for c in LINE_BREAKS))
    except UnicodeDecodeError:
        assume(not any(b in line for b in b"\n\r\x0b\x0c\x1c\x1d\x1e"))
    lines = REQUIREMENTS.encode().splitlines()
    lines.insert(at, line)
    path = tmp_path / "requirements.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    found = _read(path)
    if isinstance(found, HarnessError):
        assert _names_a_line(found, "requirements.txt", range(at + 1, at + 2)), str(found)


@FUZZ
@given(line=GARBAGE_LINE, at=st.integers(0, 2))
def test_an_included_file_with_any_one_line_more(tmp_path, line, at):
    (tmp_path / "requirements.txt").write_text("-r base.txt\njax==0.11.2\njaxlib==0.11.2\noptax==0.2.6\n")
    lines = ["flax==0.12.12", "numpy==2.5.5"]
    lines.insert(at, line)
    (tmp_path / "base.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = _read(tmp_path / "requirements.txt")
    if isinstance(found, HarnessError):
        assert _names_a_line(found, "base.txt", range(at + 1, at + 2)), str(found)


LOCK = uv_lock([
    *stack({"optax": ('name = "chex"',), "jax": ('name = "ml-dtypes"', 'name = "scipy"')}),
    Locked("chex", "0.1.92", dependencies=('name = "jax"', 'name = "numpy"')),
    Locked("ml-dtypes", "0.5.1"), Locked("scipy", "1.14.1"),
    Locked("colorama", "0.4.6"),
    Locked("pytest", "8.3.3", dependencies=('name = "colorama", marker = "sys_platform == \'win32\'"',)),
    Locked("team", "0.1.0", source='{ editable = "." }',
           dependencies=tuple(f'name = "{n}"' for n in [*PINS, "scipy"]), groups={"dev": ('name = "pytest"',)}),
])
SINGLE_LINE_FIELDS = re.compile(r'^(name|version|source) = ')


def _blocks(text: str) -> list[range]:
    """The lines of each [[package]] block, from its header to the line before the next."""
    lines = text.split("\n")
    starts = [i + 1 for i, line in enumerate(lines) if line == "[[package]]"] + [len(lines) + 1]
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def test_the_fuzzed_lock_is_read_whole():
    """The file the fuzzing starts from: every package of the project's, chex and scipy among them."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "uv.lock"
        path.write_text(LOCK)
        found = pins_from.read_all(path)
    assert found.pins == PINS
    assert found.locked_with == ("chex==0.1.92", 'colorama==0.4.6; sys_platform == "win32"', "ml-dtypes==0.5.1",
                                 "pytest==8.3.3", "scipy==1.14.1")


@FUZZ
@given(data=st.data(), value=toml_values())
def test_uv_lock_with_any_one_value_replaced(tmp_path, data, value):
    lines = LOCK.split("\n")
    inside = {number - 1 for block in _blocks(LOCK) for number in block}
    fields = [i for i, line in enumerate(lines)
              if i in inside and (SINGLE_LINE_FIELDS.match(line) or "marker = " in line)]
    at = data.draw(st.sampled_from(fields))
    if "marker = " in lines[at]:
        lines[at] = re.sub(r'marker = ".*"', lambda _: f"marker = {value}", lines[at])
    else:
        lines[at] = lines[at].split(" = ", 1)[0] + " = " + value
    path = tmp_path / "uv.lock"
    path.write_text("\n".join(lines), encoding="utf-8")
    found = _read(path, data.draw(st.sampled_from(["refuse", "ignore"])))
    if isinstance(found, HarnessError):
        block = next(b for b in _blocks(LOCK) if at + 1 in b)
        assert _names_a_line(found, "uv.lock", block) or "does not pin" in str(found), str(found)


@FUZZ
@given(line=st.one_of(GARBAGE_LINE, toml_values().map(lambda v: f"version = {v}"),
                      st.sampled_from(["[[package]]", "[package.metadata]", 'name = "jax"', "package = 1", "[x"])),
       data=st.data())
def test_uv_lock_with_any_one_line_more(tmp_path, line, data):
    lines = LOCK.split("\n")
    at = data.draw(st.integers(0, len(lines)))
    lines.insert(at, line)
    path = tmp_path / "uv.lock"
    path.write_text("\n".join(lines), encoding="utf-8")
    found = _read(path)
    if isinstance(found, HarnessError):
        assert re.search(r"uv\.lock:\d+", str(found)) or "does not pin" in str(found), str(found)


PYPROJECT = pyproject([f"{n}=={v}" for n, v in PINS.items()] + ["scipy>=1.10"], more=(
    '\n[project.optional-dependencies]\ntrain = [\n    "chex==0.1.92",\n]\n\n[dependency-groups]\ndev = [\n'
    '    "pytest>=8",\n    {include-group = "lint"},\n]\nlint = ["ruff"]\n'))


def test_the_fuzzed_pyproject_is_read_whole(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    found = pins_from.read_all(tmp_path / "pyproject.toml")
    assert found.pins == PINS and found.locked_with == ("chex==0.1.92", "pytest>=8", "ruff", "scipy>=1.10")


@FUZZ
@given(data=st.data(), value=toml_values())
def test_pyproject_with_any_one_requirement_or_value_replaced(tmp_path, data, value):
    lines = PYPROJECT.split("\n")
    at = data.draw(st.sampled_from([i for i, line in enumerate(lines)
                                    if line.startswith("    ") or re.match(r"^(name|lint|dependencies) = ", line)]))
    if lines[at].startswith("    "):
        lines[at] = f"    {value},"
    elif lines[at].startswith("dependencies"):
        lines[at] = f"dependencies = {value}"
        lines[at + 1:lines.index("]", at)] = []  # its elements and closing bracket go with it
        del lines[at + 1]
    else:
        lines[at] = lines[at].split(" = ", 1)[0] + " = " + value
    path = tmp_path / "pyproject.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    found = _read(path)
    if isinstance(found, HarnessError):
        # The line changed, or the line of the key whose array holds it (a value that is no string at all).
        key = max(i for i in range(at + 1) if " = " in lines[i] and not lines[i].startswith("    "))
        assert _names_a_line(found, "pyproject.toml", range(min(key, at) + 1, at + 2)) \
            or "does not pin" in str(found), str(found)


PARTNER = pyproject([f"{n}=={v}" for n, v in PINS.items()] + ["scipy>=1.10"],
                    more='\n[dependency-groups]\ndev = [\n    "pytest>=8",\n]\n')


@FUZZ
@given(data=st.data(), value=st.one_of(toml_values(), GARBAGE_LINE.map(json.dumps)))
def test_a_partner_file_with_any_one_requirement_replaced(tmp_path, data, value):
    """The pins file is well formed; the file it must agree with (uv.lock's pyproject.toml, requirements.txt's
    requirements.in) is not: named at its own line, whether it cannot be read or does not agree."""
    if data.draw(st.booleans()):
        (tmp_path / "uv.lock").write_text(LOCK)
        path, partner, lines = tmp_path / "uv.lock", "pyproject.toml", PARTNER.split("\n")
        at = data.draw(st.sampled_from([i for i, line in enumerate(lines) if line.startswith("    ")]))
        lines[at] = f"    {value},"
    else:
        (tmp_path / "requirements.txt").write_text(REQUIREMENTS + "scipy==1.14.1\n")
        path, partner, lines = tmp_path / "requirements.txt", "requirements.in", [*PINS, "scipy>=1.10"]
        at = data.draw(st.integers(0, len(lines) - 1))
        lines[at] = json.loads(value) if value.startswith('"') else value
        assume(not any(c in lines[at] for c in LINE_BREAKS))
    (tmp_path / partner).write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = _read(path)
    if isinstance(found, HarnessError):
        key = max(i for i in range(at + 1) if " = " in lines[i] and not lines[i].startswith("    ")) \
            if partner == "pyproject.toml" else at
        assert _names_a_line(found, partner, range(key + 1, at + 2)), str(found)
