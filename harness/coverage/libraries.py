"""The libraries whose public surface the coverage ledger accounts for, and which part of each: what a
training step calls besides an optimizer is half of what a bump moves (issue: the whole training step).

Each is read from its installed source (griffe, harness.coverage.surface), never listed by hand: `roots` are the
public modules walked, `defined_in` keeps only the callables defined in those modules (the rest of a large
package is not the step's). Flax's activations (`flax.nnx.relu`, ...) are jax.nn's own functions re-exported:
they are accounted for once, in the JAX section.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Library:
    package: str  # the import name, also the first part of every ledger name of it: optax, flax, jax
    roots: tuple[str, ...]  # the public modules whose names make its surface
    defined_in: tuple[str, ...] = ()  # only callables defined in these modules (empty: every one walked)
    part: str = "every public callable"  # which part of the library, as the coverage command says it
    methods: bool = False  # a class's public methods are callables of their own (what a step calls on a wrapper)

    def keeps(self, defined_at: str) -> bool:
        """Whether a callable defined at `defined_at` (its canonical path) is in this library's surface."""
        return not self.defined_in or any(defined_at.startswith(m + ".") for m in self.defined_in)


OPTAX = Library("optax", ("optax",))
FLAX = Library("flax", ("flax",), defined_in=("flax.nnx.training.optimizer", "flax.training.train_state"),
               part="the optimizer wrapper and the train state a step updates through", methods=True)
JAX = Library("jax", ("jax.nn", "jax.nn.initializers", "jax.random"),
              part="jax.nn and jax.random: the activations, initialisers and random draws a model is made of")
LIBRARIES: tuple[Library, ...] = (OPTAX, FLAX, JAX)
BY_PACKAGE = {lib.package: lib for lib in LIBRARIES}
