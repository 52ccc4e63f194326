"""upgrade-harness: does bumping JAX / jaxlib / Optax / Flax change the optimizer behaviour you rely on?"""

__version__ = "0.1.0"
