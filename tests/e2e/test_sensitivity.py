"""`nox -s sensitivity`'s parts that need no mutant run: the seeded sample, the equivalent-mutant file,
the report from a cosmic-ray session, and the environment mutants run in (never an entry's).

Here: the tests that start real uv and nox processes; the others are in
tests/unit/stack/sensitivity/test_sensitivity.py."""

import os
from pathlib import Path

from harness.stack.sensitivity import cosmic
from unit.stack.sensitivity.test_sensitivity import SOURCE  # noqa: F401 (fixtures and helpers shared with it)


def test_cosmic_rays_http_workers_judge_a_session_each_in_its_own_copy(tmp_path):
    """The distributed path end to end on a tiny module: cosmic-ray's init and exec, two HTTP workers
    (its handler, on 127.0.0.1) each mutating its own copy; every mutant judged, the files restored."""
    import subprocess
    import sys

    from harness.stack.sensitivity import crsession

    works, envs = [], []
    for i in range(2):
        work = tmp_path / f"worker-{i}"
        (work / "optax").mkdir(parents=True)
        (work / "optax" / "__init__.py").write_text("")
        (work / "optax" / "m.py").write_text(SOURCE)
        works.append(work)
        envs.append({**os.environ, "PYTHONPATH": str(work)})
    mtimes = [(work / "optax" / "m.py").stat().st_mtime_ns for work in works]
    check = f"{sys.executable} -c 'from optax.m import f; assert f(1, 2) == 3 and f(3, 2) == 6'"
    config = cosmic.write_config(tmp_path / "c.toml", ("optax/m.py",), check, 60, [])
    cosmic_ray = str(Path(sys.executable).parent / "cosmic-ray")
    db = tmp_path / "session.sqlite"
    subprocess.run([cosmic_ray, "init", str(config), str(db)], cwd=works[0], check=True, capture_output=True)
    with cosmic.http_workers(Path(sys.executable).parents[1], list(zip(works, envs))) as urls:
        assert all(url.startswith("http://127.0.0.1:") for url in urls)
        config = cosmic.write_config(tmp_path / "c.toml", ("optax/m.py",), check, 60, urls)
        subprocess.run([cosmic_ray, "exec", str(config), str(db)], cwd=works[0], check=True, capture_output=True)
    outcomes = {row["outcome"] for row in crsession.results([str(db)])}
    assert "killed" in outcomes and outcomes <= {"killed", "survived"}
    # both workers mutated (wrote, then restored) their own copy
    assert all((work / "optax" / "m.py").stat().st_mtime_ns > written for work, written in zip(works, mtimes))
    assert all((work / "optax" / "m.py").read_text() == SOURCE for work in works)
