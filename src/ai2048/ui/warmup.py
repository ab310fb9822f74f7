"""Warm the web app up before ``ai2048 serve`` announces its address: no request waits for a kernel.

A cold server compiled (or loaded from numba's disk cache) the kernels of each agent inside the
first request that needed it, loaded the shipped network inside the first hint and imported every
agent's module inside the first ``GET /api/agents``: seconds of waiting for the first board, and on
a fresh install requests that took longer than ``--budget``. :func:`warm_up` does all of that first,
through the paths the requests take (a :class:`~ai2048.ui.session.PlaySession` with a move, an
undo, a record, and a hint and an AI move with the default agent), then plays one cheap decision
with every web agent and every model at each entry of :data:`ai2048.ui.limits.WARM_UP`.

The work is bounded by those tables and the models on offer, and it runs in the calling (main)
thread, so Ctrl-C stops it at once; ``stopped`` is asked between its steps as well, because an
interrupt that lands inside a ctypes callback of numba's kernel loading is printed and swallowed
there ("Exception ignored on calling ctypes callback function"). Each model is loaded once (its
entries share the network) and dropped before the next; only the default agent stays built, in the
server's cache. A model that cannot be built is reported and skipped (its requests then get the
same error, as a 400).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ai2048.ui.limits import MODEL_PREFIX, WARM_UP, build
from ai2048.ui.session import PlaySession

WARM_SEED = 0
"""The seed of the game the warm-up plays on."""


def _session_paths(session: PlaySession) -> None:
    """What the game requests run: state, a legal move, undo and the record."""
    session.state()
    legal = session.recorder.game.legal_actions()
    if legal:
        session.move(legal[0])
        session.undo()
    session.record("serve").to_dict()


def _decide(agent: Any, name: str, config: dict[str, Any]) -> None:
    """One hint (``act`` and ``explain``) and one AI move with a built agent, as the requests do."""
    session = PlaySession(seed=WARM_SEED, agent=name, agent_config=config)
    session.hint(agent)
    session.ai_move(agent)


def warm_up(app: Any, say: Callable[[str], None] = lambda _: None,
            stopped: Callable[[], bool] = lambda: False) -> float:
    """Load and compile everything the requests of ``app`` (:func:`ai2048.ui.server.create_app`) can
    need; returns the seconds it took. ``say`` gets a line per model that cannot be built; when
    ``stopped()`` turns true the warm-up raises KeyboardInterrupt at its next step."""

    def step() -> None:
        if stopped():
            raise KeyboardInterrupt

    t0 = time.monotonic()
    web = app.state.web  # ai2048.ui.state.WebState
    web.listing()  # GET /api/agents: every agent module imported, the answer kept
    _session_paths(PlaySession(seed=WARM_SEED))
    default, default_config = web.default
    agent, _ = web.cache.get(default, default_config)  # kept: the first request uses it
    _decide(agent, default, default_config)
    for name in web.agent_names:
        for config in WARM_UP.get(name, ({},)):
            step()
            _, checked = web.check(name, config)
            try:
                built = build(name, checked, web.models)
            except ImportError:  # an optional dependency missing (torch): its requests say so
                break
            _decide(built, name, checked)
    for model_name, model in sorted(web.models.items()):
        name = MODEL_PREFIX + model_name
        held = []  # this model's agents share its network (loaded once) until the next model's turn
        for k, config in enumerate(WARM_UP.get(model.agent, ({},))):
            step()
            _, checked = web.check(name, config)
            try:
                built = build(name, checked, web.models)
            except (ValueError, TypeError, OSError, ImportError) as e:
                if k == 0:  # the model itself is broken; a later entry may only not apply (downgrade)
                    say(f"model {name} cannot be loaded, requests for it will say so: {e}")
                    break
                continue
            _decide(built, name, checked)
            held.append(built)
        del held  # one model's network in memory at a time
    step()
    return time.monotonic() - t0


__all__ = ["WARM_SEED", "warm_up"]
