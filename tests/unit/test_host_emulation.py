"""Which other hosts a machine can emulate (harness.host_emulation): a BLAS kernel or a vector cap it can run that
is not its own, the variables a run under one gets (the user's XLA_FLAGS kept, the cap after them), and the
allowance a golden entry's host noise gives in the dimensions two hosts differ in."""

from harness import host_emulation
from harness.model.host import Dimension, describe

EPYC = "model name\t: AMD EPYC\nflags\t\t: fpu sse pni avx avx2 fma avx512f avx512_bf16\n"
LAPTOP = "model name\t: Intel(R) Core(TM) i7-8650U\nflags\t\t: fpu sse pni avx avx2 fma\n"
ARM = "Features\t: fp asimd asimdhp bf16\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"


def _flags(cpuinfo: str) -> frozenset[str]:
    return frozenset(cpuinfo.split("flags\t\t: ")[-1].split())


def _names(cpuinfo: str, blas: str | None, machine: str = "x86_64", xla_flags: str = "") -> list[str]:
    host = describe(cpuinfo, machine, xla_flags, blas)
    return [e.name for e in host_emulation.applicable(host, _flags(cpuinfo))]


def test_an_avx512_machine_emulates_the_other_kernels_the_avx2_cap_and_no_fma():
    assert _names(EPYC, "SkylakeX") == ["blas-haswell", "blas-sandybridge", "blas-prescott", "vector-avx2", "no-fma"]
    # Its own kernel forced to Haswell: SkylakeX is another host then, Haswell is not.
    assert _names(EPYC, "Haswell")[:3] == ["blas-skylakex", "blas-sandybridge", "blas-prescott"]
    assert "blas-prescott" not in _names(EPYC, "Katmai")  # what OpenBLAS names Prescott's kernel


def test_a_machine_never_emulates_what_it_cannot_run_or_what_it_already_is():
    assert _names(LAPTOP, "Haswell") == ["blas-sandybridge", "blas-prescott", "no-fma"]  # no AVX-512: no SkylakeX
    assert "vector-avx2" not in _names(EPYC, "SkylakeX", xla_flags="--xla_cpu_max_isa=AVX2")  # capped already
    assert _names(EPYC, "SkylakeX", xla_flags="--xla_cpu_max_isa=AVX")[-1] == "blas-prescott"  # no FMA already
    assert _names(ARM, "NEOVERSEN1", machine="aarch64") == []  # the kernels and caps are x86's


def test_a_run_under_an_emulation_keeps_the_users_xla_flags_with_the_cap_after_them():
    (no_fma,) = [e for e in host_emulation.EMULATIONS if e.name == "no-fma"]
    assert no_fma.environment({"XLA_FLAGS": "--xla_cpu_enable_fast_math=false "}) == {
        "XLA_FLAGS": "--xla_cpu_enable_fast_math=false --xla_cpu_max_isa=AVX"}
    assert no_fma.environment({}) == {"XLA_FLAGS": "--xla_cpu_max_isa=AVX"}
    (haswell,) = [e for e in host_emulation.EMULATIONS if e.name == "blas-haswell"]
    assert haswell.environment({"XLA_FLAGS": "--x"}) == {"OPENBLAS_CORETYPE": "Haswell"}


def test_the_allowance_is_the_largest_noise_of_the_dimensions_that_differ_times_the_factor():
    noise = {"blas": 2e-7, "fma": 5e-7}
    assert host_emulation.allowance(noise, frozenset({Dimension.BLAS})) == (host_emulation.FACTOR * 2e-7,
                                                                            [Dimension.BLAS])
    assert host_emulation.allowance(noise, frozenset(Dimension)) == (host_emulation.FACTOR * 5e-7,
                                                                     [Dimension.BLAS, Dimension.FMA])
    assert host_emulation.allowance(noise, frozenset({Dimension.VECTOR})) == (0.0, [])  # never measured moving
    assert host_emulation.allowance(None, frozenset(Dimension)) == (0.0, [])
    assert host_emulation.allowance({"blas": True, "gpu": 1.0, "fma": -1}, frozenset(Dimension)) == (0.0, [])
