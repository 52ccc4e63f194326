"""The public API of the stack's libraries, read statically with griffe (no JAX import on the host), and
how it changed between two entries (harness.model.api_diff)."""
