"""The tensor env (seed 001's design) against the numba engine: the one deliberate second copy of the
rules."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from _supertile_positions import exact_cells as exact_positions  # noqa: E402
from ai2048.agents.seed_actions import SEED_ORDERS  # noqa: E402
from ai2048.board_io import exact_encode, exact_from_tiles, render_text  # noqa: E402
from ai2048.engine import batch_legal_masks, batch_move, spawn_outcomes  # noqa: E402
from ai2048.engine.rng import seed_state  # noqa: E402
from ai2048.engine.supertiles import exact_cells  # noqa: E402
from ai2048.envs.torch_env import (  # noqa: E402
    EngineBatch,
    TorchEnv2048,
    from_boards,
    legal_actions,
    make_batch_env,
    push_actions,
    quarter_turns,
    resolve_device,
    spawn,
    stochastic_progressions,
    to_boards,
    to_positions,
)
from ai2048.game import Game  # noqa: E402
from ai2048.rules import Action  # noqa: E402

VECTORS = Path(__file__).parent / "data" / "seed_vectors.json"
SHIFTS = np.arange(0, 64, 4, dtype=np.uint64)
NAMES = {"up": 0, "right": 1, "down": 2, "left": 3}


def pack(cells: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduce(cells.astype(np.uint64) << SHIFTS, axis=1)


def random_boards(n: int, seed: int) -> np.ndarray:
    """Boards that exercise every rule: sparse and full, small exponents (many merges) and 15s."""
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 16, size=(n, 16))
    small = rng.random((n, 16)) < 0.6
    cells = np.where(small, rng.integers(0, 4, size=(n, 16)), cells)
    cells[rng.random((n, 16)) < rng.random((n, 1))] = 0
    cells[: n // 10] = np.where(rng.random((n // 10, 16)) < 0.5, 15, cells[: n // 10])
    return pack(cells)


def test_push_actions__equals_engine_boards_and_rewards_on_random_boards():
    """Under rules version 0 the tensor rules are the bitboard's (15s never merge); version 1 is
    checked against ``Game`` below."""
    boards = random_boards(20000, seed=1)
    states = from_boards(boards)
    for a in range(4):
        want_boards, want_rewards = batch_move(boards, np.full(len(boards), a, dtype=np.int64))
        got, rewards = push_actions(states, torch.full((len(boards),), a), rules=0)
        np.testing.assert_array_equal(to_boards(got), want_boards)
        np.testing.assert_array_equal(rewards.numpy(), want_rewards)


def test_push_actions__mixed_actions_in_one_batch():
    boards = random_boards(4000, seed=2)
    actions = np.random.default_rng(3).integers(0, 4, len(boards))
    want, want_r = batch_move(boards, actions)
    got, got_r = push_actions(from_boards(boards), torch.from_numpy(actions), rules=0)
    np.testing.assert_array_equal(to_boards(got), want)
    np.testing.assert_array_equal(got_r.numpy(), want_r)


def test_legal_actions__equals_engine_masks_on_random_boards():
    boards = random_boards(20000, seed=4)
    got = legal_actions(from_boards(boards), rules=0).numpy()
    np.testing.assert_array_equal(got, batch_legal_masks(boards))


def test_push_actions__known_answer_vectors():
    data = json.loads(VECTORS.read_text())["vectors"]
    boards = pack(np.array([v["board"] for v in data]))
    states = from_boards(boards)
    for name, a in NAMES.items():
        got, rewards = push_actions(states, torch.full((len(data),), a))
        want = pack(np.array([v["moves"][name]["board"] for v in data]))
        np.testing.assert_array_equal(to_boards(got), want)
        np.testing.assert_array_equal(rewards.numpy(), [v["moves"][name]["reward"] for v in data])
        np.testing.assert_array_equal(
            legal_actions(states)[:, a].numpy(), [v["moves"][name]["legal"] for v in data]
        )


def test_push_actions__two_32768_tiles_do_not_merge_under_rules_0():
    board = pack(np.array([[15, 15, 1, 1] + [0] * 12]))
    got, reward = push_actions(from_boards(board), torch.tensor([int(Action.LEFT)]), rules=0)
    assert to_boards(got)[0] == pack(np.array([[15, 15, 2, 0] + [0] * 12]))[0]
    assert int(reward[0]) == 4
    assert not legal_actions(from_boards(pack(np.array([[15, 15] + [0] * 14]))), rules=0)[0, 3]
    full = pack(np.array([[15, 14] * 2 + [14, 15] * 2] * 2).reshape(1, 16))
    assert not legal_actions(from_boards(full), rules=0).any() and not legal_actions(from_boards(full)).any()


def test_conversion__round_trips_both_directions():
    boards = random_boards(5000, seed=5)
    assert (to_boards(from_boards(boards)) == boards).all()
    states = torch.randint(0, 16, (500, 1, 4, 4)).float()
    assert torch.equal(from_boards(to_boards(states)), states)


def test_conversion__bad_shapes_and_values_raise():
    with pytest.raises(ValueError, match="shape"):
        to_boards(torch.zeros(3, 16))
    with pytest.raises(ValueError, match=r"exponents 0..17 .* game 0 holds 18.0 at cell 0 \(row 0, col"):
        to_boards(torch.full((1, 1, 4, 4), 18.0))
    with pytest.raises(ValueError, match="game 1 holds nan at cell 5"):
        nan = torch.zeros(2, 1, 4, 4)
        nan[1, 0, 1, 1] = float("nan")
        to_positions(nan)
    with pytest.raises(ValueError, match="game 0: a second 131072 at cell 1"):
        to_positions(torch.tensor([17.0, 17.0] + [0.0] * 14).view(1, 1, 4, 4))
    with pytest.raises(TypeError, match="uint64"):
        from_boards(np.zeros(3, dtype=np.int32))


def test_quarter_turns__is_seed_001_action_order():
    got = quarter_turns(torch.arange(4)).tolist()
    assert got == [SEED_ORDERS["001"].index(Action(a)) for a in range(4)]
    assert got[int(Action.LEFT)] == 0 and got[int(Action.DOWN)] == 1


def test_stochastic_progressions__equal_engine_spawn_outcomes():
    boards = random_boards(300, seed=6)
    cand, probs = stochastic_progressions(from_boards(boards))
    for i, b in enumerate(boards):
        want_b, want_p = spawn_outcomes(b, 0.9)
        keep = probs[i] > 0
        got_b = to_boards(cand[i][keep])
        np.testing.assert_array_equal(got_b, want_b)
        np.testing.assert_allclose(probs[i][keep].numpy(), want_p, rtol=1e-6)


def test_spawn__frequencies_match_engine_probabilities():
    """Chi-square goodness of fit of 40,000 spawns on one board against the exact outcomes."""
    board = pack(np.array([[1, 0, 2, 0, 0, 3, 0, 0, 4, 4, 0, 1, 0, 0, 5, 0]]))
    want_b, want_p = spawn_outcomes(board[0], 0.9)
    n = 40000
    states = from_boards(np.repeat(board, n))
    gen = torch.Generator().manual_seed(123)
    got = to_boards(spawn(states, torch.ones(n, dtype=torch.bool), gen))
    counts = np.array([(got == b).sum() for b in want_b])
    assert counts.sum() == n
    expected = want_p * n
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 40.8, chi2  # 99.9% quantile of chi-square with 17 degrees of freedom


def test_spawn__only_where_asked_and_never_on_full_boards():
    boards = random_boards(1000, seed=7)
    which = torch.from_numpy(np.random.default_rng(8).random(1000) < 0.5)
    out = spawn(from_boards(boards), which, torch.Generator().manual_seed(0))
    before = from_boards(boards).view(1000, 16)
    diff = (out.view(1000, 16) != before).sum(1)
    has_empty = (before == 0).any(1)
    assert torch.equal(diff, (which & has_empty).long())
    changed = out.view(1000, 16) != before
    assert (before[changed] == 0).all()
    assert set(out.view(1000, 16)[changed].tolist()) <= {1.0, 2.0}


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_env__same_seed_same_games(cls):
    def play(seed):
        env = cls(16, seed=seed)
        gen = torch.Generator().manual_seed(0)
        for _ in range(60):
            legal = env.legal_actions().float() + 1e-9
            env.step(torch.multinomial(legal, 1, generator=gen).squeeze(1))
        return env.boards(), env.scores.clone()

    a, b, c = play(5), play(5), play(6)
    assert (a[0] == b[0]).all() and torch.equal(a[1], b[1])
    assert not (a[0] == c[0]).all()


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_env__step_is_engine_move_plus_one_spawn_and_scores_add_up(cls):
    env = cls(64, seed=1)
    rng = np.random.default_rng(2)
    total = np.zeros(64, dtype=np.int64)
    for _ in range(40):
        before = env.boards()
        actions = rng.integers(0, 4, 64)
        moved, rewards = batch_move(before, actions)
        got_r, legal = env.step(torch.from_numpy(actions))
        after = env.boards()
        np.testing.assert_array_equal(legal.numpy(), moved != before)
        np.testing.assert_array_equal(got_r.numpy(), np.where(moved != before, rewards, 0))
        total += got_r.numpy()
        for b0, m, a in zip(before, moved, after, strict=True):
            if m == b0:
                assert a == b0
            else:
                diff = int(a) ^ int(m)
                assert bin(diff).count("1") >= 1 and spawn_outcomes(m, 0.9)[0].tolist().count(a) == 1
    np.testing.assert_array_equal(env.scores.numpy(), total)
    np.testing.assert_array_equal(env.terminated.numpy(), ~batch_legal_masks(env.boards()).any(1))


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_env__save_load_restores_all_or_masked(cls):
    env = cls(8, seed=3)
    snap = env.save()
    start = env.boards()
    for _ in range(5):
        env.step(torch.randint(0, 4, (8,)))
    moved = env.boards()
    which = torch.tensor([True, False] * 4)
    env.load(snap, which)
    now = env.boards()
    assert (now[::2] == start[::2]).all() and (now[1::2] == moved[1::2]).all()
    env.load(snap)
    assert (env.boards() == start).all() and int(env.scores.sum()) == 0


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_env__reset_terminated_resets_only_finished_games(cls):
    env = cls(4, seed=0)
    over = pack(np.array([[1, 2, 1, 2, 2, 1, 2, 1] * 2]))[0]
    live = pack(np.array([[1, 1] + [0] * 14]))[0]
    env.set_boards(np.array([over, live, over, live], dtype=np.uint64))
    assert env.terminated.tolist() == [True, False, True, False]
    which = env.reset_terminated()
    assert which.tolist() == [True, False, True, False]
    b = env.boards()
    assert b[1] == live and b[3] == live
    for i in (0, 2):
        cells = (int(b[i]) >> SHIFTS.astype(np.int64)) & 0xF
        assert (cells > 0).sum() == 2 and set(cells[cells > 0].tolist()) <= {1, 2}
    assert not env.terminated.any()


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_choose_random_legal_action__uniform_over_legal_moves_reproducible_and_up_when_over(cls):
    """Seed 001's ``choose_random_legal_action``: uniform over each game's legal moves, seeded by the
    batch's seed, and UP (a no-op) for a game with none, where the seed's multinomial would fail."""
    over = pack(np.array([[1, 2, 1, 2, 2, 1, 2, 1] * 2]))[0]
    two = pack(np.array([[1] + [0] * 15]))[0]  # a lone 2 in the top-left corner: RIGHT and DOWN only
    env = cls(2, seed=4)
    env.set_boards(np.array([over, two], dtype=np.uint64))
    picks = torch.stack([env.choose_random_legal_action() for _ in range(2000)])
    assert picks[:, 0].tolist() == [0] * 2000
    right = float((picks[:, 1] == Action.RIGHT).float().mean())
    assert set(picks[:, 1].tolist()) == {Action.RIGHT, Action.DOWN} and 0.45 < right < 0.55  # 4.5 s.d.
    again = cls(2, seed=4)
    again.set_boards(np.array([over, two], dtype=np.uint64))
    assert torch.equal(torch.stack([again.choose_random_legal_action() for _ in range(2000)]), picks)


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_random_rollout__plays_to_the_end_restores_the_positions_and_is_reproducible(cls):
    over = pack(np.array([[1, 2, 1, 2, 2, 1, 2, 1] * 2]))[0]
    env = cls(8, seed=2)
    env.set_boards(np.concatenate([[over], env.boards()[1:]]).astype(np.uint64))
    start, scores = env.boards(), env.scores.clone()
    moves, gained = env.random_rollout(3)
    assert (env.boards() == start).all() and torch.equal(env.scores, scores)
    assert moves[0] == 0 and gained[0] == 0  # a finished game survives no move
    assert (moves[1:] > 20).all() and (gained[1:] > 0).all()  # random games from the start: ~118 moves
    again = cls(8, seed=2)
    again.set_boards(start)
    assert [t.tolist() for t in again.random_rollout(3)] == [moves.tolist(), gained.tolist()]
    with pytest.raises(ValueError, match="num_rollouts=0"):
        env.random_rollout(0)


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_print_state__shows_the_board_score_and_last_move(cls, capsys):
    env = cls(2, seed=1)
    env.print_state(last_action=Action.LEFT, index=1)
    out = capsys.readouterr().out
    assert out.startswith("game 1  score 0  moves 0  last move LEFT\n")
    assert render_text(int(env.boards()[1])) in out
    with pytest.raises(ValueError, match="index=2 is outside 0..1"):
        env.print_state(index=2)


def test_env__bad_input_raises_clear_errors():
    env = TorchEnv2048(2, seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="0..3"):
        env.step(torch.tensor([0, 4]))
    for backend in (env, make_batch_env("engine", 2, seed=0)):  # before: NotImplementedError from torch
        with pytest.raises(TypeError, match="dense tensor, got layout torch.sparse_coo"):
            backend.step(torch.tensor([0, 1]).to_sparse())
        with pytest.raises(TypeError, match="meta device"):
            backend.step(torch.zeros(2, dtype=torch.long, device="meta"))
    with pytest.raises(ValueError, match="num_envs"):
        TorchEnv2048(0)
    with pytest.raises(ValueError, match="backend"):
        make_batch_env("jax", 2)


def test_resolve_device__unknown_or_absent_devices_raise():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="unknown device|unsupported device"):
        resolve_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")


# --- rules version 1: tiles past 32768 (65536, 131072) -------------------------------------------------


@pytest.mark.parametrize("action", [0, 1, 2, 3])
def test_push_actions__equal_tiles_of_32768_or_more_merge_in_every_direction(action):
    """Rows and columns of [32768 32768 65536 65536]: each pair merges towards the wall, reward
    65536 + 131072 a line; the exact exponents 16 and 17 come out."""
    line = [15, 15, 16, 16]
    grid = np.zeros((4, 4), np.int64)
    if action in (1, 3):
        grid[1] = line
    else:
        grid[:, 1] = line
    b, s = exact_encode(grid)
    states = from_boards(np.array([b], np.uint64), supers=np.array([s]))
    got, reward = push_actions(states, torch.tensor([action]))
    want_b, want_s, want_r = Game(board=b, supers=s).after(action)
    assert int(reward[0]) == want_r == 65536 + 131072
    assert got.view(16).long().tolist() == exact_cells(np.uint64(want_b), np.int64(want_s)).tolist()
    tb, ts = to_positions(got)
    assert (int(tb[0]), int(ts[0])) == (want_b, want_s)
    again, reward = push_actions(got, torch.tensor([action]))  # 131072 + 65536 do not merge
    assert int(reward[0]) == 0 and torch.equal(again, got)


@settings(max_examples=30, deadline=None)
@given(st.lists(exact_positions(), min_size=1, max_size=4),
       st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_push_actions_and_legal__equal_game_on_positions_past_32768(cells, actions):
    """The tensor rules against ``Game`` (the exact engine) on positions with two or more tiles of
    32768 or more: same moved positions, rewards and legal masks."""
    pos = [exact_encode(c) for c in cells]
    boards = np.array([p[0] for p in pos], np.uint64)
    supers = np.array([p[1] for p in pos], np.int64)
    states = from_boards(boards, supers=supers)
    acts = torch.tensor(actions[: len(pos)])
    got, reward = push_actions(states, acts)
    legal = legal_actions(states)
    gb, gs = to_positions(got)
    for i, (b, s) in enumerate(pos):
        game = Game(board=b, supers=s)
        nb, ns, r = game.after(int(acts[i]))
        assert (int(gb[i]), int(gs[i]), int(reward[i])) == (nb, ns, r)
        assert legal[i].tolist() == [Action(a) in game.legal_actions() for a in range(4)]


@settings(max_examples=30, deadline=None)
@given(st.lists(exact_positions(), min_size=2, max_size=2), st.integers(0, 2**32),
       st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_engine_batch__plays_the_games_game_plays_past_32768(cells, seed, picks):
    """``EngineBatch`` with each slot's stream set to ``Game(seed=...)``'s plays the same games: same
    boards, supers, rewards and scores, move by move (a legal move picked from each game's own)."""
    pos = [exact_encode(c) for c in cells]
    env = EngineBatch(2, seed=0)
    env.set_boards(np.array([p[0] for p in pos], np.uint64), np.array([p[1] for p in pos], np.int64))
    games = [Game(seed=seed + i, board=b, supers=s) for i, (b, s) in enumerate(pos)]
    for i in range(2):
        env.games.states[i] = seed_state(seed + i)[0]
    for pick in picks:
        acts = [g.legal_actions()[pick % len(g.legal_actions())] if not g.is_over else 0 for g in games]
        rewards, changed = env.step(torch.tensor(acts))
        for i, g in enumerate(games):
            over = g.is_over
            r = 0 if over else g.step(acts[i])
            assert (int(rewards[i]), bool(changed[i])) == (r, not over)
            got = (int(env.boards()[i]), int(env.supers()[i]), int(env.scores[i]))
            assert got == (g.board, g.supers, g.score)
        assert env.states.view(2, 16).long().tolist() == [g.cells.tolist() for g in games]


def test_torch_env__plays_65536_and_131072_and_ends_with_them():
    env = TorchEnv2048(2, seed=0)
    b, s = exact_from_tiles([65536, 65536, 0, 0] + [0] * 12)
    stuck, stuck_s = exact_from_tiles([131072, 4, 8, 16, 2, 8, 16, 32, 4, 16, 32, 64, 2, 32, 64, 128])
    env.set_boards(np.array([b, stuck], np.uint64), np.array([s, stuck_s]))
    assert env.terminated.tolist() == [False, True]
    assert env.high_tiles().tolist() == [16, 17]
    rewards, changed = env.step(torch.tensor([3, 3]))
    assert rewards.tolist() == [131072, 0] and changed.tolist() == [True, False]
    assert env.states[0, 0, 0, 0] == 17 and int(env.states[0].gt(0).sum()) == 2  # the 131072 and a spawn
    assert (int(env.supers()[0]) & 3) == 2 and env.scores.tolist() == [131072, 0]


def test_torch_env__rules_0_keeps_the_cap_and_refuses_tiles_past_32768():
    b, s = exact_from_tiles([32768, 32768] + [0] * 14)
    for cls in (TorchEnv2048, EngineBatch):
        env = cls(1, seed=0, rules=0)
        env.set_boards(np.array([b], np.uint64))
        assert not env.legal_actions()[0, 3]
        with pytest.raises(ValueError, match="rules version 0"):
            big, big_s = exact_from_tiles([65536] + [0] * 15)
            env.set_boards(np.array([big], np.uint64), np.array([big_s]))
    with pytest.raises(ValueError, match="rules=2 is not one of 0, 1"):
        TorchEnv2048(1, rules=2)
    with pytest.raises(ValueError, match="rules=2 is not one of 0, 1"):
        make_batch_env("engine", 1, rules=2)


def test_engine_batch__save_load_keeps_the_supers():
    env = EngineBatch(1, seed=0)
    b, s = exact_from_tiles([65536, 65536] + [0] * 14)
    env.set_boards(np.array([b], np.uint64), np.array([s]))
    snap = env.save()
    env.step(torch.tensor([3]))
    assert int(env.supers()[0]) != s
    env.load(snap)
    assert (int(env.boards()[0]), int(env.supers()[0])) == (b, s)
