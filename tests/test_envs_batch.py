"""One batch core: the single env, the vector env, the trainers' batches and ``play_games`` play the
same games for the same seeds and actions, serial and parallel alike, and those games are the
ones the slow pure-Python rules (``engine/reference.py``) with a pure-Python SplitMix64 play."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from hypothesis import given, settings
from hypothesis import strategies as st

import ai2048
from _supertile_positions import exact_cells as exact_positions
from ai2048.board_io import exact_encode, exact_from_tiles
from ai2048.engine import reference
from ai2048.engine.rng import seed_state
from ai2048.envs import ENV_ID
from ai2048.envs.batch import GameBatch, seed_states
from ai2048.envs.options import EnvOptions
from ai2048.envs.vector import Game2048VectorEnv
from ai2048.game import Game
from ai2048.rules import MAX_EXPONENT, MAX_TILE_EXPONENT, P_TWO, START_TILES, Action
from ai2048.train.games import BoardBatch

M64 = (1 << 64) - 1


class RefGame:
    """One game on the reference rules, its spawns drawn from a pure-Python SplitMix64 stream
    exactly as ``engine/rng.py`` and ``engine/spawn.py`` specify (k-th empty cell, then 2 or 4)."""

    def __init__(self, state: int, options: EnvOptions, cells: list[int] | None = None) -> None:
        self.state = int(state)
        self.o = options
        self.score = 0
        self.moves = 0
        if cells is None:
            cells = [0] * 16
            for _ in range(START_TILES):
                self._spawn(cells)
        self.cells = cells

    def _u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def _spawn(self, cells: list[int]) -> None:
        empty = [i for i, e in enumerate(cells) if e == 0]
        if not empty:
            return
        k = ((self._u64() >> 32) * len(empty)) >> 32
        two = (self._u64() >> 11) * (1.0 / 9007199254740992.0) < self.o.p_two
        cells[empty[k]] = 1 if two else 2

    def step(self, action: int) -> tuple[float, bool, bool]:
        """(reward, terminated, illegal) under the env options, written out the slow way."""
        o = self.o
        new, gain = reference.move(self.cells, action)
        if new == self.cells:
            if o.illegal_action == "spawn" and 0 in self.cells:  # seed 004: the tile spawns anyway
                self._spawn(self.cells)
                self.moves += 1
            over = not any(reference.legal_mask(self.cells))
            full = o.end_on_full_board and (0 not in self.cells or max(self.cells) >= MAX_EXPONENT)
            return -o.illegal_penalty, over or o.illegal_action == "terminate" or full, True
        logs = _log2_gain(self.cells, action)
        self._spawn(new)
        self.cells = new
        self.score += gain
        self.moves += 1
        reward = float(gain) if o.reward_mode == "score" else float(logs) if o.reward_mode == "log2" else 1.0
        terminated = not any(reference.legal_mask(new))
        if o.goal_tile is not None and max(new) >= o.goal_exponent:
            reward += o.goal_reward
            terminated = True
        if o.end_on_full_board and (0 not in new or max(new) >= MAX_EXPONENT):
            terminated = True
        return reward, terminated, False

    @property
    def board(self) -> int:
        return int(ai2048.encode(self.cells))


def _log2_gain(cells: list[int], action: int, top: int = MAX_EXPONENT) -> int:
    """Sum of the exponents of the tiles a move creates: slide each line towards the wall, merge
    (tiles of exponent ``top`` and more do not)."""
    lines = [[cells[4 * r + c] for r in range(4)] for c in range(4)] if action in (0, 2) else [
        cells[4 * r : 4 * r + 4] for r in range(4)]
    total = 0
    for line in lines:
        tiles = [e for e in (line[::-1] if action in (1, 2) else line) if e]
        i = 0
        while i < len(tiles):
            if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < top:
                total += tiles[i] + 1
                i += 2
            else:
                i += 1
    return total


def _env_state(seed: int) -> int:
    """The RNG state a single env seeded with ``seed`` starts its game from (Gymnasium's seeding)."""
    return int(seeding.np_random(seed)[0].integers(0, 2**64, dtype=np.uint64))


def _legal_pick(cells: list[int], k: int) -> int:
    legal = [a for a, ok in enumerate(reference.legal_mask(cells)) if ok]
    return legal[k % len(legal)] if legal else 0


options_st = st.fixed_dictionaries({
    "reward_mode": st.sampled_from(["score", "log2", "moves"]),
    "illegal_action": st.sampled_from(["noop", "terminate", "spawn"]),
    "illegal_penalty": st.sampled_from([0.0, 1.5]),
    "goal_tile": st.sampled_from([None, 32, 128]),
    "goal_reward": st.sampled_from([0.0, 10.0]),
    "end_on_full_board": st.booleans(),
    "p_two": st.sampled_from([P_TWO, 0.5]),
})


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 4), options=options_st,
       picks=st.lists(st.integers(0, 7), min_size=1, max_size=120), parallel=st.booleans())
def test_game_batch__vector_and_single_env_equal_the_reference(seed, n, options, picks, parallel):
    """Any actions (illegal ones too, picks >= 4 choose among the legal ones), every option."""
    o = EnvOptions(**options)
    venv = gym.make_vec(
        ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", parallel=parallel, **options
    )
    _, vinfo = venv.reset(seed=seed)
    envs = [gym.make(ENV_ID, **options) for _ in range(n)]
    sinfo = [e.reset(seed=seed + i)[1] for i, e in enumerate(envs)]
    refs = [RefGame(_env_state(seed + i), o) for i in range(n)]
    assert vinfo["board"].tolist() == [r.board for r in refs] == [s["board"] for s in sinfo]
    restart = [False] * n
    for t, p in enumerate(picks):
        acts = [p if p < 4 else _legal_pick(r.cells, p + i + t) for i, r in enumerate(refs)]
        _, vr, vterm, vtrunc, vinfo = venv.step(np.array(acts))
        for i in range(n):
            if restart[i]:  # next-step autoreset: the vector env starts a new game, the single env resets
                _, sinfo[i] = envs[i].reset()
                refs[i] = RefGame(refs[i].state, o)
                assert vr[i] == 0.0 and not vterm[i]
                restart[i] = False
            else:
                want_r, want_term, want_illegal = refs[i].step(acts[i])
                _, sr, sterm, strunc, sinfo[i] = envs[i].step(acts[i])
                assert (vr[i], bool(vterm[i]), bool(vinfo["illegal"][i])) == (want_r, want_term, want_illegal)
                assert (sr, sterm, sinfo[i]["illegal"]) == (want_r, want_term, want_illegal)
                assert not vtrunc[i] and not strunc
                restart[i] = want_term
            assert int(vinfo["board"][i]) == refs[i].board == sinfo[i]["board"]
            assert int(vinfo["score"][i]) == refs[i].score == sinfo[i]["score"]
            assert vinfo["action_mask"][i].tolist() == reference.legal_mask(refs[i].cells)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 5),
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=150),
    goal=st.sampled_from([None, 64]),
    goal_terminal=st.booleans(),
    cutoff=st.sampled_from([None, 7, 40]),
)
def test_game_batch__trainers_batch_equals_the_reference(seed, n, picks, goal, goal_terminal, cutoff):
    """BoardBatch (serial) and GameBatch (parallel) against the reference with legal moves, goal
    tiles ending games as terminal or as a cut, and the move cutoff; restarts draw from the same
    stream, as the trainers restart finished games."""
    states = seed_states(seed, n)
    games = BoardBatch(n, seed, goal_tile=goal, goal_terminal=goal_terminal, cutoff=cutoff)
    par = GameBatch(n, EnvOptions(illegal_action="raise", goal_tile=goal), goal_terminal=goal_terminal,
                    cutoff=cutoff, parallel=True)
    par.states[:] = states
    par.reset()
    o = EnvOptions(goal_tile=goal)
    refs = [RefGame(int(s), o) for s in states]
    assert games.boards.tolist() == par.boards.tolist() == [r.board for r in refs]
    for t, p in enumerate(picks):
        acts = np.array([_legal_pick(r.cells, p + i + t) for i, r in enumerate(refs)], dtype=np.int64)
        step = games.step(acts)
        pstep = par.step(acts)
        for i, r in enumerate(refs):
            before = list(r.cells)
            _, over, _ = r.step(int(acts[i]))
            won = goal is not None and max(r.cells) >= o.goal_exponent
            assert int(step.boards[i]) == int(par.boards[i]) == r.board
            assert step.rewards[i] == pstep.gains[i] == reference.move(before, int(acts[i]))[1]
            assert step.log_rewards[i] == _log2_gain(before, int(acts[i]))
            terminal = not any(reference.legal_mask(r.cells)) or (won and goal_terminal)
            done = terminal or won or (cutoff is not None and r.moves >= cutoff)
            assert (bool(step.terminal[i]), bool(step.done[i])) == (terminal, done)
            assert bool(pstep.terminated[i]) == terminal
            assert bool(pstep.terminated[i] | pstep.truncated[i]) == done
            assert over == terminal or won
        finished = games.restart(step.done)
        par.reset(step.done)
        for i, rec in zip(np.flatnonzero(step.done), finished, strict=True):
            ref = refs[i]
            assert rec == {"score": ref.score, "length": ref.moves, "max_tile": 1 << max(ref.cells)}
            refs[i] = RefGame(refs[i].state, o)
        assert games.boards.tolist() == par.boards.tolist() == [r.board for r in refs]


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 6), cutoff=st.sampled_from([0, 9]))
def test_play_games__games_replay_on_the_reference(seed, n, cutoff):
    """``policy.play_games``'s recorded layouts and moves replay exactly on the reference rules
    from the batch's seed, and its scores and lengths are the reference's."""
    torch = pytest.importorskip("torch")
    from ai2048.train.policy import play_games

    out = play_games(None, n, seed, cutoff, 0.0, np.random.default_rng(seed), torch.device("cpu"))
    refs = [RefGame(int(s), EnvOptions()) for s in seed_states(seed, n)]
    for layout, a, g in zip(out["layouts"], out["moves"], out["game"], strict=True):
        assert layout.tolist() == refs[g].cells
        assert reference.legal_mask(refs[g].cells)[a]
        refs[g].step(int(a))
    assert out["scores"].tolist() == [r.score for r in refs]
    assert out["lengths"].tolist() == [r.moves for r in refs]
    for r in refs:
        assert not any(reference.legal_mask(r.cells)) or r.moves == cutoff


def test_game_batch__illegal_raise_refuses_before_anything_changes():
    games = BoardBatch(3, seed=1)
    before = games.state_dict()
    acts = np.array([int(np.flatnonzero(m)[0]) for m in games.masks])
    bad = int(np.flatnonzero(~games.masks[1])[0]) if not games.masks[1].all() else None
    if bad is None:
        games.set_boards(np.array([ai2048.encode([1, 1, 1, 1] + [0] * 12)] * 3, dtype=np.uint64))
        before = games.state_dict()
        acts, bad = np.array([3, 3, 3]), 0
    acts[1] = bad
    with pytest.raises(ai2048.IllegalMoveError, match="game 1: .* does not change the board"):
        games.step(acts)
    after = games.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"cutoff": 0}, ValueError, "cutoff"),
    ({"cutoff": 2.5}, ValueError, "cutoff"),
    ({"parallel": "yes"}, TypeError, "parallel"),
])
def test_game_batch__bad_arguments_raise_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        GameBatch(4, **kwargs)


def test_game_batch__bad_actions_raise_naming_the_game():
    games = GameBatch(3, seed=0)
    games.reset()
    with pytest.raises(ValueError, match="shape"):
        games.step(np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="integers"):
        games.step(np.zeros(3))
    with pytest.raises(ValueError, match="game 2 got 4"):
        games.step(np.array([0, 1, 4]))


def test_game_batch__handed_out_arrays_are_never_written_again():
    games = GameBatch(8, seed=3)
    games.reset()
    step = games.step(np.array([int(np.flatnonzero(m)[0]) for m in games.masks]))
    masks, obs = step.masks.copy(), step.obs.copy()
    games.reset(np.ones(8, dtype=np.bool_))
    games.step(np.array([int(np.flatnonzero(m)[0]) for m in games.masks]))
    assert np.array_equal(step.masks, masks) and np.array_equal(step.obs, obs)


def test_board_batch__loads_checkpoints_written_before_steps_were_kept():
    games = BoardBatch(4, seed=2)
    games.step(np.array([int(np.flatnonzero(m)[0]) for m in games.masks]))
    old = {k: v for k, v in games.state_dict().items() if k != "steps"}  # the old four keys
    again = BoardBatch(4, seed=99)
    again.load_state_dict(old)
    assert again.boards.tolist() == games.boards.tolist() and again.steps.tolist() == games.moves.tolist()
    assert np.array_equal(again.masks, games.masks) and again.score.tolist() == games.score.tolist()


class _BrokenActions:
    """Actions whose conversion to an array fails with neither TypeError nor ValueError."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("actions not ready")


def test_game_batch__a_failed_step_releases_held_slots():
    games, fresh = GameBatch(3, seed=0), GameBatch(3, seed=0)
    games.reset()
    fresh.reset()
    with pytest.raises(RuntimeError, match="actions not ready"):
        games.step(_BrokenActions(), hold=np.array([True, False, True]))
    assert np.array_equal(games.control, fresh.control)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in fresh.masks])
    got, want = games.step(acts), fresh.step(acts)
    assert np.array_equal(games.boards, fresh.boards) and np.array_equal(games.scores, fresh.scores)
    assert np.array_equal(got.rewards, want.rewards) and np.array_equal(got.obs, want.obs)
    assert (games.moves == 1).all()  # the once-held slots 0 and 2 played too


def _legal_picks(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game (0 where none is legal)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks], dtype=np.int64)


@pytest.mark.parametrize("parallel", [False, True])
def test_game_batch__autoreset_in_the_kernel_equals_autoreset_next(parallel):
    """``autoreset=True`` marks ended slots RESTART inside the step kernel: the same games, outputs
    and control as stepping without it and calling ``autoreset_next(terminated | truncated)``."""
    opts = EnvOptions(goal_tile=64)
    fused = GameBatch(24, opts, cutoff=9, seed=5, parallel=parallel, autoreset=True)
    plain = GameBatch(24, opts, cutoff=9, seed=5, parallel=parallel)
    fused.reset()
    plain.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(80):
        acts = _legal_picks(plain.masks, rng)
        hold = rng.random(24) < 0.2 if t % 3 == 0 else None
        got, want = fused.step(acts, hold), plain.step(acts, hold)
        plain.autoreset_next(want.terminated | want.truncated)
        ended += int((want.terminated | want.truncated).sum())
        for f in ("rewards", "illegal", "terminated", "truncated", "masks", "obs"):
            assert np.array_equal(getattr(got, f), getattr(want, f)), (t, f)
        for f in ("boards", "states", "scores", "moves", "steps", "control"):
            assert np.array_equal(getattr(fused, f), getattr(plain, f)), (t, f)
    assert ended > 24  # both endings (cutoff and game over or goal) happened, many times


def test_game_batch__step_arrays_are_reused_only_when_nobody_holds_them():
    """A loop that drops a step's arrays gets the step-before-last's memory back (two sets
    alternate); an array, a view of one, or the step itself that is still held is never written."""
    games = GameBatch(16, seed=1, parallel=False)
    games.reset()
    rng = np.random.default_rng(1)
    firsts = []
    for _ in range(6):
        out = games.step(_legal_picks(games.masks, rng))
        firsts.append(id(out.rewards))
    assert len(set(firsts)) == 2 and firsts[0] == firsts[2] == firsts[4]
    kept_step = games.step(_legal_picks(games.masks, rng))
    kept_array = games.step(_legal_picks(games.masks, rng)).rewards
    kept_view = games.step(_legal_picks(games.masks, rng)).obs[3:5]
    snapshots = ({f: getattr(kept_step, f).copy() for f in ("rewards", "masks", "obs", "terminated")},
                 kept_array.copy(), kept_view.copy())
    later = [id(games.step(_legal_picks(games.masks, rng)).rewards) for _ in range(12)]
    assert all(np.array_equal(getattr(kept_step, f), v) for f, v in snapshots[0].items())
    assert np.array_equal(kept_array, snapshots[1]) and np.array_equal(kept_view, snapshots[2])
    assert id(kept_step.rewards) not in later and id(kept_array) not in later


def test_vector__returned_arrays_stay_as_returned_over_later_steps():
    """Gymnasium hands out arrays the caller may keep: obs, rewards, terminations, truncations and
    every ``infos`` array of one step are unchanged by the steps after it (with autoresets)."""
    venv = gym.make_vec(ENV_ID, num_envs=32, vectorization_mode="vector_entry_point", max_episode_steps=4)
    _, infos = venv.reset(seed=7)
    rng = np.random.default_rng(7)
    kept = []
    for _ in range(12):
        result = venv.step(_legal_picks(infos["action_mask"], rng))
        infos = result[4]
        kept.append((result, [np.copy(x) for x in result[:4]], {k: np.copy(v) for k, v in infos.items()}))
    for result, arrays, info_copy in kept:
        assert all(np.array_equal(a, b) for a, b in zip(result[:4], arrays, strict=True))
        assert all(np.array_equal(result[4][k], v) for k, v in info_copy.items())
    assert any(r[0][3].any() for r in kept)  # cut after 4 steps: autoresets happened in between


@pytest.mark.parametrize("parallel", [False, True])
def test_game_batch__copies_are_the_state_after_the_step(parallel):
    """``copies=True``: the kernel's ``scores``, ``moves``, ``boards``, ``max_tile`` equal the batch's
    state after the step (tile values of ``max_exp``) and stay put; without it they are empty."""
    games = GameBatch(20, EnvOptions(goal_tile=32), cutoff=6, seed=4, parallel=parallel, autoreset=True,
                      copies=True)
    bare = GameBatch(20, seed=4, parallel=parallel)
    games.reset()
    bare.reset()
    rng = np.random.default_rng(4)
    kept = []
    for _ in range(30):
        out = games.step(_legal_picks(games.masks, rng))
        assert np.array_equal(out.scores, games.scores) and np.array_equal(out.moves, games.moves)
        assert np.array_equal(out.boards, games.boards)
        assert out.max_tile.tolist() == [1 << int(e) if e else 0 for e in games.max_exp]
        kept.append((out, out.scores.copy(), out.boards.copy()))
    assert all(np.array_equal(o.scores, s) and np.array_equal(o.boards, b) for o, s, b in kept)
    plain = bare.step(_legal_picks(bare.masks, rng))
    assert plain.scores.shape == plain.moves.shape == plain.boards.shape == plain.max_tile.shape == (0,)


# --- rules version 1: tiles past 32768 (65536, 131072) -------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.lists(exact_positions(), min_size=3, max_size=3), st.integers(0, 2**32),
       st.sampled_from(["score", "log2"]), st.lists(st.integers(0, 3), min_size=8, max_size=8))
def test_vector_env__plays_the_games_game_plays_past_32768(cells, seed, reward_mode, picks):
    """The vector env with each slot's stream set to ``Game(seed=...)``'s plays the same games on
    positions holding two or more tiles of 32768 or more: same boards, supers, rewards, scores,
    legal masks and exact observations, step by step (a legal move picked from each game's own)."""
    pos = [exact_encode(c) for c in cells]
    venv = Game2048VectorEnv(3, reward_mode=reward_mode)
    obs, info = venv.reset(seed=0, options={"boards": [p[0] for p in pos], "supers": [p[1] for p in pos]})
    games = [Game(seed=seed + i, board=b, supers=s) for i, (b, s) in enumerate(pos)]
    venv.games.states[:] = [seed_state(seed + i)[0] for i in range(3)]
    assert obs.reshape(3, 16).tolist() == [g.cells.tolist() for g in games]
    for pick in picks:
        acts = np.array([g.legal_actions()[pick % len(g.legal_actions())] if not g.is_over else 0
                         for g in games])
        obs, rewards, term, _, info = venv.step(acts)
        for i, g in enumerate(games):
            if g.is_over:  # the step after the end restarts the slot (next-step autoreset): stop comparing
                continue
            before = g.cells.tolist()
            r = g.step(int(acts[i]))
            want = r if reward_mode == "score" else _log2_gain(before, int(acts[i]), MAX_TILE_EXPONENT)
            assert (int(info["board"][i]), int(info["supers"][i]), int(info["score"][i])) == \
                (g.board, g.supers, g.score), (before, int(acts[i]))
            assert rewards[i] == want
            assert obs[i].reshape(16).tolist() == g.cells.tolist()
            assert info["action_mask"][i].tolist() == [Action(a) in g.legal_actions() for a in range(4)]
            assert bool(term[i]) == g.is_over
            assert info["max_tile"][i] == g.max_tile


def test_vector_env__two_32768s_merge_and_game_batch_state_round_trips():
    b, s = exact_from_tiles([32768, 32768, 0, 0] + [0] * 12)
    b2, s2 = exact_from_tiles([65536, 65536, 32768, 32768] + [0] * 12)
    venv = Game2048VectorEnv(2, reward_mode="log2")
    venv.reset(seed=0, options={"boards": [b, b2], "supers": [s, s2]})
    obs, rewards, _, _, info = venv.step(np.array([3, 3]))
    assert rewards.tolist() == [16.0, 33.0]  # 65536: 16; a 131072 and a 65536 in one move: 17 + 16
    assert obs[0, 0, 0] == 16 and obs[1, 0, :2].tolist() == [17, 16]
    assert info["max_tile"].tolist() == [65536, 131072] and info["supers"][0] == 1
    state = venv.games.state_dict()
    other = GameBatch(2, EnvOptions())
    other.load_state_dict(state)
    assert (other.supers == venv.games.supers).all() and (other.obs == venv.games.obs).all()
    del state["supers"]  # a checkpoint from before rules version 1
    other.load_state_dict(state)
    assert (other.supers == 0).all()


def test_vector_env__rules_0_caps_and_bad_exact_positions_name_the_game():
    b, s = exact_from_tiles([32768, 32768, 0, 0] + [0] * 12)
    capped = Game2048VectorEnv(1, rules=0)
    capped.reset(seed=0, options={"boards": [b]})
    assert not capped.games.masks[0, 3]
    _, r, *_ = capped.step(np.array([1]))
    assert r[0] == 0 and capped.games.obs[0, 0].tolist() == [0, 0, 15, 15]
    venv = Game2048VectorEnv(2)
    venv.reset(seed=0)
    before = venv.boards
    bad = [
        ({"boards": [b, [18] + [0] * 15]}, r"options\['boards'\]\[1\]: exponent 18 at cell 0"),
        ({"boards": [b, b], "supers": [0, 1 << 4]},
         r"options\['boards'\]\[1\]: supers records a 65536 at cell 2"),
        ({"boards": [b, [17, 17] + [0] * 14]}, "second 131072 at cell 1"),
        ({"boards": [b, b], "supers": [0]}, "one per board"),
        ({"supers": [0, 0]}, "needs options\\['boards'\\]"),
    ]
    for options, match in bad:
        with pytest.raises(ValueError, match=match):
            venv.reset(options=options)
        assert (venv.boards == before).all()
    with pytest.raises(ValueError, match="rules version 0"):
        capped.reset(options={"boards": [b], "supers": [1]})
    with pytest.raises(ValueError, match="game 0: supers records"):
        GameBatch(1).set_boards(np.array([b], np.uint64), supers=np.array([1 << 4]))
