"""The built-in contracts: Optax's and Flax NNX's behaviour a training step relies on, one module per
family (accumulation, schedules, clipping, masks, shapes, training). They run inside an entry's
environment with the `check` fixture of harness.contract.plugin, and ship with the package, so a
team's project runs them by default beside its own contracts (`builtin = false` switches them off).
"""
