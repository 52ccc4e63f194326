"""The host's CPU in a golden file's provenance, and the note a golden mismatch carries when the values were
recorded on a CPU whose numerics features differ (16-bit arithmetic rounds per op where the CPU has it)."""

from harness.model import host_cpu

SAPPHIRE = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n"
            "flags\t\t: fpu sse avx2 fma avx512f avx512bw avx512_bf16 avx512_fp16 sha_ni\n\nprocessor\t: 1\n")
ICELAKE = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C\nflags\t\t: fpu sse avx2 fma avx512f avx512bw\n"
ARM = "processor\t: 0\nFeatures\t: fp asimd asimdhp bf16 sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n"


def test_the_first_processors_model_and_features_are_read_on_x86_and_arm():
    assert host_cpu.cpu_fields(SAPPHIRE)["model name"] == "Intel(R) Xeon(R) Processor"
    assert host_cpu.cpu_fields(ARM) == {"Features": "fp asimd asimdhp bf16 sve", "CPU implementer": "0x41",
                                        "CPU part": "0xd40"}


def test_only_the_features_that_move_numerics_are_kept():
    """16-bit arithmetic and fused multiply-add move results; the vector width (avx2, avx512f, sve) did not."""
    assert host_cpu.describe(SAPPHIRE) == {"cpu": "Intel(R) Xeon(R) Processor",
                                           "numerics_features": ["avx512_bf16", "avx512_fp16", "fma"]}
    assert host_cpu.describe(ARM) == {"cpu": "Arm 0x41 part 0xd40", "numerics_features": ["asimdhp", "bf16"]}
    assert host_cpu.describe("") == {"cpu": "unknown", "numerics_features": None}


def test_a_recording_on_another_cpu_is_named_with_the_features_that_differ():
    note = host_cpu.difference(host_cpu.describe(ICELAKE), host_cpu.describe(SAPPHIRE))
    assert "Platinum 8375C" in note and "this machine has avx512_bf16, avx512_fp16;" in note
    assert "docs/tolerances.md" in note
    back = host_cpu.difference(host_cpu.describe(SAPPHIRE), host_cpu.describe(ICELAKE))
    assert "this machine lacks avx512_bf16, avx512_fp16;" in back


def test_the_same_features_or_an_unknown_recording_host_say_nothing():
    here = host_cpu.describe(SAPPHIRE)
    assert host_cpu.difference(here, here) is None
    assert host_cpu.difference(dict(here, cpu="another model name"), here) is None  # same numerics features
    assert host_cpu.difference(None, here) is None  # recorded before hosts were noted: nothing to say
    assert host_cpu.difference(here, host_cpu.describe("")) is None  # this machine's features unknown
    assert host_cpu.difference("x86", here) is None  # a hand-edited provenance: nothing to say, no error
