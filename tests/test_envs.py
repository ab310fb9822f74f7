"""The Gymnasium contract, options, determinism and vector = single for ai2048/Game2048-v0."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import ai2048
from ai2048.board_io import exact_encode, exact_from_tiles, exact_tiles
from ai2048.envs import ENV_ID, ENV_IDS
from ai2048.envs.encoders import onehot

ROW_2222 = ai2048.encode([1, 1, 1, 1] + [0] * 12)


def make(**kw):
    return gym.make(ENV_ID, **kw)


@pytest.mark.parametrize("obs_mode", ["exponents", "onehot", "tiles"])
def test_env__passes_check_env(obs_mode):
    check_env(make(obs_mode=obs_mode).unwrapped, skip_render_check=False)


def test_env__reset_gives_two_tiles_and_full_info():
    obs, info = make().reset(seed=3)
    assert obs.shape == (4, 4) and obs.dtype == np.uint8
    assert (obs > 0).sum() == 2 and set(obs[obs > 0].tolist()) <= {1, 2}
    assert set(info) >= {"action_mask", "score", "max_tile", "moves", "board", "illegal"}
    assert ai2048.encode(obs) == info["board"]
    assert info["score"] == 0 and info["moves"] == 0


def test_env__step_matches_engine_move_and_spawn():
    env = make()
    obs, info = env.reset(seed=1, options={"board": ROW_2222})
    obs, r, term, trunc, info = env.step(ai2048.Action.LEFT)
    moved, reward = ai2048.move(ROW_2222, ai2048.Action.LEFT)
    assert r == reward == 8
    after = ai2048.decode(info["board"]).reshape(-1)
    before = ai2048.decode(moved).reshape(-1)
    diff = np.flatnonzero(after != before)
    assert len(diff) == 1 and before[diff[0]] == 0 and after[diff[0]] in (1, 2)
    assert info["score"] == 8 and info["moves"] == 1 and not term and not trunc


def test_env__same_seed_same_episode():
    def run(seed):
        env = make()
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        boards = [info["board"]]
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            obs, r, done, _, info = env.step(int(rng.choice(legal)))
            boards.append(info["board"])
        return boards

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_env__illegal_noop_gives_zero_reward_no_spawn():
    env = make(illegal_penalty=1.5)
    env.reset(seed=0, options={"board": ROW_2222})
    obs, r, term, trunc, info = env.step(ai2048.Action.UP)
    assert info["illegal"] and r == -1.5 and not term
    assert info["board"] == ROW_2222 and info["moves"] == 0


def test_env__illegal_spawn_costs_the_penalty_and_spawns_as_seed_004():
    """Seed 004's unmasked moves: -1 and a tile still spawns (its game then ends at a full board)."""
    env = make(illegal_action="spawn", illegal_penalty=1.0, end_on_full_board=True)
    env.reset(seed=0, options={"board": ROW_2222})
    obs, r, term, trunc, info = env.step(ai2048.Action.UP)
    assert info["illegal"] and r == -1.0 and not term and info["moves"] == 1 and info["score"] == 0
    cells = ai2048.decode(info["board"]).reshape(-1)
    assert cells[:4].tolist() == [1, 1, 1, 1] and np.count_nonzero(cells[4:]) == 1
    assert (obs > 0).sum() == 5


def test_env__illegal_terminate_and_raise():
    env = make(illegal_action="terminate")
    env.reset(seed=0, options={"board": ROW_2222})
    _, _, term, _, info = env.step(0)
    assert term and info["illegal"]
    env = make(illegal_action="raise")
    env.reset(seed=0, options={"board": ROW_2222})
    with pytest.raises(ai2048.IllegalMoveError, match="UP does not change the board"):
        env.step(0)


def test_env__reward_modes():
    board = ai2048.encode([1, 1, 2, 2] + [0] * 12)
    for mode, want in (("score", 4 + 8), ("log2", 2 + 3), ("moves", 1)):
        env = make(reward_mode=mode)
        env.reset(seed=0, options={"board": board})
        assert env.step(3)[1] == want


def test_env__goal_tile_ends_episode_with_bonus():
    env = make(goal_tile=2048, goal_reward=2048)
    env.reset(seed=0, options={"board": ai2048.encode([10, 10] + [0] * 14)})
    _, r, term, _, info = env.step(3)
    assert term and r == 2048 + 2048 and info["max_tile"] == 2048


def test_env__end_on_full_board_quirk():
    full = ai2048.encode([1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, 4, 5, 6, 0])
    env = make(end_on_full_board=True)
    env.reset(seed=0, options={"board": full})
    _, _, term, _, info = env.step(1)
    assert term == (ai2048.decode(info["board"]) > 0).all()


def test_env__terminates_when_no_move_is_legal():
    nearly = ai2048.encode([1, 2, 1, 2, 3, 4, 3, 4, 2, 1, 2, 1, 2, 1, 2, 0])
    env = make(p_two=1.0)
    env.reset(seed=0, options={"board": nearly})
    _, _, term, _, info = env.step(1)
    assert term and not info["action_mask"].any() and ai2048.is_over(info["board"])


def test_env__onehot_12_planes_drops_big_tiles_like_seed000():
    e = np.array([[0, 1, 11, 12]] * 4, dtype=np.uint8)
    planes = onehot(e, 12)
    assert planes.shape == (12, 4, 4)
    assert planes[0, 0, 0] == 1 and planes[1, 0, 1] == 1 and planes[11, 0, 2] == 1
    assert planes[:, 0, 3].sum() == 0
    assert onehot(e, 16)[12, 0, 3] == 1


def test_env__tiles_obs_mode_gives_values():
    env = make(obs_mode="tiles")
    obs, info = env.reset(seed=0, options={"board": ROW_2222})
    assert obs.tolist()[0] == [2, 2, 2, 2]


def test_env__ansi_render_is_readable_text():
    env = make(render_mode="ansi")
    env.reset(seed=0, options={"board": ROW_2222})
    text = env.render()
    assert "score 0" in text and text.splitlines()[1].split() == ["2", "2", "2", "2"]


def test_env__rgb_render_is_an_image():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8


def test_env__reset_board_accepts_grids():
    env = make()
    _, info = env.reset(options={"board": [[1, 1, 1, 1], [0] * 4, [0] * 4, [0] * 4]})
    assert info["board"] == ROW_2222


def test_env__capped_32768_is_reported_under_rules_0():
    board = ai2048.encode([15, 15, 1, 0] + [0] * 12)
    for env in (make(rules=0), gym.make(ENV_IDS[0])):
        _, info = env.reset(options={"board": board})
        assert info.get("capped") is True
        _, r, _, _, info = env.step(3)
        assert r == 0 and ai2048.decode(info["board"])[0, :2].tolist() == [15, 15]
        assert info.get("capped") is True and info["supers"] == 0


def test_env__max_episode_steps_truncates():
    env = make(max_episode_steps=3)
    env.reset(seed=0)
    truncs = []
    for _ in range(3):
        legal = np.flatnonzero(env.unwrapped._info(False)["action_mask"])
        truncs.append(env.step(int(legal[0]))[3])
    assert truncs == [False, False, True]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"obs_mode": "pixels"}, "obs_mode"),
        ({"planes": 40}, "planes"),
        ({"reward_mode": "win"}, "reward_mode"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"goal_tile": 1000}, "goal_tile"),
        ({"p_two": 1.5}, "p_two"),
        ({"render_mode": "video"}, "render_mode"),
    ],
)
def test_env__bad_options_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(**kwargs)


@pytest.mark.parametrize(
    "action, exc", [(4, ValueError), (-1, ValueError), (1.0, TypeError), ("up", TypeError), (True, TypeError)]
)
def test_env__bad_actions_raise(action, exc):
    env = make()
    env.reset(seed=0)
    with pytest.raises(exc, match="action"):
        env.step(action)


def test_env__bad_reset_options_raise():
    env = make()
    with pytest.raises(ValueError, match="exponent"):
        env.reset(options={"board": [18] * 16})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"bord": 0})


def _single_rollout(seed: int, actions: np.ndarray, **kw):
    env = make(**kw)
    obs, info = env.reset(seed=seed)
    out = [(obs.copy(), 0.0, False, info["board"])]
    needs_reset = False
    for a in actions:
        if needs_reset:
            obs, info = env.reset()
            out.append((obs.copy(), 0.0, False, info["board"]))
            needs_reset = False
            continue
        obs, r, term, trunc, info = env.step(int(a))
        out.append((obs.copy(), r, term, info["board"]))
        needs_reset = term or trunc
    return out


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**31), n=st.integers(1, 5), reward_mode=st.sampled_from(["score", "log2", "moves"])
)
def test_vector__equals_single_envs_step_for_step(seed, n, reward_mode):
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 4, size=(300, n))
    venv = gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", reward_mode=reward_mode)
    obs, info = venv.reset(seed=seed)
    got = [[(obs[i].copy(), 0.0, False, int(info["board"][i]))] for i in range(n)]
    for t in range(300):
        obs, r, term, trunc, info = venv.step(actions[t])
        for i in range(n):
            got[i].append((obs[i].copy(), float(r[i]), bool(term[i]), int(info["board"][i])))
    for i in range(n):
        want = _single_rollout(seed + i, actions[:, i], reward_mode=reward_mode)
        assert len(want) == len(got[i])
        for (wo, wr, wt, wb), (go, gr, gt, gb) in zip(want, got[i], strict=True):
            assert wb == gb and wr == gr and wt == gt
            np.testing.assert_array_equal(wo, go)


def test_vector__is_native_batched_env():
    venv = gym.make_vec(ENV_ID, num_envs=8, vectorization_mode="vector_entry_point", obs_mode="onehot")
    obs, info = venv.reset(seed=0)
    assert type(venv.unwrapped).__name__ == "Game2048VectorEnv"
    assert obs.shape == (8, 16, 4, 4) and info["action_mask"].shape == (8, 4)
    assert venv.observation_space.shape == (8, 16, 4, 4)


def test_vector__reset_with_boards_and_bad_actions():
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    obs, info = venv.reset(seed=0, options={"boards": [ROW_2222, ROW_2222]})
    assert info["board"].tolist() == [ROW_2222, ROW_2222]
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="0..3"):
        venv.step(np.array([0, 7]))
    with pytest.raises(TypeError, match="integers"):
        venv.step(np.array([0.5, 1.0]))
    _, r, term, _, info = venv.step(np.array([3, 0]))
    assert r.tolist() == [8.0, 0.0] and info["illegal"].tolist() == [False, True]


def test_vector__truncation_and_autoreset():
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=2)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    truncs = []
    for _ in range(3):
        mask = venv.unwrapped._masks
        acts = np.array([int(np.flatnonzero(m)[0]) for m in mask])
        _, _, _, trunc, info = venv.step(acts)
        truncs.append(trunc.tolist())
    assert truncs[1] == [True, True] and truncs[2] == [False, False]
    assert info["moves"].tolist() == [0, 0]
    del rng


# --- rules version 1: tiles past 32768 (65536, 131072) -------------------------------------------------

_PAIR_CELLS = {0: (4, 8), 2: (4, 8), 1: (5, 6), 3: (5, 6)}  # a vertical pair for UP/DOWN, a row pair else
_MERGED_CELL = {0: 0 * 4 + 0, 2: 3 * 4 + 0, 1: 1 * 4 + 3, 3: 1 * 4 + 0}  # where the merged tile lands


def _pair_position(exponent: int, action: int) -> tuple[int, int]:
    """Two tiles of 2**exponent side by side (column 0 for UP/DOWN, row 1 for LEFT/RIGHT)."""
    cells = [0] * 16
    for c in _PAIR_CELLS[action]:
        cells[c] = exponent
    return exact_encode(cells)


@pytest.mark.parametrize("action", [0, 1, 2, 3])
@pytest.mark.parametrize("exponent", [15, 16])
def test_env__two_equal_tiles_of_32768_or_more_merge_in_every_direction(action, exponent):
    """32768 + 32768 -> 65536 (reward 65536), 65536 + 65536 -> 131072 (reward 131072), whichever way."""
    board, supers = _pair_position(exponent, action)
    env = make()
    obs, info = env.reset(seed=3, options={"board": board, "supers": supers})
    assert obs.max() == exponent and info["action_mask"][action]
    obs, r, term, _, info = env.step(action)
    merged = exponent + 1
    assert r == 2**merged and info["score"] == 2**merged and info["max_tile"] == 2**merged
    assert obs.reshape(16)[_MERGED_CELL[action]] == merged
    assert sorted(obs.reshape(16).tolist())[-2:] != [merged, merged]  # one merged tile, not two
    assert exact_tiles(info["board"], info["supers"]).reshape(16)[_MERGED_CELL[action]] == 2**merged
    assert "capped" not in info and not term
    spawned = [v for i, v in enumerate(obs.reshape(16).tolist()) if i != _MERGED_CELL[action] and v]
    assert len(spawned) == 1 and spawned[0] in (1, 2)  # the spawn lands beside the super tile


def test_env__two_pairs_of_32768_merge_in_one_move_with_exact_score_and_log2():
    """[32768 x4] LEFT -> [65536, 65536]: score 131072, log2 16 + 16; [65536 65536 32768 32768] ->
    [131072, 65536]: score 196608, log2 17 + 16."""
    for reward_mode, want in (("score", (131072, 196608)), ("log2", (32, 33))):
        env = make(reward_mode=reward_mode)
        b, s = exact_from_tiles([32768] * 4 + [0] * 12)
        env.reset(seed=0, options={"board": b, "supers": s})
        obs, r, *_ = env.step(3)
        assert r == want[0] and obs[0, :2].tolist() == [16, 16]
        b, s = exact_from_tiles([65536, 65536, 32768, 32768] + [0] * 12)
        env.reset(seed=0, options={"board": b, "supers": s})
        obs, r, *_ = env.step(3)
        assert r == want[1] and obs[0, :2].tolist() == [17, 16]


def test_env__observations_show_exact_tiles_in_every_mode():
    tiles = [131072, 65536, 32768, 2] + [0] * 12
    b, s = exact_from_tiles(tiles)
    exps = [17, 16, 15, 1] + [0] * 12
    obs, _ = make().reset(options={"board": b, "supers": s})
    assert obs.reshape(16).tolist() == exps and make().observation_space.contains(obs)
    obs, _ = make(obs_mode="tiles").reset(options={"board": b, "supers": s})
    assert obs.reshape(16).tolist() == tiles
    env = make(obs_mode="onehot", planes=18)
    obs, _ = env.reset(options={"board": b, "supers": s})
    assert obs.shape == (18, 4, 4) and env.observation_space.contains(obs)
    assert (obs.sum(0) == 1).all()  # 18 planes: every cell, every tile, exactly one plane
    assert [int(np.argmax(obs[:, i // 4, i % 4])) for i in range(16)] == exps
    obs16, _ = make(obs_mode="onehot").reset(options={"board": b, "supers": s})
    assert obs16.shape == (16, 4, 4)  # the default keeps models' input shape: 65536 up have no plane
    assert obs16[:, 0, 0].sum() == 0 and obs16[:, 0, 1].sum() == 0 and obs16[15, 0, 2] == 1


def test_env__grid_of_exact_exponents_and_ansi_render():
    env = make(render_mode="ansi")
    _, info = env.reset(options={"board": [17, 16] + [0] * 14})
    assert exact_tiles(info["board"], info["supers"])[0, :2].tolist() == [131072, 65536]
    assert info["max_tile"] == 131072
    assert "131072  65536" in env.render()


def test_env__game_over_with_super_tiles():
    """A full board whose only equal neighbours are two 65536s can still move; once merged and with no
    pair left, the episode ends."""
    stuck = [131072, 4, 8, 16, 2, 8, 16, 32, 4, 16, 32, 64, 2, 32, 64, 128]
    b, s = exact_from_tiles(stuck)
    _, info = make().reset(options={"board": b, "supers": s})
    assert not info["action_mask"].any()
    live = [65536, 65536, 8, 16, 2, 8, 16, 32, 4, 16, 32, 64, 2, 32, 64, 128]
    b, s = exact_from_tiles(live)
    env = make()
    _, info = env.reset(seed=1, options={"board": b, "supers": s})
    assert info["action_mask"].tolist() == [False, True, False, True]
    obs, r, *_ = env.step(3)
    assert r == 131072 and obs[0, 0] == 17


def test_env__goal_tile_can_be_65536_under_rules_1_only():
    b, s = exact_from_tiles([32768, 32768] + [0] * 14)
    env = make(goal_tile=65536, goal_reward=1.0)
    env.reset(options={"board": b, "supers": s})
    _, r, term, _, _ = env.step(3)
    assert term and r == 65537
    with pytest.raises(ValueError, match="goal_tile"):
        make(goal_tile=65536, rules=0)
    with pytest.raises(ValueError, match="goal_tile"):
        make(goal_tile=2**18)


def test_env__ids_of_both_rules_versions_are_registered():
    assert ENV_ID == "ai2048/Game2048-v1" and ENV_IDS == {0: "ai2048/Game2048-v0", 1: ENV_ID}
    assert gym.make(ENV_IDS[0]).unwrapped.options.rules == 0
    assert gym.make(ENV_ID).unwrapped.options.rules == 1
    assert gym.make(ENV_IDS[0]).observation_space.high.max() == 15
    assert make().observation_space.high.max() == 17
    venv = gym.make_vec(ENV_IDS[0], num_envs=2, vectorization_mode="vector_entry_point")
    assert venv.unwrapped.options.rules == 0


@pytest.mark.parametrize(
    "options, match",
    [
        ({"board": [18] + [0] * 15}, r"exponent 18 at cell 0 \(row 0, column 0\)"),
        ({"board": [17, 17] + [0] * 14}, r"second 131072 at cell 1 \(row 0, column 1\)"),
        ({"board": ai2048.encode([15, 3] + [0] * 14), "supers": 1 << 2}, r"cell 1 \(row 0, column 1\)"),
        ({"board": ai2048.encode([15] + [0] * 15), "supers": 3}, "exponent 18 at cell 0"),
        ({"board": ai2048.encode([15] + [0] * 15), "supers": -1}, "supers"),
        ({"board": [16] + [0] * 15, "supers": 1}, "no supers with a grid"),
        ({"supers": 1}, "needs options\\['board'\\]"),
    ],
)
def test_env__bad_exact_positions_are_refused_before_any_play(options, match):
    env = make()
    _, before = env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.reset(options=options)
    assert env.unwrapped.board == before["board"] and env.unwrapped.supers == 0


def test_env__rules_0_refuses_tiles_past_32768_and_bad_rules():
    with pytest.raises(ValueError, match="rules version 0"):
        make(rules=0).reset(options={"board": [16] + [0] * 15})
    with pytest.raises(ValueError, match="rules=2 is not one of 0, 1"):
        make(rules=2)
    with pytest.raises(ValueError, match="planes=19"):
        make(obs_mode="onehot", planes=19)
