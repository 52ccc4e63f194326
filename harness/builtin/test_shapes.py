"""Incompatible-shape contracts: gradients whose leaf shape, rank or tree structure does not match
the params, given to MultiSteps, clip_by_global_norm, add_decayed_weights, adamw and apply_updates.

Nothing documents what these calls do, so the observed outcome is the contract: the exception type
(check.error_contract) or, when there is none, the layout (paths, shapes, dtypes) of what came out,
optimizer state included (check.golden_fact). A silent broadcast that used to be an error, or the
reverse, or a broadcast to a different shape, is then a reported change. Cases run eagerly and
under jit where the two can differ (see MODES). The mismatches of MultiSteps(sgd) that
test_accumulation.py already checks eagerly (leaf shape, rank, renamed key, extra leaf) run here
under jit only.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract import strategies, trees

pytestmark = pytest.mark.family("shapes")

LR = 0.1
WD = 0.25


def _ones(shape, value=1.0):
    return jnp.full(shape, value, jnp.float32)


PARAMS = {"kernel": _ones((2, 3), 0.5), "bias": _ones((3,), -0.25)}

# Gradients for PARAMS, named by how they differ from it.
GRADS = {
    "match": {"kernel": _ones((2, 3)), "bias": _ones((3,))},
    # leaf shape
    "leaf_broadcastable": {"kernel": _ones((2, 3)), "bias": _ones((1,))},
    "leaf_incompatible": {"kernel": _ones((2, 3)), "bias": _ones((4,))},
    "transposed": {"kernel": _ones((3, 2)), "bias": _ones((3,))},
    # rank
    "rank_up": {"kernel": _ones((2, 3)), "bias": _ones((1, 3))},
    "rank_up_outer": {"kernel": _ones((2, 3)), "bias": _ones((3, 1))},
    "rank_down": {"kernel": _ones((3,)), "bias": _ones((3,))},
    "scalar_leaf": {"kernel": _ones((2, 3)), "bias": _ones(())},
    # tree structure
    "missing_key": {"kernel": _ones((2, 3))},
    "extra_key": {"kernel": _ones((2, 3)), "bias": _ones((3,)), "scale": _ones((3,))},
    "renamed_key": {"kernel": _ones((2, 3)), "b": _ones((3,))},
    "none_leaf": {"kernel": _ones((2, 3)), "bias": None},
    "nested_leaf": {"kernel": {"w": _ones((2, 3))}, "bias": _ones((3,))},
    "list_container": [_ones((2, 3)), _ones((3,))],
}


def _multisteps(make_inner):
    def run(grads, params):
        tx = optax.MultiSteps(make_inner(), every_k_schedule=2)
        state = tx.init(params)
        for _ in range(2):  # the second call emits
            updates, state = tx.update(grads, state, params)
        return {"updates": updates, "state": state}
    return run


def _transform(make):
    def run(grads, params):
        tx = make()
        updates, state = tx.update(grads, tx.init(params), params)
        return {"updates": updates, "state": state}
    return run


def _apply_updates(grads, params):
    return {"params": optax.apply_updates(params, grads)}


OPS = {
    "multisteps_sgd": _multisteps(lambda: optax.sgd(LR)),
    "multisteps_adam": _multisteps(lambda: optax.adam(LR)),
    "clip_by_global_norm": _transform(lambda: optax.clip_by_global_norm(1.0)),
    "add_decayed_weights": _transform(lambda: optax.add_decayed_weights(WD)),
    "adamw": _transform(lambda: optax.adamw(LR, weight_decay=WD)),
    "apply_updates": _apply_updates,
}

# Eager and jit agreed for every op and case at the baseline and candidate stacks when this module
# was written: each op's shape handling happens while tracing (MultiSteps goes through lax.cond even
# eagerly), and an eager call pays a compile per primitive and shape. So eager calls are kept for
# apply_updates (often called outside jit) and MultiSteps(sgd) (the eager cases test_accumulation.py
# lacks); the others run under jit only.
MODES = {
    "multisteps_sgd": ("eager", "jit"),
    "multisteps_adam": ("jit",),
    "clip_by_global_norm": ("jit",),
    "add_decayed_weights": ("jit",),
    "adamw": ("jit",),
    "apply_updates": ("eager", "jit"),
}

# MultiSteps(sgd) mismatches test_accumulation.py::test_mismatched_grads_error checks eagerly.
IN_ACCUMULATION = {"leaf_incompatible", "rank_up", "renamed_key", "extra_key"}

# clip_by_global_norm never reads the params: one case per kind of mismatch is enough to see it
# start (or stop) comparing the gradients with them.
CLIP_CASES = {"match", "leaf_incompatible", "rank_up_outer", "missing_key", "none_leaf", "list_container"}


def _selected(op, case, mode) -> bool:
    if mode not in MODES[op]:
        return False
    if op == "multisteps_sgd" and mode == "eager" and case in IN_ACCUMULATION:
        return False
    return op != "clip_by_global_norm" or case in CLIP_CASES


CASES = [(op, case, mode) for op in OPS for case in GRADS for mode in ("eager", "jit") if _selected(op, case, mode)]


@pytest.mark.parametrize("op,case,mode", CASES, ids=["-".join(c) for c in CASES])
def test_mismatched_grads(check, op, case, mode):
    """Gradients whose shapes or structure do not match the params: the exception raised, or without
    one the layout of the output and state, is the contract."""
    run = jax.jit(OPS[op]) if mode == "jit" else OPS[op]
    key = f"{op}/{case}/{mode}"
    check.describe_input(f"{trees.mismatch(GRADS[case], PARAMS)} ({'under jit' if mode == 'jit' else 'eager'})")
    result = check.error_contract(key, run, GRADS[case], PARAMS)
    if not isinstance(result, Exception):
        check.golden_fact(f"{key}/layout", trees.layout(result))


# -- property: silent broadcasting follows NumPy's rule --------------------------------------------
def _variants(shape):
    """Shapes a gradient leaf may wrongly have instead of `shape`: some broadcast with it, some do not."""
    out = {(1,) + shape, shape + (1,), (), shape[1:], shape[:-1], tuple(reversed(shape)),
           tuple(1 for _ in shape), shape[:-1] + (shape[-1] + 1,) if shape else (2,)}
    out.discard(shape)
    return sorted(out)


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


# The ops of OPS whose result, per leaf, is elementwise in grad and param (MultiSteps is not: its
# lax.cond rejects a broadcast at baseline; clip_by_global_norm never reads the params).
BROADCASTING_OPS = ["add_decayed_weights", "adamw", "apply_updates"]


@given(template=strategies.template_names(), operation=st.sampled_from(BROADCASTING_OPS), data=st.data())
def test_property_broadcasting_follows_numpy(check, template, operation, data):
    """Any layout, one gradient leaf given a wrong shape: the call raises exactly when NumPy cannot
    broadcast the two shapes, and otherwise silently produces the broadcast shape.

    Only shapes matter, so the call is traced abstractly (jax.eval_shape: what a jitted call would
    produce, without compiling each drawn shape); test_mismatched_grads runs real calls.
    """
    layout = strategies.TEMPLATES[template]
    shapes = strategies.leaf_shapes(layout)
    index = data.draw(st.integers(0, len(shapes) - 1))
    wrong = data.draw(st.sampled_from(_variants(shapes[index])))
    grad_shapes = iter([wrong if i == index else s for i, s in enumerate(shapes)])
    params = strategies.build(layout, lambda s: jax.ShapeDtypeStruct(s, jnp.float32))
    grads = strategies.build(layout, lambda _s: jax.ShapeDtypeStruct(next(grad_shapes), jnp.float32))
    expected = [_broadcast(p.shape, g.shape) for p, g in zip(jax.tree.leaves(params), jax.tree.leaves(grads))]
    try:
        out = jax.eval_shape(OPS[operation], grads, params)
    except Exception:  # which type: the golden contracts of test_mismatched_grads
        out = None
    check.exact(f"{operation} raises iff NumPy cannot broadcast", out is None, None in expected)
    if out is not None:
        updates = out["params"] if operation == "apply_updates" else out["updates"]
        check.exact(f"{operation} output shapes are NumPy's broadcast shapes",
                    [list(x.shape) for x in jax.tree.leaves(updates)], [list(e) for e in expected])
        check.exact(f"{operation} output dtypes", [str(x.dtype) for x in jax.tree.leaves(updates)],
                    ["float32"] * len(shapes))
