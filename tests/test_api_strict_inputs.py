"""Inputs that used to be accepted silently or crash later (issue 18): each is now refused where it enters."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import ai2048
from ai2048 import Game
from ai2048.envs import ENV_ID, Game2048VectorEnv
from ai2048.envs.options import MAX_NUM_ENVS


@pytest.mark.parametrize(("value", "error"), [(17.9, TypeError), (-5, ValueError), (2**64 + 17, ValueError),
                                              (True, TypeError), ("0x11", TypeError)])
def test_game_board__setter_refuses_what_is_not_a_board(value, error) -> None:
    g = Game(seed=3)
    before = g.board
    with pytest.raises(error):
        g.board = value
    assert g.board == before


def test_game_board__setter_takes_a_board_and_play_goes_on() -> None:
    g = Game(seed=3)
    g.board = np.uint64(ai2048.encode([1, 1] + [0] * 14))
    assert isinstance(g.board, int) and g.board == 0x11
    g.step(ai2048.Action.LEFT)
    assert ai2048.decode(g.board)[0, 0] == 2


@pytest.mark.parametrize("cells", [[True] + [0] * 15, [[0, 0, 0, 0]] * 3 + [[0, 0, 0, np.True_]],
                                   np.array([1] * 15 + [True], dtype=object)])
def test_encode__refuses_bools(cells) -> None:
    with pytest.raises(TypeError, match="bool"):
        ai2048.encode(cells)
    with pytest.raises(TypeError, match="bool"):
        ai2048.from_tiles(cells)


@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
def test_env__boolean_option_takes_only_bools(value) -> None:
    with pytest.raises(TypeError, match="end_on_full_board=.* must be True or False"):
        gym.make(ENV_ID, end_on_full_board=value)
    with pytest.raises(TypeError, match="end_on_full_board"):
        gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", end_on_full_board=value)
    assert gym.make(ENV_ID, end_on_full_board=np.bool_(True)).unwrapped.options.end_on_full_board is True


@pytest.mark.parametrize("n", [10**13, MAX_NUM_ENVS + 1, 0])
def test_make_vec__num_envs_bound_is_a_clear_error(n) -> None:
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point")


def test_make_vec__bool_max_episode_steps_refused() -> None:
    with pytest.raises(ValueError, match="max_episode_steps"):
        Game2048VectorEnv(num_envs=2, max_episode_steps=True)


@pytest.mark.parametrize("kwargs", [
    {"options": {"boards": [0x11, 2**64 + 5]}},
    {"options": {"boards": [0x11, [1] * 17]}},
    {"options": {"boards": [0x11]}},
    {"options": {"board": [0x11, 0x11]}},
    {"seed": [1, -1]},
    {"seed": True},
])
def test_vector_reset__a_reset_that_raises_changes_nothing(kwargs) -> None:
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=4)
    for _ in range(5):
        _, _, _, _, info = venv.step(info_masks_first_legal(venv))
    env = venv.unwrapped
    games = env.games  # the envs.batch.GameBatch the vector env steps
    boards, scores = env.boards.copy(), games.scores.copy()
    moves, states = games.moves.copy(), games.states.copy()
    with pytest.raises(Exception):  # noqa: B017 - ValueError, TypeError or gymnasium's seeding error
        venv.reset(**kwargs)
    assert (env.boards == boards).all() and (games.scores == scores).all() and (games.moves == moves).all()
    assert (games.states == states).all()
    _, _, _, _, after = venv.step(info_masks_first_legal(venv))  # the games go on where they were
    assert (after["moves"] == moves + 1).all()


def info_masks_first_legal(venv) -> np.ndarray:
    masks = venv.unwrapped._masks
    return masks.argmax(axis=1).astype(np.int64)


def test_single_reset__bad_board_changes_nothing() -> None:
    env = gym.make(ENV_ID).unwrapped
    env.reset(seed=1)
    board, rng = env.board, env._rng.copy()
    with pytest.raises(ValueError):
        env.reset(seed=9, options={"board": -1})
    assert env.board == board and (env._rng == rng).all()


@pytest.mark.parametrize("backend", ["torch", "engine"])
@pytest.mark.parametrize("actions", [[0.0, 2.7], [True, False], [1.0 + 0j, 0j]])
def test_torch_env__non_integer_actions_refused(backend, actions) -> None:
    torch = pytest.importorskip("torch")
    from ai2048.envs.torch_env import make_batch_env

    env = make_batch_env(backend, 2, "cpu", seed=0)
    before = np.array(env.boards())
    with pytest.raises(TypeError, match="integers 0..3"):
        env.step(torch.tensor(actions))
    with pytest.raises(TypeError, match="torch tensor"):
        env.step([0, 1])
    assert (np.array(env.boards()) == before).all()
    env.step(torch.tensor([0, 1], dtype=torch.int32))  # integer dtypes other than int64 still work


def test_torch_env__num_envs_bound() -> None:
    pytest.importorskip("torch")
    from ai2048.envs.torch_env import make_batch_env

    for backend in ("torch", "engine"):
        with pytest.raises(ValueError, match="num_envs"):
            make_batch_env(backend, 10**13, "cpu")
