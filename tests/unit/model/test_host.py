"""The host in a report and a golden file's provenance (its CPU, what XLA compiles for there, the BLAS kernel), the
dimensions in which two hosts differ, and the note a golden mismatch carries when the values were recorded on a
host that computes otherwise."""

from harness.model import host

SAPPHIRE = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n"
            "flags\t\t: fpu sse avx avx2 fma avx512f avx512bw avx512_bf16 avx512_fp16 sha_ni\n\nprocessor\t: 1\n")
ICELAKE = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C\n"
           "flags\t\t: fpu sse avx avx2 fma avx512f avx512bw\n")
LAPTOP = "processor\t: 0\nmodel name\t: Intel(R) Core(TM) i7-8650U\nflags\t\t: fpu sse pni avx avx2 fma f16c\n"
ATOM = "processor\t: 0\nmodel name\t: Intel(R) Atom(TM) x5-Z8350\nflags\t\t: fpu sse pni sse4_2\n"
ARM = "processor\t: 0\nFeatures\t: fp asimd asimdhp bf16 sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n"


def test_the_first_processors_model_and_features_are_read_on_x86_and_arm():
    assert host.cpu_fields(SAPPHIRE)["model name"] == "Intel(R) Xeon(R) Processor"
    assert host.cpu_fields(ARM) == {"Features": "fp asimd asimdhp bf16 sve", "CPU implementer": "0x41",
                                    "CPU part": "0xd40"}


def test_a_host_names_its_cpu_what_xla_compiles_for_and_the_blas_kernel():
    found = host.describe(SAPPHIRE, "x86_64", "", "SkylakeX")
    assert found == host.Host(cpu="Intel(R) Xeon(R) Processor", machine="x86_64",
                              numerics_features=["avx512_bf16", "avx512_fp16", "fma"], vector="AVX512", fma=True,
                              blas="SkylakeX")
    assert found.text() == ("Intel(R) Xeon(R) Processor (x86_64, AVX512, FMA, avx512_bf16, avx512_fp16; "
                            "OpenBLAS SkylakeX)")
    assert host.describe(LAPTOP).vector == "AVX2" and host.describe(LAPTOP).fma
    assert (host.describe(ATOM).vector, host.describe(ATOM).fma) == ("SSE4_2", False)
    assert host.describe(ARM, "aarch64") == host.Host(cpu="Arm 0x41 part 0xd40", machine="aarch64",
                                                      numerics_features=["asimdhp", "bf16"], vector="NEON", fma=True)
    assert host.describe("", "x86_64") == host.Host(cpu="unknown", machine="x86_64", numerics_features=None)


def test_xla_flags_cap_the_vector_instructions_and_fused_multiply_add_the_last_flag_winning():
    assert host.describe(SAPPHIRE, xla_flags="--xla_cpu_max_isa=AVX2").vector == "AVX2"
    capped = host.describe(SAPPHIRE, xla_flags="--xla_cpu_max_isa=AVX2 --xla_force_host_platform_device_count=4 "
                                               "--xla_cpu_max_isa=avx")
    assert (capped.vector, capped.fma) == ("AVX", False)
    assert host.describe(SAPPHIRE, xla_flags="--xla_cpu_max_isa=AVX512_BF16").vector == "AVX512"
    assert host.describe(LAPTOP, xla_flags="--xla_cpu_max_isa=AVX512").vector == "AVX2"  # a cap never raises it


def test_a_provenance_round_trips_and_an_older_file_has_the_fields_it_never_noted_unknown():
    found = host.describe(SAPPHIRE, "x86_64", "", "Haswell")
    assert host.from_provenance(host.provenance(found)) == found
    older = host.from_provenance({"cpu": "AMD EPYC", "numerics_features": ["avx512_bf16", "fma"]})
    assert older == host.Host(cpu="AMD EPYC", machine="x86_64", numerics_features=["avx512_bf16", "fma"])
    assert host.from_provenance(None) is None and host.from_provenance("x86") is None  # a hand-edited provenance


def test_the_dimensions_two_hosts_differ_in():
    here = host.describe(SAPPHIRE, "x86_64", "", "SkylakeX")
    D = host.Dimension
    assert host.differences(here, here) == frozenset()
    assert host.differences(here, host.describe(SAPPHIRE, "x86_64", "", "Haswell")) == {D.BLAS}
    assert host.differences(here, host.describe(SAPPHIRE, "x86_64", "--xla_cpu_max_isa=AVX", "SkylakeX")) == {
        D.VECTOR, D.FMA}
    assert host.differences(here, host.describe(ICELAKE, "x86_64", "", "SkylakeX")) == {D.NUMERICS16}
    assert host.differences(here, host.describe(ARM, "aarch64", "", "NEOVERSEN1")) == frozenset(D)
    assert host.differences(None, here) == frozenset(D)  # not known where they were recorded: any of them
    older = host.from_provenance({"cpu": "Intel(R) Xeon(R) Processor",
                                  "numerics_features": ["avx512_bf16", "avx512_fp16", "fma"]})
    assert host.differences(older, here) == {D.BLAS, D.VECTOR, D.FMA}  # never noted: they may differ


def test_a_mismatch_against_values_recorded_on_another_host_says_how_it_differs():
    sapphire, icelake = host.describe(SAPPHIRE, blas="SkylakeX"), host.describe(ICELAKE, blas="SkylakeX")
    note = host.note(icelake, sapphire)
    assert "recorded on another host (Intel(R) Xeon(R) Platinum 8375C" in note
    assert "this machine has avx512_bf16, avx512_fp16" in note
    assert "this machine lacks avx512_bf16, avx512_fp16" in host.note(sapphire, icelake)
    haswell = host.describe(SAPPHIRE, blas="Haswell")
    assert "BLAS kernel Haswell here, SkylakeX where recorded" in host.note(sapphire, haswell)
    no_fma = host.describe(SAPPHIRE, xla_flags="--xla_cpu_max_isa=AVX", blas="SkylakeX")
    assert "vector instructions AVX here, AVX512 where recorded; fused multiply-add where recorded, not here" in (
        host.note(sapphire, no_fma))
    arm = host.describe(ARM, "aarch64")
    assert "another architecture (aarch64 here, x86_64 where recorded)" in host.note(sapphire, arm)


def test_nothing_is_said_on_the_same_host_or_of_what_a_side_never_noted():
    here = host.describe(SAPPHIRE, blas="SkylakeX")
    assert host.note(here, here) is None
    assert host.note(None, here) is None  # recorded before hosts were noted: nothing to say
    older = host.from_provenance({"cpu": "another model name",
                                  "numerics_features": ["avx512_bf16", "avx512_fp16", "fma"]})
    assert host.note(older, here) is None  # the same numerics features; the rest never noted
    assert host.note(here, host.describe("", blas="SkylakeX")) is None  # this machine's features unknown
