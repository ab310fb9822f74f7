"""The same random-play loops on other 2048 implementations, when they are installed
(``pip install ai2048[bench]``): OpenSpiel's ``2048`` game and pgx's ``2048`` env."""

from __future__ import annotations

import importlib.util
import random
import time


def available(module: str) -> bool:
    """True if ``module`` can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def openspiel_steps_per_s(seconds: float, seed: int = 0) -> float:
    """A plain Python loop over OpenSpiel's 2048: a random legal move, then its chance node.

    Counts moves (player actions), the unit of a Gymnasium ``step``; timed in thread CPU time like
    the single-thread figures of :mod:`ai2048.bench`.
    """
    import pyspiel

    game = pyspiel.load_game("2048")
    rng = random.Random(seed)
    steps = 0
    start = time.thread_time()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                chosen, r = outcomes[-1][0], rng.random()
                for a, p in outcomes:
                    r -= p
                    if r < 0:
                        chosen = a
                        break
                state.apply_action(chosen)
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                steps += 1
    return steps / (time.thread_time() - start)


def pgx_steps_per_s(num_envs: int, seconds: float, seed: int = 0) -> float:
    """pgx's 2048 on CPU: ``jit(vmap(step))`` over ``num_envs`` games with random legal actions and
    autoreset, the loop of pgx's own speed benchmark. Compilation is excluded."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("2048")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))

    @jax.jit
    def act(key, mask):
        logits = jnp.where(mask, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits, axis=-1)

    key = jax.random.PRNGKey(seed)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, num_envs))

    def one(state, key):
        key, k1, k2 = jax.random.split(key, 3)
        action = act(k1, state.legal_action_mask)
        return step(state, action, jax.random.split(k2, num_envs)), key

    for _ in range(3):  # compile and warm up
        state, key = one(state, key)
    jax.block_until_ready(state)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, key = one(state, key)
        steps += num_envs
    jax.block_until_ready(state)
    return steps / (time.perf_counter() - start)
