"""The documentation stays navigable: the site builds with --strict (a link to a page or an anchor that
does not exist fails it), README's relative links reach files and headings that exist, the layers picture
names every layer pyproject.toml declares, and the contributor guide names every package of harness/."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # [text](target)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _links(markdown: str) -> list[str]:
    """The targets of the Markdown links outside code blocks."""
    return LINK.findall(FENCE.sub("", markdown))


def _slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's toc and GitHub both make it, for the headings these pages use."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in FENCE.sub("", path.read_text()).splitlines() if line.startswith("#")}


def test_readme_links_reach_files_and_headings_that_exist():
    broken = []
    for target in _links((ROOT / "README.md").read_text()):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        found = ROOT / path if path else ROOT / "README.md"
        if not found.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and found.suffix == ".md" and anchor not in _anchors(found):
            broken.append(f"{target}: no heading #{anchor} in {path or 'README.md'}")
    assert broken == []


def test_the_readme_keeps_the_two_commands():
    """`.ci/run` runs the second command; the first is what the docs call README command 1."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The two commands\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    assert ".venv/bin/pip install -r locks/runner.txt && .venv/bin/nox -s upgrade" in block
    assert ".venv/bin/pip install -r locks/runner.txt && .venv/bin/nox -s tests" in block


def _declared_layers(contract: dict) -> list[str]:
    """A layers contract's modules by full name: a layer inside `containers` is named relative to each."""
    names = [name.strip() for layer in contract["layers"] for name in layer.split("|")]
    return [f"{container}.{name}" for container in contract.get("containers", [""]) for name in names] \
        if contract.get("containers") else names


def test_the_layers_picture_names_every_layer_pyproject_declares():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = [name for c in contracts if c["type"] == "layers" for name in _declared_layers(c)]
    pictures = "".join(re.findall(r"```mermaid\n(.*?)```", (DOCS / "architecture.md").read_text(), re.S))
    assert pictures, "docs/architecture.md has no mermaid block"
    assert layers and [name for name in layers if f'["{name}<br/>' not in pictures] == []


def test_a_layer_inside_a_container_is_named_in_full():
    """The check above can fail for the stack's inner layers: they are looked for as harness.stack.<layer>."""
    contract = {"type": "layers", "containers": ["harness.stack"], "layers": ["run | ci", "pins"]}
    assert _declared_layers(contract) == ["harness.stack.run", "harness.stack.ci", "harness.stack.pins"]


def test_the_contributor_guide_names_every_package_of_harness():
    guide = (DOCS / "contributing.md").read_text()
    packages = sorted(p.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "harness").rglob("*")
                      if p.is_dir() and p.name != "__pycache__")
    assert [p for p in packages if f"`{p}`" not in guide] == []
