"""The shared compilation cache (harness.contract.shared_compilation_cache): whole files exchanged by name
between a machine's shared folder and an environment's own cache, split by jax, jaxlib and CPU."""

from __future__ import annotations

import os

import pytest

from harness.contract import shared_compilation_cache as shared


def _environ(tmp_path, name="own"):
    return {shared.VARIABLE: str(tmp_path / "shared"), "JAX_COMPILATION_CACHE_DIR": str(tmp_path / name)}


def _executable(folder, name, data=b"program"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}-cache").write_bytes(data)


def test_an_environment_publishes_what_it_compiled_and_the_next_loads_it(tmp_path):
    first = _environ(tmp_path, "first")
    assert shared.before_run(first) == 0  # nothing shared yet
    _executable(tmp_path / "first", "jit_step-abc")
    (tmp_path / "first" / "jit_step-abc-atime").write_bytes(b"t")  # JAX's bookkeeping: not shared
    assert shared.after_run(first) == 1
    second = _environ(tmp_path, "second")
    assert shared.before_run(second) == 1
    linked = tmp_path / "second" / "jit_step-abc-cache"
    assert linked.read_bytes() == b"program"
    assert sorted(os.listdir(tmp_path / "second")) == ["jit_step-abc-cache"]
    assert shared.after_run(second) == 0  # nothing new to publish
    assert shared.before_run(second) == 0  # and nothing left to link


def test_an_environments_own_file_is_never_replaced(tmp_path):
    environ = _environ(tmp_path)
    folder, own = shared.folders(environ)
    _executable(folder, "jit_f-1", b"shared")
    _executable(own, "jit_f-1", b"own")
    assert shared.before_run(environ) == 0
    assert (own / "jit_f-1-cache").read_bytes() == b"own"


def test_a_file_being_published_is_never_linked(tmp_path):
    environ = _environ(tmp_path)
    folder, own = shared.folders(environ)
    _executable(folder, ".partial-1234-jit_f-1")  # another run's, not yet renamed
    assert shared.before_run(environ) == 0
    assert not own.exists() or not os.listdir(own)


def test_publishing_leaves_no_partial_file_and_keeps_what_is_there(tmp_path):
    environ = _environ(tmp_path)
    folder, own = shared.folders(environ)
    _executable(folder, "jit_f-1", b"first")
    _executable(own, "jit_f-1", b"second")
    _executable(own, "jit_g-2", b"g")
    assert shared.after_run(environ) == 1
    assert sorted(os.listdir(folder)) == ["jit_f-1-cache", "jit_g-2-cache"]
    assert (folder / "jit_f-1-cache").read_bytes() == b"first"


def test_the_shared_folder_is_split_by_jax_jaxlib_and_cpu(tmp_path, monkeypatch):
    environ = _environ(tmp_path)
    before = shared.folders(environ)[0]
    assert before.parent == tmp_path / "shared" and before.name.startswith("jax")
    monkeypatch.setattr(shared, "_version", lambda name: "9.9.9")
    assert shared.folders(environ)[0] != before
    monkeypatch.undo()
    monkeypatch.setattr(shared, "_cpu", lambda: "another CPU")
    assert shared.folders(environ)[0] != before


def test_unset_means_the_environments_own_cache_only(tmp_path):
    assert shared.folders({"JAX_COMPILATION_CACHE_DIR": str(tmp_path)}) is None
    assert shared.before_run({"JAX_COMPILATION_CACHE_DIR": str(tmp_path)}) == 0
    assert shared.after_run({shared.VARIABLE: str(tmp_path)}) == 0


def test_a_relative_folder_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=f"{shared.VARIABLE}=cache is not an absolute path"):
        shared.folders({shared.VARIABLE: "cache", "JAX_COMPILATION_CACHE_DIR": str(tmp_path)})


def test_a_folder_that_cannot_be_written_is_said_and_the_run_goes_on(tmp_path, capsys):
    (tmp_path / "shared").write_text("a file where the folder should be")
    environ = _environ(tmp_path)
    _executable(tmp_path / "own", "jit_f-1")
    assert shared.after_run(environ) == 0
    assert f"{shared.VARIABLE}: not written" in capsys.readouterr().err
    assert shared.before_run(environ) == 0
    assert f"{shared.VARIABLE}: not read" in capsys.readouterr().err
