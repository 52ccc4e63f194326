"""A team's pins files as its tools write them: uv.lock in uv's layout (one [[package]] table a package, sorted by
name, each dependency an inline table on its own line), a pyproject.toml with PEP 621 dependencies one a line,
pip-tools' requirements.in and requirements.txt. Tests find the line of what they check in the text written
here (`line_of`), never from the code under test."""

from __future__ import annotations

import dataclasses

PINS = {"jax": "0.11.2", "jaxlib": "0.11.2", "optax": "0.2.6", "flax": "0.12.12", "numpy": "2.5.5"}
PYPI = '{ registry = "https://pypi.org/simple" }'


@dataclasses.dataclass(frozen=True)
class Locked:
    """One [[package]]: `dependencies` holds each edge's inline table body (`name = "colorama", marker = "..."`)."""

    name: str
    version: str | None
    source: str = PYPI
    dependencies: tuple[str, ...] = ()
    groups: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # dev-dependencies
    extras: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # optional-dependencies


def _edges(edges: tuple[str, ...]) -> str:
    return "[\n" + "".join(f"    {{ {edge} }},\n" for edge in edges) + "]"


def uv_lock(packages: list[Locked]) -> str:
    out = ['version = 1\nrevision = 2\nrequires-python = ">=3.11"\n']
    for package in sorted(packages, key=lambda p: p.name):
        block = f'[[package]]\nname = "{package.name}"\n'
        block += f'version = "{package.version}"\n' if package.version is not None else ""
        block += f"source = {package.source}\n"
        if package.dependencies:
            block += f"dependencies = {_edges(package.dependencies)}\n"
        if "registry" in package.source:
            block += (f'sdist = {{ url = "https://files.example/{package.name}-{package.version}.tar.gz", '
                      'hash = "sha256:00", size = 1 }\n')
        for title, tables in (("optional-dependencies", package.extras), ("dev-dependencies", package.groups)):
            if tables:
                block += f"\n[package.{title}]\n" + "".join(f"{k} = {_edges(v)}\n" for k, v in tables.items())
        out.append(block)
    return "\n".join(out)


def stack(deps: dict[str, tuple[str, ...]] | None = None, **versions: str) -> list[Locked]:
    """The five packages at PINS (or `versions`), with their dependencies as the edges in `deps`."""
    deps = deps or {}
    return [Locked(name, versions.get(name, version), dependencies=deps.get(name, ()))
            for name, version in PINS.items()]


def pyproject(requirements: list[str], name: str = "team", table: str = "", more: str = "") -> str:
    """A project's pyproject.toml: its dependencies one a line (the first on line 6), then `more`, then `table`."""
    lines = "".join(f'    "{r}",\n' for r in requirements)
    return (f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
            f"dependencies = [\n{lines}]\n{more}{table}")


def line_of(text: str, needle: str, after: str | None = None) -> int:
    """The number of the first line holding `needle` (after the first line holding `after`)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and needle in line) + 1
