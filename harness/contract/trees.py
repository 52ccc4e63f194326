"""Naming the leaves of a pytree: the one helper behind every recorded tree layout.

Two spellings are recorded in golden values, so both stay: ``path`` ('w/0/kernel', readable in
golden keys) and ``keystr`` (JAX's own ".acc_grads['bias']", as in optimizer-state layouts).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def path_name(keypath) -> str:
    """'a/0/kernel' for a JAX key path: dict keys, sequence indices and attribute names joined by '/'."""
    return "/".join(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in keypath)


def leaves(tree, is_leaf: Callable[[Any], bool] | None = None) -> dict[str, Any]:
    """Leaves by path name, in JAX's flattening order."""
    from jax import tree_util

    return {path_name(p): leaf for p, leaf in tree_util.tree_flatten_with_path(tree, is_leaf=is_leaf)[0]}


def layout(tree, *, keys: str = "path") -> list[list]:
    """[path, dtype, shape] per leaf: what a checkpoint's or a result's structure depends on.

    ``keys`` is "path" (path_name) or "keystr" (jax.tree_util.keystr).
    """
    from jax import tree_util

    name = path_name if keys == "path" else tree_util.keystr
    return [[name(p), str(np.asarray(leaf).dtype), list(np.shape(leaf))]
            for p, leaf in tree_util.tree_flatten_with_path(tree)[0]]


def describe(value) -> list | str:
    """The keystr layout of a call's result for a report, or a short repr when it is not a pytree of arrays."""
    try:
        from jax import tree_util

        flat = tree_util.tree_flatten_with_path(value)[0]
        return [[tree_util.keystr(path), str(getattr(leaf, "dtype", type(leaf).__name__)),
                 list(getattr(leaf, "shape", []))] for path, leaf in flat][:50]
    except Exception:  # not a pytree of arrays: a short description is enough
        return repr(value)[:300]


def _spec(leaf) -> str:
    if leaf is None:
        return "= None"
    return f"of shape {tuple(np.shape(leaf))}" if hasattr(leaf, "shape") else f"= a {type(leaf).__name__}"


def mismatch(tree, like, name: str = "grads", like_name: str = "params") -> str:
    """How `tree`'s leaves differ from `like`'s, in a reviewer's words: "grads['bias'] of shape (1,)
    for params['bias'] of shape (3,)"; for a check's describe_input."""
    from jax import tree_util

    def flat(t):
        return {tree_util.keystr(p): leaf
                for p, leaf in tree_util.tree_flatten_with_path(t, is_leaf=lambda x: x is None)[0]}

    mine, theirs = flat(tree), flat(like)
    parts = [f"{name}{k} {_spec(mine[k])} for {like_name}{k} {_spec(theirs[k])}"
             for k in mine if k in theirs and _spec(mine[k]) != _spec(theirs[k])]
    extra = [k for k in mine if k not in theirs]
    lacking = [k for k in theirs if k not in mine]
    if extra:
        parts.append(f"{name} with {', '.join(extra)} that {like_name} lack")
    if lacking:
        parts.append(f"{name} without {', '.join(lacking)}")
    return "; ".join(parts) or f"{name} matching {like_name}"
