"""User mistakes raise ValueError/TypeError naming the problem: never a wrong board or a numba traceback."""

from __future__ import annotations

import numpy as np
import pytest

import ai2048
from ai2048.board_io import check_boards
from ai2048.engine.batch import batch_move

ROW = [1, 1, 1, 1] + [0] * 12
BOARD = ai2048.encode(ROW)


@pytest.mark.parametrize(
    ("cells", "error", "words"),
    [
        ([16] + [0] * 15, ValueError, "exponent 16 at cell 0 (row 0, column 0) is outside 0..15"),
        ([0] * 5 + [-1] + [0] * 10, ValueError, "exponent -1 at cell 5 (row 1, column 1) is outside 0..15"),
        ([0] * 15, ValueError, "16 entries or shape (4, 4), got shape (15,)"),
        ([0] * 17, ValueError, "got shape (17,)"),
        (np.zeros((2, 8)), ValueError, "got shape (2, 8)"),
        (np.zeros((1, 4, 4)), ValueError, "got shape (1, 4, 4)"),
        (5, ValueError, "got shape ()"),
        ([1.5] + [0] * 15, ValueError, "whole numbers"),
        ([float("nan")] + [0] * 15, ValueError, "whole numbers"),
        ([1e300] + [0] * 15, ValueError, "value 1e+300 at cell 0 is out of range"),
        (np.array([2**64 - 1] + [0] * 15, dtype=np.uint64), ValueError, str(2**64 - 1)),
        ([2**70] + [0] * 15, ValueError, f"value {2**70} at cell 0 is out of range"),
        ([[1, 2], [3]], ValueError, "ragged"),
        ("abc", TypeError, "must be numbers"),
        (["1"] * 16, TypeError, "must be numbers"),
        ([True] * 16, TypeError, "dtype bool"),
        (None, TypeError, "must be numbers"),
        ([1j] * 16, TypeError, "complex"),
    ],
)
def test_encode__bad_exponents_raise(cells, error, words):
    with pytest.raises(error, match="exponent") as e:
        ai2048.encode(cells)
    assert words in str(e.value)


@pytest.mark.parametrize(
    ("values", "error", "words"),
    [
        ([3] + [0] * 15, ValueError, "tile value 3 at cell 0 (row 0, column 0) is not a power of two"),
        ([0, 1] + [0] * 14, ValueError, "tile value 1 at cell 1 (row 0, column 1) is not a power of two"),
        ([65536] + [0] * 15, ValueError, "tile value 65536"),
        ([-2] + [0] * 15, ValueError, "tile value -2"),
        ([6] + [0] * 15, ValueError, "not a power of two"),
        ([2.5] + [0] * 15, ValueError, "whole numbers"),
        ([2**70] + [0] * 15, ValueError, "out of range"),
        ([0] * 12, ValueError, "got shape (12,)"),
        (["2"] * 16, TypeError, "must be numbers"),
    ],
)
def test_from_tiles__bad_values_raise(values, error, words):
    with pytest.raises(error, match="tile value") as e:
        ai2048.from_tiles(values)
    assert words in str(e.value)


def test_encode__accepts_whole_floats_and_any_integer_dtype():
    assert ai2048.encode(np.array(ROW, dtype=np.float32)) == BOARD
    assert ai2048.encode(np.array(ROW, dtype=np.uint8).reshape(4, 4)) == BOARD
    assert ai2048.from_tiles([2.0, 2, 2, 2] + [0] * 12) == BOARD


@pytest.mark.parametrize(
    ("board", "error", "words"),
    [
        (-1, ValueError, "outside 0..2**64-1"),
        (2**64, ValueError, "outside 0..2**64-1"),
        (np.int64(-3), ValueError, "outside"),
        (1.0, TypeError, "got float"),
        (np.float64(1.0), TypeError, "got float64"),
        ("0x1111", TypeError, "got str"),
        (None, TypeError, "got NoneType"),
        (True, TypeError, "bool"),
        (np.zeros(2, np.uint64), TypeError, "array of shape (2,)"),
        (np.zeros((4, 4), np.uint8), TypeError, "ai2048.encode"),
        ([[0] * 4] * 4, TypeError, "got list"),
        (np.int8(3), TypeError, "dtype int8"),
    ],
)
def test_board_functions__bad_board_raises(board, error, words):
    for f in (ai2048.decode, ai2048.to_tiles, ai2048.legal_mask, ai2048.is_over, ai2048.render_text):
        with pytest.raises(error, match="board") as e:
            f(board)
        assert words in str(e.value)
    with pytest.raises(error, match="board"):
        ai2048.move(board, 0)
    with pytest.raises(error, match="board"):
        ai2048.spawn_outcomes(board)
    if board is not None:  # Game(board=None) is a fresh game
        with pytest.raises(error, match="board"):
            ai2048.Game(board=board)


def test_board_functions__accept_python_and_numpy_integers():
    for b in (BOARD, np.uint64(BOARD), np.int64(BOARD), np.array(BOARD, dtype=np.uint64)):
        assert ai2048.move(b, ai2048.Action.LEFT) == ai2048.move(BOARD, 3)
        assert ai2048.decode(b).tolist() == ai2048.decode(BOARD).tolist()


@pytest.mark.parametrize(
    ("action", "error", "words"),
    [
        (4, ValueError, "action 4 is out of range"),
        (-1, ValueError, "action -1 is out of range"),
        (2**70, ValueError, "out of range"),
        (np.int64(9), ValueError, "action 9"),
        (1.0, TypeError, "got float 1.0"),
        (np.float32(1), TypeError, "float32"),
        ("up", TypeError, "got str 'up'"),
        (True, TypeError, "got bool"),
        (None, TypeError, "NoneType"),
        (np.array([1]), TypeError, "ndarray"),
    ],
)
def test_actions__bad_action_raises(action, error, words):
    with pytest.raises(error, match="action") as e:
        ai2048.move(BOARD, action)
    assert words in str(e.value)
    with pytest.raises(error, match="action"):
        ai2048.Game(seed=0).step(action)


def test_actions__accept_enum_int_and_numpy_int():
    want = ai2048.move(BOARD, ai2048.Action.DOWN)
    assert ai2048.move(BOARD, 2) == ai2048.move(BOARD, np.int8(2)) == ai2048.move(BOARD, np.uint64(2)) == want


@pytest.mark.parametrize(
    ("p_two", "error"),
    [
        (-0.1, ValueError),
        (1.5, ValueError),
        (float("nan"), ValueError),
        ("0.9", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_p_two__outside_unit_interval_or_not_a_number_raises(p_two, error):
    with pytest.raises(error, match="p_two"):
        ai2048.spawn_outcomes(BOARD, p_two)
    with pytest.raises(error, match="p_two"):
        ai2048.Game(p_two=p_two)


@pytest.mark.parametrize(
    ("seed", "error"),
    [("abc", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError), (2**64, ValueError)],
)
def test_game__bad_seed_raises(seed, error):
    with pytest.raises(error, match="seed"):
        ai2048.Game(seed=seed)


def test_game__illegal_step_raises_and_leaves_the_game_unchanged():
    g = ai2048.Game(seed=0, board=BOARD)
    with pytest.raises(
        ai2048.IllegalMoveError, match="UP does not change the board.*legal: RIGHT, DOWN, LEFT"
    ):
        g.step(ai2048.Action.UP)
    assert (g.board, g.score, g.moves) == (BOARD, 0, 0)
    assert issubclass(ai2048.IllegalMoveError, ValueError)


def test_game__step_on_a_finished_game_says_it_is_over():
    over = ai2048.encode([1, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 2, 1, 2, 1])
    g = ai2048.Game(board=over)
    assert g.is_over and g.legal_actions() == []
    with pytest.raises(ai2048.IllegalMoveError, match="game is over"):
        g.step(ai2048.Action.LEFT)


@pytest.mark.parametrize(
    ("boards", "error", "words"),
    [
        (np.zeros(3, np.int64), TypeError, "dtype uint64, got int64"),
        (np.zeros(3, np.float64), TypeError, "float64"),
        (np.zeros((3, 2), np.uint64), ValueError, "1-D uint64 array [N], got shape (3, 2)"),
        (np.uint64(5), ValueError, "got shape ()"),
    ],
)
def test_check_boards__bad_batches_raise(boards, error, words):
    with pytest.raises(error, match="boards") as e:
        check_boards(boards)
    assert words in str(e.value)


def test_check_boards__returns_a_contiguous_batch_the_kernels_take():
    strided = np.arange(20, dtype=np.uint64)[::2]
    boards = check_boards(strided)
    assert boards.flags.c_contiguous and boards.tolist() == strided.tolist()
    out, _ = batch_move(boards, np.zeros(10, dtype=np.int64))
    assert out.shape == (10,)
