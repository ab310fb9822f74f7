"""The batch kernels (serial and ``prange`` over ``uint64[N]``) equal the single-board kernels
board by board."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import engine
from ai2048.board_io import exact_from_tiles
from ai2048.engine.batch import batch_observe, batch_observe_serial, batch_reset, batch_reset_serial
from ai2048.engine.moves import log2_reward
from ai2048.engine.spawn import spawn
from ai2048.game import Game

batches = st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=40).map(
    lambda xs: np.array(xs, dtype=np.uint64)
)


def _played_boards(n: int, seed: int) -> np.ndarray:
    """Realistic boards: positions met during random games."""
    rng = np.random.default_rng(seed)
    states = np.arange(seed, seed + n, dtype=np.uint64)
    starts = np.array([engine.new_board(states[i : i + 1], 0.9) for i in range(n)], dtype=np.uint64)
    finals, _, _ = engine.batch_random_play(starts, states, 0.9)
    out = starts.copy()
    for i in range(n):
        b = np.uint64(starts[i])
        s = engine.seed_state(seed * 1000 + i)
        for _ in range(int(rng.integers(0, 300))):
            mask = [a for a in range(4) if engine.move(b, a)[0] != b]
            if not mask:
                break
            nb, _ = engine.move(b, mask[int(rng.integers(len(mask)))])
            b = np.uint64(spawn(np.uint64(nb), s, 0.9))
        out[i] = b
    return np.concatenate([out, finals])


@settings(deadline=None)
@given(batches, st.integers(0, 2**32))
def test_batch_move__equals_move(boards, seed):
    actions = np.random.default_rng(seed).integers(0, 4, size=boards.shape[0])
    out, rew = engine.batch_move(boards, actions)
    want = [engine.move(b, int(a)) for b, a in zip(boards, actions, strict=True)]
    assert out.tolist() == [w[0] for w in want]
    assert rew.tolist() == [w[1] for w in want]


@settings(deadline=None)
@given(batches)
def test_batch_legal_masks__equals_legal_bits(boards):
    masks = engine.batch_legal_masks(boards)
    assert masks.shape == (boards.shape[0], 4) and masks.dtype == np.bool_
    for b, m in zip(boards, masks, strict=True):
        bits = int(engine.legal_bits(b))
        assert m.tolist() == [bool(bits >> a & 1) for a in range(4)]


def _step_outputs(n: int) -> dict[str, np.ndarray]:
    return {
        "rewards": np.empty(n, np.int64),
        "log_rewards": np.empty(n, np.int64),
        "illegal": np.empty(n, np.bool_),
        "masks": np.empty((n, 4), np.bool_),
        "max_exp": np.empty(n, np.uint8),
        "empty": np.empty(n, np.int64),
        "obs": np.empty((n, 4, 4), np.uint8),
    }


def test_batch_step__equals_move_then_spawn_with_the_same_states():
    boards = _played_boards(150, 11)
    n = boards.shape[0]
    actions = np.random.default_rng(3).integers(0, 4, size=n).astype(np.int64)
    states = np.arange(1000, 1000 + n, dtype=np.uint64)
    single_states = states.copy()
    out = _step_outputs(n)
    stepped = boards.copy()
    engine.batch_step(stepped, actions, states, 0.9, *out.values())
    assert out["illegal"].any() and not out["illegal"].all()
    for i in range(n):
        b, a = boards[i], int(actions[i])
        nb, r = engine.move(b, a)
        if nb == b:
            assert out["illegal"][i] and out["rewards"][i] == 0 and stepped[i] == b
            assert states[i] == single_states[i]
        else:
            s = single_states[i : i + 1]
            want = spawn(np.uint64(nb), s, 0.9)
            assert stepped[i] == want and out["rewards"][i] == r and not out["illegal"][i]
            assert out["log_rewards"][i] == log2_reward(b, a)
            assert states[i] == s[0]
        cells = np.array([(int(stepped[i]) >> (4 * c)) & 0xF for c in range(16)])
        assert out["obs"][i].reshape(-1).tolist() == cells.tolist()
        assert out["max_exp"][i] == cells.max() and out["empty"][i] == (cells == 0).sum()
        bits = int(engine.legal_bits(stepped[i]))
        assert out["masks"][i].tolist() == [bool(bits >> k & 1) for k in range(4)]


@pytest.mark.parametrize("chunks", [0, 1, 3, 1000])
def test_batch_observe__matches_board(chunks):
    boards = _played_boards(40, 5)
    n = boards.shape[0]
    out = _step_outputs(n)
    args = (boards, np.zeros(n, np.int64), False, out["masks"], out["max_exp"], out["empty"], out["obs"])
    if chunks:
        batch_observe(*args, chunks)
    else:
        batch_observe_serial(*args)
    for i in range(n):
        cells = np.array([(int(boards[i]) >> (4 * c)) & 0xF for c in range(16)])
        assert out["obs"][i].reshape(-1).tolist() == cells.tolist()
        assert out["max_exp"][i] == cells.max() and out["empty"][i] == (cells == 0).sum()
        assert out["masks"][i].tolist() == engine.batch_legal_masks(boards[i : i + 1])[0].tolist()


@pytest.mark.parametrize("chunks", [0, 2, 7, 64])
def test_batch_reset__equals_new_board_where_asked(chunks):
    n = 20
    states = np.arange(50, 50 + n, dtype=np.uint64)
    single = states.copy()
    boards = np.full(n, 0xDEAD, dtype=np.uint64)
    which = np.arange(n) % 3 == 0
    out = _step_outputs(n)
    out["max_exp"][:] = 99
    args = (boards, states, 0.9, which, out["masks"], out["max_exp"], out["empty"], out["obs"])
    if chunks:
        batch_reset(*args, chunks)
    else:
        batch_reset_serial(*args)
    for i in range(n):
        if which[i]:
            assert boards[i] == engine.new_board(single[i : i + 1], 0.9)
            assert int(engine.count_empty(boards[i])) == 14 and out["empty"][i] == 14
            cells = [(int(boards[i]) >> (4 * c)) & 0xF for c in range(16)]
            assert out["obs"][i].reshape(-1).tolist() == cells and out["max_exp"][i] == max(cells)
        else:
            assert boards[i] == 0xDEAD and out["max_exp"][i] == 99  # untouched where not asked
        assert states[i] == single[i]


def test_batch_random_play__equals_random_play():
    n = 64
    states = np.arange(7, 7 + n, dtype=np.uint64)
    starts = np.array([engine.new_board(states[i : i + 1], 0.9) for i in range(n)], dtype=np.uint64)
    single = states.copy()
    finals, scores, moves = engine.batch_random_play(starts, states, 0.9)
    for i in range(n):
        f, s, m = engine.random_play(starts[i], single[i : i + 1], 0.9)
        assert (finals[i], scores[i], moves[i]) == (f, s, m)
        assert engine.is_over(finals[i])
    assert np.array_equal(states, single)


@pytest.mark.parametrize("chunks", [0, 2])
def test_batch_observe__shows_exact_positions_past_32768(chunks):
    """With supers and rules version 1: exact exponents (16, 17), the exact largest exponent and the
    exact legal moves (two 65536s side by side merge), as ``Game`` has them; rules version 0 keeps
    the bitboard's moves."""
    grids = [[65536, 65536, 8, 16, 2, 8, 16, 32, 4, 16, 32, 64, 2, 32, 64, 128],
             [131072, 32768, 0, 32768] + [0] * 12,
             [32768, 32768, 4, 2, 2, 4, 2, 4, 4, 2, 4, 2, 2, 4, 2, 4]]
    pos = [exact_from_tiles(g) for g in grids]
    boards = np.array([p[0] for p in pos], np.uint64)
    supers = np.array([p[1] for p in pos], np.int64)
    for exact in (True, False):
        out = _step_outputs(len(pos))
        sup = supers if exact else np.zeros(len(pos), np.int64)
        args = (boards, sup, exact, out["masks"], out["max_exp"], out["empty"], out["obs"])
        if chunks:
            batch_observe(*args, chunks)
        else:
            batch_observe_serial(*args)
        for i, (b, s) in enumerate(pos):
            game = Game(board=b, supers=s if exact else 0, rules=int(exact))
            assert out["obs"][i].reshape(-1).tolist() == game.cells.tolist()
            assert out["max_exp"][i] == game.cells.max() and out["empty"][i] == (game.cells == 0).sum()
            assert out["masks"][i].tolist() == [a in game.legal_actions() for a in range(4)]
    assert out["masks"][0].tolist() == [False] * 4 and out["masks"][2].tolist() == [False] * 4
