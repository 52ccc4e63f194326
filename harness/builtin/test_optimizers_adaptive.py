"""The adaptive classic optimizers and their update rules: rmsprop (scale_by_rms, scale_by_stddev),
adagrad (scale_by_rss), adadelta (scale_by_adadelta), adafactor (scale_by_factored_rms), sm3 (scale_by_sm3).

Six steps of each variant against the float64 references of harness/builtin/reference/classic.py (written
from the docstrings and papers), the emitted updates and the final state golden, the state's layout after
init golden. Each variant compiles once (harness/builtin/classic_runs.py); numeric hyperparameters are traced.
Tolerances are the reference kind's (64 float32 ulps at the value: six steps of a few roundings each), with a
named cancellation scale where the rule subtracts (momentum traces of either sign, nu - mu^2 when centered).
"""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from harness.builtin import classic_runs as runs
from harness.builtin.classic_runs import f32, leaf
from harness.builtin.reference import classic as ref

pytestmark = pytest.mark.family("optimizers")



# -- rmsprop(learning_rate, decay, eps, initial_scale, eps_in_sqrt, centered, momentum, nesterov, bias_correction) --
RMSPROP_VARIANTS = {  # name -> (centered, eps_in_sqrt, bias_correction, momentum is set, nesterov)
    "plain": (False, True, False, False, False),
    "centered-epsout-bc-momentum": (True, False, True, True, False),
    "epsout-bc-nesterov": (False, False, True, True, True),
    "centered-nesterov": (True, True, False, True, True),
}
_RMSPROP = {name: runs.runner(lambda lr, decay, eps, init, mom, c=c, s=s, b=b, m=m, n=n: optax.rmsprop(
    lr, decay=decay, eps=eps, initial_scale=init, eps_in_sqrt=s, centered=c, momentum=mom if m else None,
    nesterov=n, bias_correction=b)) for name, (c, s, b, m, n) in RMSPROP_VARIANTS.items()}


def _centered_scale(grads, decay, eps, init, bias_correction, steps):
    """|update| * nu / (nu - mu^2 + eps): where the centered denominator nu - mu^2 cancels, its rounding error
    is relative to nu, and the update's error is that much larger than its own ulps."""
    nu, mu, out = np.full_like(grads[0], init), np.zeros_like(grads[0]), []
    for t, (g, s) in enumerate(zip(grads, steps), 1):
        nu, mu = decay * nu + (1 - decay) * g * g, decay * mu + (1 - decay) * g
        c = 1 - decay ** t if bias_correction else 1.0
        out.append(np.abs(s) * (nu / c) / (nu / c - (mu / c) ** 2 + eps))
    return out


@pytest.mark.parametrize("variant", sorted(RMSPROP_VARIANTS))
def test_rmsprop(check, variant):
    """rmsprop(0.05, decay=0.8, eps=1e-3, initial_scale=0.5, momentum=0.7) over six steps against the float64
    RMSProp of the docstring (Hinton; centered: Graves; momentum after the rescaling: LaProp)."""
    per_step = runs.Stepwise(check)
    centered, in_sqrt, bc, has_momentum, nesterov = RMSPROP_VARIANTS[variant]
    lr, decay, eps, init, momentum = 0.05, 0.8, 1e-3, 0.5, 0.7
    seq, params = runs.grads(100), runs.params(101)
    run = _RMSPROP[variant](seq, params, lr, decay, eps, init, momentum)
    h = dict(decay=f32(decay), eps=f32(eps), initial_scale=f32(init), eps_in_sqrt=in_sqrt, bias_correction=bc,
             centered=centered)
    mom = f32(momentum) if has_momentum else None
    scales, state_scales = {}, {}
    for k in runs.KEYS:
        g = leaf(seq, k)
        expected = ref.rmsprop(g, f32(lr), mom, nesterov, **h)
        steps = [f32(lr) * np.abs(s) for s in ref.rms_scaling(g, **h)[0]]
        if centered:
            steps = _centered_scale(g, h["decay"], h["eps"], h["initial_scale"], bc, steps)
        scale = steps if mom is None else ref.momentum_trace(steps, mom, nesterov)
        why = "; ".join(w for w, on in ((runs.TRACE_WHY, mom is not None), ("centered: nu - mu^2 cancels", centered)) if on)
        for t, (u, e, s) in enumerate(zip(leaf(run.updates, k), expected, scale), 1):
            if why:
                per_step.reference(f"update {k}", u.astype(np.float32), e, scale=s, why=why)
                scales[f"{t - 1}/{k}"] = s
            else:
                per_step.reference(f"update {k}", u.astype(np.float32), e)
        if mom is not None:
            state_scales[f"2/trace/{k}"] = ref.momentum_trace(steps, mom, False)[-1]
    per_step.flush()
    runs.golden_run(check, f"rmsprop/{variant}", run, scales or None, state_scales or None,
                why="a momentum trace or a centered denominator: ulps at the operands' magnitude")


# -- scale_by_rms / scale_by_stddev(decay, eps, initial_scale, eps_in_sqrt, bias_correction) -----------------------
_RULES = {(name, in_sqrt, bc): runs.runner(lambda decay, eps, init, f=fn, s=in_sqrt, b=bc: f(
    decay=decay, eps=eps, initial_scale=init, eps_in_sqrt=s, bias_correction=b))
    for name, fn in (("scale_by_rms", optax.scale_by_rms), ("scale_by_stddev", optax.scale_by_stddev))
    for in_sqrt, bc in ((False, True),)}


@pytest.mark.parametrize("in_sqrt,bc", [(False, True)], ids=["eps-out-bias-corrected"])
@pytest.mark.parametrize("name", ["scale_by_rms", "scale_by_stddev"])
def test_rms_rules(check, name, in_sqrt, bc):
    """The update rules alone, decay=0.7, eps=1e-2, initial_scale=0.25, eps outside the root, bias-corrected
    (rmsprop's variants run them with eps inside and without correction too): the scaled gradient and the
    kept second moment nu against float64; the step count kept by the correction, exact."""
    per_step = runs.Stepwise(check)
    decay, eps, init = 0.7, 1e-2, 0.25
    centered = name == "scale_by_stddev"
    seq, params = runs.grads(110), runs.params(111)
    run = _RULES[(name, in_sqrt, bc)](seq, params, decay, eps, init)
    h = dict(decay=f32(decay), eps=f32(eps), initial_scale=f32(init), eps_in_sqrt=in_sqrt, bias_correction=bc,
             centered=centered)
    for k in runs.KEYS:
        g = leaf(seq, k)
        scaled, nus = ref.rms_scaling(g, **h)
        scale = _centered_scale(g, h["decay"], h["eps"], h["initial_scale"], bc, scaled) if centered else scaled
        for t, (u, e, s, state, nu) in enumerate(zip(leaf(run.updates, k), scaled, scale, run.states, nus), 1):
            if centered:
                per_step.reference(f"update {k}", u.astype(np.float32), e, scale=s, why="nu - mu^2 cancels")
            else:
                per_step.reference(f"update {k}", u.astype(np.float32), e)
            per_step.reference(f"nu {k}", state.nu[k], nu)
    per_step.flush()
    check.exact("count after the steps", int(run.states[-1].count), runs.STEPS)
    runs.golden_run(check, f"{name}/{'in' if in_sqrt else 'out'}-{'bc' if bc else 'nobc'}", run)


# -- adagrad(learning_rate, initial_accumulator_value, eps) / scale_by_rss(initial_accumulator_value, eps) ----------
_ADAGRAD = runs.runner(lambda lr, init, eps: optax.adagrad(lr, initial_accumulator_value=init, eps=eps))
_RSS = runs.runner(lambda init, eps: optax.scale_by_rss(initial_accumulator_value=init, eps=eps))


def test_adagrad(check):
    """adagrad(0.3, initial_accumulator_value=0.5, eps=0.01) and scale_by_rss(0.2, eps=0.05): six steps against
    g / sqrt(G + eps) of the docstring (Duchi et al.), G the initial value plus the sum of squares; the kept
    sum of squares too."""
    per_step = runs.Stepwise(check)
    seq, params = runs.grads(120), runs.params(121)
    run = _ADAGRAD(seq, params, 0.3, 0.5, 0.01)
    rss = _RSS(seq, params, 0.2, 0.05)
    for k in runs.KEYS:
        g = leaf(seq, k)
        for t, (u, e) in enumerate(zip(leaf(run.updates, k), ref.adagrad_scaling(g, f32(0.5), f32(0.01))), 1):
            per_step.reference(f"adagrad update {k}", u.astype(np.float32), -f32(0.3) * e)
        for t, (u, e) in enumerate(zip(leaf(rss.updates, k), ref.adagrad_scaling(g, f32(0.2), f32(0.05))), 1):
            per_step.reference(f"scale_by_rss update {k}", u.astype(np.float32), e)
        total = f32(0.2) + sum(x * x for x in g)
        check.reference(f"scale_by_rss sum of squares {k}", rss.states[-1].sum_of_squares[k], total)
    per_step.flush()
    runs.golden_run(check, "adagrad", run)
    runs.golden_run(check, "scale_by_rss", rss)


# -- adadelta(learning_rate, rho, eps, weight_decay, weight_decay_mask) / scale_by_adadelta(rho, eps) ---------------
_ADADELTA = runs.runner(lambda lr, rho, eps, wd: optax.adadelta(lr, rho=rho, eps=eps, weight_decay=wd,
                                                               weight_decay_mask={"b": False, "w": True}))
_SCALE_BY_ADADELTA = runs.runner(lambda rho, eps: optax.scale_by_adadelta(rho=rho, eps=eps))


def test_adadelta(check):
    """adadelta(0.5, rho=0.8, eps=1e-3, weight_decay=0.1, mask: only 'w' decays) and scale_by_adadelta(0.6,
    1e-2): six steps against Zeiler's Algorithm 1 (the docstring's formula) on g + weight_decay * w where the
    mask is True, the learning rate a global factor after it."""
    per_step = runs.Stepwise(check)
    seq, params = runs.grads(130), runs.params(131)
    run = _ADADELTA(seq, params, 0.5, 0.8, 1e-3, 0.1)
    rule = _SCALE_BY_ADADELTA(seq, params, 0.6, 1e-2)
    for k in runs.KEYS:
        g = leaf(seq, k)
        p = np.asarray(params[k], np.float64)
        decayed = [x + f32(0.1) * p for x in g] if k == "w" else g
        expected = ref.adadelta_scaling(decayed, f32(0.8), f32(1e-3))
        for t, (u, e) in enumerate(zip(leaf(run.updates, k), expected), 1):
            per_step.reference(f"adadelta update {k}", u.astype(np.float32), -f32(0.5) * e)
        for t, (u, e) in enumerate(zip(leaf(rule.updates, k), ref.adadelta_scaling(g, f32(0.6), f32(1e-2))), 1):
            per_step.reference(f"scale_by_adadelta update {k}", u.astype(np.float32), e)
    per_step.flush()
    runs.golden_run(check, "adadelta", run)
    runs.golden_run(check, "scale_by_adadelta", rule)


# -- adafactor(...) / scale_by_factored_rms(factored, decay_rate, step_offset, min_dim_size_to_factor, epsilon) -----
ADAFACTOR_VARIANTS = {  # name -> (factored, multiply_by_parameter_scale, momentum is set, weight decay is set)
    "factored-relative-momentum-decay": (True, True, True, True),
    "unfactored-absolute": (False, False, False, False),
}
FIRST_COUNT = 5  # the runs resume at step count 5, as a fine-tuning phase that starts there (decay_offset's use)


def _resume_factored(state):
    """The factored statistics' step count set to FIRST_COUNT (the first element of the chain's state or the
    rule's own state), the statistics left at zero."""
    if "count" in getattr(state, "_fields", ()):
        return state._replace(count=jnp.asarray(FIRST_COUNT, jnp.int32))
    return (state[0]._replace(count=jnp.asarray(FIRST_COUNT, jnp.int32)),) + tuple(state[1:])


_ADAFACTOR = {name: runs.runner(lambda lr, rate, clip, mom, wd, eps, f=f, p=p, m=m, w=w: optax.adafactor(
    lr, min_dim_size_to_factor=2, decay_rate=rate, decay_offset=3, multiply_by_parameter_scale=p,
    clipping_threshold=clip, momentum=mom if m else None, weight_decay_rate=wd if w else None, eps=eps, factored=f,
    weight_decay_mask={"b": False, "w": True}), resume=_resume_factored)
    for name, (f, p, m, w) in ADAFACTOR_VARIANTS.items()}
CAP = 0.55  # a capped beta2 schedule (Zhai et al. 2021, the docstring's example of a custom decay_rate_fn)


def _capped(step, rate):
    """1 - (step + 1)^-rate, at most CAP."""
    return jnp.minimum(1.0 - (step + 1.0) ** -rate, CAP)


def _capped_f64(step, rate):
    return min(1.0 - (step + 1.0) ** -rate, f32(CAP))


_FACTORED = {factored: runs.runner(lambda rate, eps, f=factored: optax.scale_by_factored_rms(
    factored=f, decay_rate=rate, step_offset=4, min_dim_size_to_factor=2, epsilon=eps,
    **({} if f else {"decay_rate_fn": _capped})), resume=_resume_factored) for factored in (True, False)}


@pytest.mark.parametrize("variant", sorted(ADAFACTOR_VARIANTS))
def test_adafactor(check, variant):
    """adafactor(0.1, decay_rate=0.6, decay_offset=3, clipping_threshold=1.2 (it binds at steps 1 and 6, the default 1.0 would at 2 and 3 too), eps=1e-3, momentum=0.5,
    weight_decay_rate=0.05 on 'w' only, min_dim_size_to_factor=2: the (2, 3) leaf is factored), resumed at
    step count 5 (t = 3 at the first step), against Shazeer & Stern's Algorithms 4-5 with update clipping,
    relative step size and momentum (harness/builtin/reference/classic.py)."""
    per_step = runs.Stepwise(check)
    factored, relative, has_momentum, has_decay = ADAFACTOR_VARIANTS[variant]
    seq, params = runs.grads(140), runs.params(141)
    run = _ADAFACTOR[variant](seq, params, 0.1, 0.6, 1.2, 0.5, 0.05, 1e-3)
    scales, state_scales = {}, {}
    for k in runs.KEYS:
        g, p = leaf(seq, k), np.asarray(params[k], np.float64)
        expected = ref.adafactor(g, p, f32(0.1), f32(1.2), relative, f32(0.5) if has_momentum else None,
                                 f32(0.05) if has_decay and k == "w" else None, decay_rate=f32(0.6),
                                 first_count=FIRST_COUNT, step_offset=3, epsilon=f32(1e-3), factored=factored)
        scale = [None] * runs.STEPS
        if has_momentum:  # an average of steps of either sign, plus wd * w: ulps at their magnitudes
            steps = ref.adafactor(g, p, f32(0.1), f32(1.2), relative, None, None, decay_rate=f32(0.6),
                                  first_count=FIRST_COUNT, step_offset=3, epsilon=f32(1e-3), factored=factored)
            average = ref.momentum_trace([(1 - f32(0.5)) * np.abs(x) for x in steps], f32(0.5), False)
            decay = f32(0.05) * np.abs(p) if has_decay and k == "w" else 0.0
            scale = [a + decay for a in average]
            state_scales[f"4/ema/{k}"] = average[-1]
            scales.update({f"{t}/{k}": s for t, s in enumerate(scale)})
        for t, (u, e, s) in enumerate(zip(leaf(run.updates, k), expected, scale), 1):
            if s is None:
                per_step.reference(f"update {k}", u.astype(np.float32), e)
            else:
                per_step.reference(f"update {k}", u.astype(np.float32), e, scale=s,
                                why="momentum averages steps of either sign; plus weight_decay_rate * w")
    per_step.flush()
    check.exact("count after the steps", int(run.states[-1][0].count), FIRST_COUNT + runs.STEPS)
    runs.golden_run(check, f"adafactor/{variant}", run, scales or None, state_scales or None,
                why="momentum averages steps of either sign; plus weight_decay_rate * w: ulps at their magnitudes")


@pytest.mark.parametrize("factored", [True, False], ids=["factored", "unfactored"])
def test_scale_by_factored_rms(check, factored):
    """scale_by_factored_rms(decay_rate=0.5, step_offset=4, min_dim_size_to_factor=2, epsilon=1e-2), resumed at
    count 5 (t = 2 first): G / sqrt(V) of Shazeer & Stern, V factored for the (2, 3) leaf only when factored;
    unfactored with a custom decay_rate_fn (beta2 capped at 0.55, reached from the third step)."""
    per_step = runs.Stepwise(check)
    seq, params = runs.grads(150), runs.params(151)
    run = _FACTORED[factored](seq, params, 0.5, 1e-2)
    for k in runs.KEYS:
        expected = ref.factored_rms(leaf(seq, k), f32(0.5), FIRST_COUNT, 4, f32(1e-2), factored,
                                    None if factored else _capped_f64)
        for t, (u, e) in enumerate(zip(leaf(run.updates, k), expected), 1):
            per_step.reference(f"update {k}", u.astype(np.float32), e)
    check.exact("row/column statistics kept for the matrix", np.shape(run.states[-1].v_row["w"]),
                (2,) if factored else (1,))
    per_step.flush()
    runs.golden_run(check, f"scale_by_factored_rms/{'factored' if factored else 'unfactored'}", run)


# -- sm3(learning_rate, momentum) / scale_by_sm3(b1, b2, eps) ------------------------------------------------------
_SM3 = runs.runner(lambda lr, mom: optax.sm3(lr, momentum=mom))
_SCALE_BY_SM3 = runs.runner(lambda b1, eps: optax.scale_by_sm3(b1=b1, b2=0.9, eps=eps))  # b2 is read in Python


def test_sm3(check):
    """sm3(0.2, momentum=0.6) and scale_by_sm3(b1=0.3, b2=0.9, eps=1e-2): six steps against SM3-II (Anil et al.,
    Algorithm 2, a cover set per row and per column) with momentum (the paper's Section 5)."""
    per_step = runs.Stepwise(check)
    seq, params = runs.grads(160), runs.params(161)
    run = _SM3(seq, params, 0.2, 0.6)
    rule = _SCALE_BY_SM3(seq, params, 0.3, 1e-2)
    scales, rule_scales, state_scales, rule_state_scales = {}, {}, {}, {}
    for k in runs.KEYS:
        g = leaf(seq, k)
        for t, (u, e, s) in enumerate(zip(leaf(run.updates, k), ref.sm3(g, f32(0.6), 1e-8),
                                          ref.sm3([np.abs(x) for x in g], f32(0.6), 1e-8)), 1):
            per_step.reference(f"sm3 update {k}", u.astype(np.float32), -f32(0.2) * e, scale=f32(0.2) * s,
                            why=runs.TRACE_WHY)
            scales[f"{t - 1}/{k}"], state_scales[f"0/nu/{k}"] = f32(0.2) * s, s
        for t, (u, e, s) in enumerate(zip(leaf(rule.updates, k), ref.sm3(g, f32(0.3), f32(1e-2), 0.9),
                                          ref.sm3([np.abs(x) for x in g], f32(0.3), f32(1e-2), 0.9)), 1):
            per_step.reference(f"scale_by_sm3 update {k}", u.astype(np.float32), e, scale=s, why=runs.TRACE_WHY)
            rule_scales[f"{t - 1}/{k}"], rule_state_scales[f"nu/{k}"] = s, s
    per_step.flush()
    runs.golden_run(check, "sm3", run, scales, state_scales)
    runs.golden_run(check, "scale_by_sm3", rule, rule_scales, rule_state_scales)
