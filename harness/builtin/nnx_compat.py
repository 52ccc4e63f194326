"""The one compatibility layer for Flax NNX API differences the training contracts meet.

Each difference is detected by feature (a signature, an attribute), never by version number, and
the detected form is reported by ``api_facts()`` so test_training.py makes an API change its own
golden-fact outcome ("api/...") while the numeric contracts still run through the form found.
Nothing here runs at import: a Flax without one of these APIs fails the checks that need it, not
the collection of the suite.

* ``nnx.Optimizer(model, tx, wrt=...)``: ``wrt`` is required since Flax 0.11, absent in very old
  releases.
* ``optimizer.update(model, grads)`` since Flax 0.11; ``optimizer.update(grads)`` before (the
  optimizer held the model; ``nnx.ModelAndOptimizer`` keeps that form).
* Train/eval mode: ``model.train()`` / ``model.eval()``; else ``set_attributes(deterministic=...)``.
* Reading a Variable: ``var[...]`` (``.value`` is deprecated in Flax 0.12), else ``get_value()``,
  else ``.value``.
"""

from __future__ import annotations

import inspect

import jax
from flax import nnx


def _positional(fn) -> list[str]:
    """Names of the positional parameters of fn (self excluded), following functools.wraps."""
    params = inspect.signature(fn).parameters.values()
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[1:] if names[:1] == ["self"] else names


def _update_form(update) -> str:
    return "update(model, grads)" if len(_positional(update)) >= 2 else "update(grads)"


def _takes_wrt() -> bool:
    return "wrt" in inspect.signature(nnx.Optimizer.__init__).parameters


def _has_train_eval() -> bool:
    return callable(getattr(nnx.Module, "train", None)) and callable(getattr(nnx.Module, "eval", None))


def api_facts() -> dict:
    """The API forms this Flax offers, as JSON ("missing" when a form is gone)."""
    optimizer = getattr(nnx, "Optimizer", None)
    if optimizer is None:
        return {"optimizer_init": "missing", "optimizer_update_signature": "missing",
                "mode_switch": "model.train()/model.eval()" if _has_train_eval() else "set_attributes(deterministic=...)"}
    return {
        "optimizer_init": "Optimizer(model, tx, wrt=...)" if _takes_wrt() else "Optimizer(model, tx)",
        "optimizer_update_signature": _update_form(optimizer.update),
        "mode_switch": "model.train()/model.eval()" if _has_train_eval() else "set_attributes(deterministic=...)",
    }


def update_style(optimizer) -> str:
    """The update form of this optimizer instance (nnx.ModelAndOptimizer keeps update(grads))."""
    return _update_form(optimizer.update)


def make_optimizer(model, tx, wrt=nnx.Param):
    return nnx.Optimizer(model, tx, wrt=wrt) if _takes_wrt() else nnx.Optimizer(model, tx)


def apply_grads(optimizer, model, grads) -> None:
    """One optimizer.update call (one microbatch when tx is MultiSteps)."""
    if update_style(optimizer) == "update(model, grads)":
        optimizer.update(model, grads)
    else:
        optimizer.update(grads)


def set_training(model, training: bool) -> None:
    """Train mode (dropout on) or eval mode (dropout off), set explicitly."""
    if _has_train_eval():
        model.train() if training else model.eval()
    else:
        model.set_attributes(deterministic=not training)


def read(variable):
    """A Variable's array without the deprecated ``.value``."""
    try:
        return variable[...]
    except (TypeError, IndexError, KeyError, AttributeError):
        getter = getattr(variable, "get_value", None)
        return getter() if callable(getter) else variable.value


def pure(tree):
    """A tree of Variables (nnx.State, an optimizer's opt_state) as a tree of plain arrays."""
    return jax.tree.map(lambda v: read(v) if isinstance(v, nnx.Variable) else v, tree,
                        is_leaf=lambda x: isinstance(x, nnx.Variable))
