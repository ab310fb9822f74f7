"""The batch core: kernels over ``uint64[N]`` boards, serial and parallel side by side.

Each game in a batch owns one SplitMix64 state (``states[i]``), so a batch replays exactly the
games that N single boards seeded the same way would play, serial or parallel alike.

Each game also owns ``supers[i]``, the exact values of its tiles of 32768 or more (rules version 1,
:mod:`ai2048.engine.supertiles`); a step under ``OPT_EXACT`` plays the exact move where the
bitboard move is not exact (:func:`needs_exact`: two tiles of 32768 or more), so boards that never
hold two take the bitboard path, as under rules version 0. Observations show exact exponents (0..17).

Every loop is written once, over a range of slots (``_*_range``); ``batch_x_serial`` runs it over
the whole batch on the calling thread and ``batch_x`` cuts the batch into one contiguous chunk per
numba thread (``prange`` over ``chunks`` chunks, never over single boards: each thread then walks
its own cache lines of the boards, states and outputs; the caller passes ``numba.get_num_threads()``,
read in Python so the kernels stay cacheable). Serial is for small batches and for processes
that fork (numba's OpenMP layer is not fork-safe); :class:`ai2048.envs.batch.GameBatch` picks.

The env options (reward mode, illegal actions, goal tile, full-board end, cutoff) live here once,
in :func:`step_board` and :func:`_step_range`; the single env, the vector env and the trainers
all step through them. ``opts`` is the float64 [10] array :func:`step_options` packs, indexed by
``OPT_REWARD, OPT_ILLEGAL, OPT_PENALTY, OPT_GOAL_EXP, OPT_GOAL_REWARD, OPT_GOAL_TERMINAL,
OPT_FULL_ENDS, OPT_MAX_STEPS, OPT_AUTORESET, OPT_EXACT`` (an array, not a tuple: numba's dispatcher types an
array argument in C and a tuple in Python, which costs microseconds a call in the single env's loop).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ai2048.engine.board import count_empty, nibbles_to_bytes
from ai2048.engine.moves import legal_bits, log2_reward, move
from ai2048.engine.spawn import new_board, random_play, spawn
from ai2048.engine.supertiles import BIG_MERGE, exact_legal_bits, needs_exact, slow_move
from ai2048.rules import MAX_EXPONENT

REWARD_SCORE, REWARD_LOG2, REWARD_MOVES = 0, 1, 2
"""``reward_mode`` codes: merged tile values, merged exponents (seed 000), 1 per legal move (seed 001)."""
ILLEGAL_NOOP, ILLEGAL_TERMINATE, ILLEGAL_RAISE, ILLEGAL_SPAWN = 0, 1, 2, 3
"""``illegal_mode`` codes; "raise" is checked before the kernel runs (:func:`first_bad_action`);
"spawn" is seed 004's unmasked move: it costs the penalty and a tile still spawns."""
STEP, RESTART, HOLD = 0, 1, 2
"""Per-slot ``control`` codes of a step: play the action, start a new game instead (next-step
autoreset: the action is ignored), or leave the slot as it is (a finished game waiting)."""
NO_GOAL = 99
"""``goal_exp`` of a batch without a goal tile (no exponent reaches it)."""
(
    OPT_REWARD,
    OPT_ILLEGAL,
    OPT_PENALTY,
    OPT_GOAL_EXP,
    OPT_GOAL_REWARD,
    OPT_GOAL_TERMINAL,
    OPT_FULL_ENDS,
    OPT_MAX_STEPS,
    OPT_AUTORESET,
    OPT_EXACT,
) = range(10)
"""Indices into the options array ``opts`` [10] float64."""

_H = np.uint64(0x8080808080808080)
_B = np.uint64(0xFF)
_MAX_EXP = np.uint64(MAX_EXPONENT)


def step_options(
    reward_mode: int = REWARD_SCORE,
    illegal_mode: int = ILLEGAL_NOOP,
    illegal_penalty: float = 0.0,
    goal_exp: int = NO_GOAL,
    goal_reward: float = 0.0,
    goal_terminal: bool = True,
    end_on_full_board: bool = False,
    max_steps: int | None = None,
    autoreset: bool = False,
    exact: bool = True,
) -> np.ndarray:
    """The options as the kernels take them: float64 [10] in ``OPT_*`` order (``max_steps`` None: inf).

    ``autoreset``: the batch step marks each slot that ended ``RESTART`` for the next step
    (Gymnasium's next-step autoreset) in the same pass, instead of the caller doing it in numpy.
    ``exact``: rules version 1 (two equal tiles of 32768 or more merge); False: version 0 (capped).
    """
    return np.array(
        [reward_mode, illegal_mode, illegal_penalty, goal_exp, goal_reward, bool(goal_terminal),
         bool(end_on_full_board), np.inf if max_steps is None else max_steps, bool(autoreset), bool(exact)],
        dtype=np.float64,
    )


@njit(cache=True, inline="always")
def _byte_max(x: np.uint64, y: np.uint64) -> np.uint64:
    """Bytewise max of two words whose bytes are all < 128 (no borrow crosses a byte)."""
    ge = (((x | _H) - y) & _H) >> np.uint64(7)  # 1 in each byte where x >= y
    m = ge * _B
    return (x & m) | (y & ~m)


@njit(cache=True, inline="always")
def board_words(b: np.uint64) -> tuple[np.uint64, np.uint64, np.int64]:
    """The 16 exponents as 16 bytes in two words (byte k = cell k on a little-endian machine), and
    the largest exponent, branch-free: ``0x...21 -> (0x0201, 0, 2)``."""
    lo, hi = nibbles_to_bytes(b)
    m = _byte_max(lo, hi)
    m = _byte_max(m, m >> np.uint64(32))
    m = _byte_max(m, m >> np.uint64(16))
    m = _byte_max(m, m >> np.uint64(8))
    return lo, hi, np.int64(m & _B)


_FIELD_HI = np.int64(0xAAAAAAAA)
"""The high bit of every 2-bit field of ``supers``: set iff that cell holds a 131072."""


@njit(cache=True, inline="always")
def super_max(m: np.int64, s: np.int64) -> np.int64:
    """The largest exact exponent of a board whose bitboard maximum is ``m`` and supers ``s``."""
    if s == 0:
        return m
    return np.int64(MAX_EXPONENT + 2) if s & _FIELD_HI else np.int64(MAX_EXPONENT + 1)


@njit(cache=True)
def super_words(s: np.int64) -> tuple[np.uint64, np.uint64]:
    """What to add to :func:`board_words`' two words to read exact exponents: ``exponent - 15`` in
    the byte of every cell that ``s`` records (a 65536 or a 131072)."""
    lo = np.uint64(0)
    hi = np.uint64(0)
    for i in range(8):
        lo |= np.uint64((s >> np.int64(2 * i)) & 3) << np.uint64(8 * i)
        hi |= np.uint64((s >> np.int64(2 * i + 16)) & 3) << np.uint64(8 * i)
    return lo, hi


@njit(cache=True, inline="always")
def _super_count(s: np.int64, f: np.int64) -> np.int64:
    """How many cells ``s`` records with field ``f`` (1: a 65536, 2: a 131072)."""
    n = np.int64(0)
    for i in range(16):
        n += ((s >> np.int64(2 * i)) & 3) == f
    return n


@njit(cache=True)
def exact_step_move(b: np.uint64, s: np.int64, a: np.int64) -> tuple[np.uint64, np.int64, np.int64, np.int64]:
    """The exact move of a position that :func:`needs_exact` (:func:`slow_move`), with seed 000's log2
    reward: (board, supers, score gained, log2 gained).

    Merges of tiles below 32768 pair as on the bitboard (a tile of 32768 or more never merges with
    one below it), so their log2 gain is the bitboard's; each 131072 made is a new field 2 in the
    supers, each 65536 made a new field 1 (plus the two that became the 131072)."""
    nb, ns, r = slow_move(b, s, a)
    lg = np.int64(0)
    if nb != b or ns != s:
        k17 = _super_count(ns, 2) - _super_count(s, 2)
        k16 = _super_count(ns, 1) - _super_count(s, 1) + 2 * k17
        lg = log2_reward(b, a) + (MAX_EXPONENT + 1) * k16 + (MAX_EXPONENT + 2) * k17
    return nb, ns, r, lg


@njit(cache=True, inline="always")
def step_board(
    b: np.uint64, s: np.int64, a: np.int64, state: np.ndarray, p_two: np.float64, opts: np.ndarray
) -> tuple[np.uint64, np.int64, np.int64, np.int64, np.float64, bool, bool, bool, np.int64, np.int64,
           np.int64]:
    """One env step of one position (board ``b``, supers ``s``) with every option applied (the one
    place they are implemented).

    Returns (board, supers, score gained, log2 gained, reward, illegal, terminated, goal_cut, legal
    bits of the new position, its max exact exponent, its empty cells). Under ``OPT_EXACT`` (rules
    version 1) two equal tiles of 32768 or more merge (:func:`exact_step_move`, taken only where
    the bitboard move is not exact; a position that took the bitboard path is looked at again only
    after a merge into 32768, ``BIG_MERGE``); otherwise a 15 never merges and ``s`` stays 0. An illegal
    action keeps the position, spawns nothing and costs ``illegal_penalty``; it ends the game under
    "terminate" or when no action is legal. Under "spawn" (seed 004, whose moves are not masked) it
    costs ``illegal_penalty`` and a tile still spawns, where a cell is empty. A legal move that
    makes the goal tile adds ``goal_reward`` and ends the game: as terminal when ``goal_terminal``,
    else as a cut (``goal_cut``: the caller truncates). With ``end_on_full_board`` (seed 004) a full
    board, or a tile of 32768 or more, ends the game.
    """
    reward_mode = opts[OPT_REWARD]
    exact = opts[OPT_EXACT] != 0.0
    lg = np.int64(0)
    if exact and needs_exact(b, s):
        nb, ns, gain, lg = exact_step_move(b, s, a)
        illegal = nb == b and ns == s
        recheck = True
    else:
        nb, gain = move(b, a)
        ns = s
        illegal = nb == b
        if not illegal:
            lg = log2_reward(b, a)
        recheck = exact and gain >= BIG_MERGE  # only a new 32768 can make a second one (spawns are 2s, 4s)
    if illegal:
        gain = np.int64(0)
        lg = np.int64(0)
        reward = -opts[OPT_PENALTY]
        if opts[OPT_ILLEGAL] == ILLEGAL_SPAWN and count_empty(nb) > 0:
            nb = spawn(nb, state, p_two)
    else:
        nb = spawn(nb, state, p_two)
        if reward_mode == REWARD_SCORE:
            reward = np.float64(gain)
        elif reward_mode == REWARD_LOG2:
            reward = np.float64(lg)
        else:
            reward = np.float64(1.0)
    bits = legal_bits(nb)
    if recheck and needs_exact(nb, ns):
        bits = exact_legal_bits(nb, ns)
    _, _, m = board_words(nb)
    m = super_max(m, ns)
    empty = count_empty(nb)
    terminated = bits == 0 or (illegal and opts[OPT_ILLEGAL] == ILLEGAL_TERMINATE)
    goal_cut = False
    if not illegal and m >= opts[OPT_GOAL_EXP]:
        reward += opts[OPT_GOAL_REWARD]
        if opts[OPT_GOAL_TERMINAL] != 0.0:
            terminated = True
        else:
            goal_cut = True
    if opts[OPT_FULL_ENDS] != 0.0 and (empty == 0 or m >= MAX_EXPONENT):
        terminated = True
    return nb, ns, gain, lg, reward, illegal, terminated, goal_cut and not terminated, bits, m, empty


@njit(cache=True, inline="always")
def _exact_words(b: np.uint64, s: np.int64) -> tuple[np.uint64, np.uint64]:
    """The 16 exact exponents of ``(b, s)`` as 16 bytes in two words."""
    lo, hi, _ = board_words(b)
    if s != 0:
        add_lo, add_hi = super_words(s)
        lo += add_lo
        hi += add_hi
    return lo, hi


@njit(cache=True)
def step_single(
    b: np.uint64, s: np.int64, a: np.int64, state: np.ndarray, p_two: np.float64, opts: np.ndarray,
    obs: np.ndarray,
) -> tuple[np.uint64, np.int64, np.int64, np.float64, bool, bool, bool, np.int64, np.int64]:
    """:func:`step_board` for the single env (the batch of one, without arrays around it).

    Writes the new position's exact exponents into ``obs`` [4, 4] uint8 (C-contiguous). Returns
    (board, supers, score gained, reward, illegal, terminated, goal_cut, legal bits, max exponent).
    """
    nb, ns, gain, _, reward, illegal, term, cut, bits, m, _ = step_board(b, s, a, state, p_two, opts)
    lo, hi = _exact_words(nb, ns)
    words = obs.reshape(16).view(np.uint64)
    words[0] = lo
    words[1] = hi
    return nb, ns, gain, reward, illegal, term, cut, bits, m


@njit(cache=True, inline="always")
def position_bits(b: np.uint64, s: np.int64, exact: bool) -> np.int64:
    """Legal bits of ``(b, s)``: the exact position's under rules version 1, the bitboard's else."""
    if exact and needs_exact(b, s):
        return exact_legal_bits(b, s)
    return legal_bits(b)


@njit(cache=True)
def observe_single(b: np.uint64, s: np.int64, exact: bool, obs: np.ndarray) -> tuple[np.int64, np.int64]:
    """Write the exact exponents of ``(b, s)`` into ``obs`` [4, 4] uint8: (legal bits, max exact
    exponent); ``exact``: rules version 1."""
    lo, hi = _exact_words(b, s)
    words = obs.reshape(16).view(np.uint64)
    words[0] = lo
    words[1] = hi
    _, _, m = board_words(b)
    return position_bits(b, s, exact), super_max(m, s)


# --- loops over a range of slots: the bodies of the serial and parallel kernels -------------------


@njit(cache=True, inline="always")
def _observe_one(
    b: np.uint64, s: np.int64, exact: bool, i: np.int64, masks: np.ndarray, max_exp: np.ndarray,
    empty: np.ndarray, words: np.ndarray,
) -> None:
    """Slot i's legal mask [4], max exact exponent, empty count and exact exponents (two words a board)."""
    bits = position_bits(b, s, exact)
    for a in range(4):
        masks[i, a] = (bits >> a) & 1
    lo, hi, m = board_words(b)
    if s != 0:
        lo, hi = _exact_words(b, s)
        m = super_max(m, s)
    words[2 * i] = lo
    words[2 * i + 1] = hi
    max_exp[i] = m
    empty[i] = count_empty(b)


@njit(cache=True, inline="always")
def _step_range(
    lo: np.int64, hi: np.int64, boards: np.ndarray, supers: np.ndarray, actions: np.ndarray,
    states: np.ndarray, p_two: np.float64, opts: np.ndarray, control: np.ndarray, scores: np.ndarray,
    moves: np.ndarray, steps: np.ndarray, rewards: np.ndarray, gains: np.ndarray, log_gains: np.ndarray,
    illegal: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, masks: np.ndarray,
    max_exp: np.ndarray, empty: np.ndarray, words: np.ndarray, info_scores: np.ndarray,
    info_moves: np.ndarray, info_boards: np.ndarray, info_supers: np.ndarray, info_tiles: np.ndarray,
) -> None:
    max_steps = opts[OPT_MAX_STEPS]
    autoreset = opts[OPT_AUTORESET] != 0.0
    exact = opts[OPT_EXACT] != 0.0
    info = info_boards.shape[0] != 0
    # Each slot's state goes through one scratch array per chunk, not a view ``states[i : i + 1]``:
    # a view takes a reference on ``states``, an atomic add on one cache line that every thread
    # of a parallel kernel would fight over, once per board.
    st = np.empty(1, dtype=np.uint64)
    for i in range(lo, hi):
        c = control[i]
        if c != STEP:  # RESTART: a new game, counters at 0; HOLD: the board as it is
            if c == RESTART:
                st[0] = states[i]
                b = new_board(st, p_two)
                s = np.int64(0)
                states[i] = st[0]
                scores[i] = 0
                moves[i] = 0
                steps[i] = 0
            else:
                b = boards[i]
                s = supers[i]
            rewards[i] = 0.0
            gains[i] = 0
            log_gains[i] = 0
            illegal[i] = False
            terminated[i] = False
            truncated[i] = False
            bits = position_bits(b, s, exact)
            m_lo, m_hi, m = board_words(b)
            m = super_max(m, s)
            e = count_empty(b)
            done = False
        else:
            st[0] = states[i]
            b, s, g, lg, r, ill, term, cut, bits, m, e = step_board(
                boards[i], supers[i], actions[i], st, p_two, opts)
            states[i] = st[0]
            m_lo, m_hi, _ = board_words(b)
            rewards[i] = r
            gains[i] = g
            log_gains[i] = lg
            illegal[i] = ill
            scores[i] += g
            if not ill or b != boards[i]:  # a move, or an illegal one that spawned ("spawn")
                moves[i] += 1
            steps[i] += 1
            trunc = not term and (cut or steps[i] >= max_steps)
            terminated[i] = term
            truncated[i] = trunc
            done = term or trunc
        control[i] = RESTART if autoreset and done else STEP
        boards[i] = b
        supers[i] = s
        if s != 0:  # a 65536 or a 131072: exact exponents in the observation
            add_lo, add_hi = super_words(s)
            m_lo += add_lo
            m_hi += add_hi
        for a in range(4):
            masks[i, a] = (bits >> a) & 1
        words[2 * i] = m_lo
        words[2 * i + 1] = m_hi
        max_exp[i] = m
        empty[i] = e
        if info:  # copies of the counters and board for the caller to keep (the vector env's infos)
            info_scores[i] = scores[i]
            info_moves[i] = moves[i]
            info_boards[i] = b
            info_supers[i] = s
            info_tiles[i] = (np.int64(1) << m) if m else np.int64(0)


@njit(cache=True, inline="always")
def _reset_range(
    lo: np.int64, hi: np.int64, boards: np.ndarray, states: np.ndarray, p_two: np.float64, which: np.ndarray,
    masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray, words: np.ndarray,
) -> None:
    st = np.empty(1, dtype=np.uint64)  # scratch RNG state, as in _step_range
    for i in range(lo, hi):
        if which[i]:
            st[0] = states[i]
            b = new_board(st, p_two)
            states[i] = st[0]
            boards[i] = b
            _observe_one(b, np.int64(0), False, i, masks, max_exp, empty, words)


@njit(cache=True, inline="always")
def _observe_range(
    lo: np.int64, hi: np.int64, boards: np.ndarray, supers: np.ndarray, exact: bool, masks: np.ndarray,
    max_exp: np.ndarray, empty: np.ndarray, words: np.ndarray,
) -> None:
    for i in range(lo, hi):
        _observe_one(boards[i], supers[i], exact, i, masks, max_exp, empty, words)


@njit(cache=True, inline="always")
def _chunk(c: np.int64, k: np.int64, n: np.int64) -> tuple[np.int64, np.int64]:
    """Slots [lo, hi) of chunk c when ``n`` slots are cut into ``k`` contiguous chunks."""
    k = max(np.int64(1), min(k, n))
    return c * n // k, (c + 1) * n // k


# --- the kernels: serial and parallel side by side ------------------------------------------------


@njit(cache=True)
def batch_env_step_serial(
    boards: np.ndarray, supers: np.ndarray, actions: np.ndarray, states: np.ndarray, p_two: np.float64,
    opts: np.ndarray, control: np.ndarray, scores: np.ndarray, moves: np.ndarray, steps: np.ndarray,
    rewards: np.ndarray, gains: np.ndarray, log_gains: np.ndarray, illegal: np.ndarray,
    terminated: np.ndarray, truncated: np.ndarray, masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray,
    obs: np.ndarray, info_scores: np.ndarray, info_moves: np.ndarray, info_boards: np.ndarray,
    info_supers: np.ndarray, info_tiles: np.ndarray,
) -> None:
    """One env step of every slot, in place, on this thread; options from :func:`step_options`.

    In/out (state): ``boards`` [N] uint64, ``supers`` [N] int64 (their tiles of 32768 or more,
    :mod:`ai2048.engine.supertiles`), ``states`` [N] uint64 RNG states, ``scores``, ``moves``
    (legal moves), ``steps`` (every step: the cutoff counts these) [N] int64. In: ``actions`` [N]
    int64 0..3 (unchecked). In/out: ``control`` [N] uint8: STEP, RESTART (a new game instead:
    next-step autoreset, action ignored, reward 0, counters 0) or HOLD (left as it is, reward 0);
    afterwards STEP everywhere, or RESTART where the slot ended when ``opts`` has autoreset. Out:
    ``rewards`` [N] float64 after the options, ``gains`` and ``log_gains`` [N] int64 raw score and
    log2 score gained, ``illegal``, ``terminated``, ``truncated`` [N] bool, ``masks`` [N, 4] bool
    legal actions of the new board, ``max_exp`` [N] uint8 (exact), ``empty`` [N] int64, ``obs``
    [N, 4, 4] uint8 exact exponents (C-contiguous); ``info_scores``, ``info_moves`` [N] int64,
    ``info_boards`` [N] uint64, ``info_supers`` [N] int64 and ``info_tiles`` [N] int64 (largest
    tile's value) copies of the state after the step, written only when they have N entries (pass
    [0] arrays to skip them).
    """
    words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    _step_range(0, boards.shape[0], boards, supers, actions, states, p_two, opts, control, scores, moves,
                steps, rewards, gains, log_gains, illegal, terminated, truncated, masks, max_exp, empty,
                words, info_scores, info_moves, info_boards, info_supers, info_tiles)


@njit(cache=True, parallel=True)
def batch_env_step(
    boards: np.ndarray, supers: np.ndarray, actions: np.ndarray, states: np.ndarray, p_two: np.float64,
    opts: np.ndarray, control: np.ndarray, scores: np.ndarray, moves: np.ndarray, steps: np.ndarray,
    rewards: np.ndarray, gains: np.ndarray, log_gains: np.ndarray, illegal: np.ndarray,
    terminated: np.ndarray, truncated: np.ndarray, masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray,
    obs: np.ndarray, info_scores: np.ndarray, info_moves: np.ndarray, info_boards: np.ndarray,
    info_supers: np.ndarray, info_tiles: np.ndarray, chunks: np.int64,
) -> None:
    """:func:`batch_env_step_serial` cut into ``chunks`` contiguous chunks run by numba's threads
    (one per thread: ``numba.get_num_threads()``)."""
    n = boards.shape[0]
    words = obs.reshape(n * 16).view(np.uint64)
    for c in prange(min(max(chunks, 1), max(n, 1))):
        lo, hi = _chunk(c, chunks, n)
        _step_range(lo, hi, boards, supers, actions, states, p_two, opts, control, scores, moves, steps,
                    rewards, gains, log_gains, illegal, terminated, truncated, masks, max_exp, empty,
                    words, info_scores, info_moves, info_boards, info_supers, info_tiles)


@njit(cache=True)
def batch_reset_serial(
    boards: np.ndarray, states: np.ndarray, p_two: np.float64, which: np.ndarray,
    masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray, obs: np.ndarray,
) -> None:
    """Start a new game (two spawned tiles) where ``which`` [N] is True, and observe it there (the
    caller zeroes those slots' supers: a new board holds no tile of 32768 or more)."""
    words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    _reset_range(0, boards.shape[0], boards, states, p_two, which, masks, max_exp, empty, words)


@njit(cache=True, parallel=True)
def batch_reset(
    boards: np.ndarray, states: np.ndarray, p_two: np.float64, which: np.ndarray,
    masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray, obs: np.ndarray, chunks: np.int64,
) -> None:
    """:func:`batch_reset_serial` in ``chunks`` contiguous chunks on numba's threads."""
    n = boards.shape[0]
    words = obs.reshape(n * 16).view(np.uint64)
    for c in prange(min(max(chunks, 1), max(n, 1))):
        lo, hi = _chunk(c, chunks, n)
        _reset_range(lo, hi, boards, states, p_two, which, masks, max_exp, empty, words)


@njit(cache=True)
def batch_observe_serial(
    boards: np.ndarray, supers: np.ndarray, exact: bool, masks: np.ndarray, max_exp: np.ndarray,
    empty: np.ndarray, obs: np.ndarray,
) -> None:
    """Every position's legal ``masks`` [N, 4], exact ``max_exp`` [N], ``empty`` [N] and exact
    exponents ``obs`` [N, 4, 4]; ``supers`` [N] int64, ``exact``: rules version 1."""
    words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    _observe_range(0, boards.shape[0], boards, supers, exact, masks, max_exp, empty, words)


@njit(cache=True, parallel=True)
def batch_observe(
    boards: np.ndarray, supers: np.ndarray, exact: bool, masks: np.ndarray, max_exp: np.ndarray,
    empty: np.ndarray, obs: np.ndarray, chunks: np.int64,
) -> None:
    """:func:`batch_observe_serial` in ``chunks`` contiguous chunks on numba's threads."""
    n = boards.shape[0]
    words = obs.reshape(n * 16).view(np.uint64)
    for c in prange(min(max(chunks, 1), max(n, 1))):
        lo, hi = _chunk(c, chunks, n)
        _observe_range(lo, hi, boards, supers, exact, masks, max_exp, empty, words)


@njit(cache=True)
def first_bad_action(
    actions: np.ndarray, masks: np.ndarray, control: np.ndarray, need_legal: bool
) -> tuple[np.int64, bool]:
    """Check ``actions`` [N] before a step: (first slot whose action is out of 0..3 or, when
    ``need_legal``, illegal by ``masks`` [N, 4] (slots not under STEP excepted), and whether it is
    out of range); (-1, False) when all are fine."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a > 3:
            return np.int64(i), True
        if need_legal and control[i] == STEP and not masks[i, a]:
            return np.int64(i), False
    return np.int64(-1), False


# --- whole-batch kernels of the searches and tests -------------------------------------------------


@njit(cache=True, parallel=True)
def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 4] bool, True where the action changes the board."""
    n = boards.shape[0]
    out = np.empty((n, 4), dtype=np.bool_)
    for i in prange(n):
        bits = legal_bits(boards[i])
        for a in range(4):
            out[i, a] = (bits >> a) & 1
    return out


@njit(cache=True, parallel=True)
def batch_move(boards: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[N] boards, [N] actions -> ([N] boards, [N] rewards); no spawn."""
    n = boards.shape[0]
    out = np.empty(n, dtype=np.uint64)
    rew = np.empty(n, dtype=np.int64)
    for i in prange(n):
        out[i], rew[i] = move(boards[i], actions[i])
    return out, rew


@njit(cache=True)
def _random_play_range(lo: int, hi: int, boards: np.ndarray, states: np.ndarray, p_two: float,
                       out: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    finals, scores, moves = out
    for i in range(lo, hi):
        finals[i], scores[i], moves[i] = random_play(boards[i], states[i : i + 1], p_two)


@njit(cache=True, parallel=True)
def batch_random_play(
    boards: np.ndarray, states: np.ndarray, p_two: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play every board to the end with uniformly random legal moves: (finals, scores, moves)."""
    n = boards.shape[0]
    out = (np.empty(n, np.uint64), np.empty(n, np.int64), np.empty(n, np.int64))
    for i in prange(n):
        _random_play_range(i, i + 1, boards, states, p_two, out)
    return out


@njit(cache=True)
def batch_random_play_serial(
    boards: np.ndarray, states: np.ndarray, p_two: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`batch_random_play` on the calling thread (the same games)."""
    out = (np.empty(boards.shape[0], np.uint64), np.empty(boards.shape[0], np.int64),
           np.empty(boards.shape[0], np.int64))
    _random_play_range(0, boards.shape[0], boards, states, p_two, out)
    return out


@njit(cache=True, parallel=True)
def batch_step(
    boards: np.ndarray,
    actions: np.ndarray,
    states: np.ndarray,
    p_two: float,
    rewards: np.ndarray,
    log_rewards: np.ndarray,
    illegal: np.ndarray,
    masks: np.ndarray,
    max_exp: np.ndarray,
    empty: np.ndarray,
    obs: np.ndarray,
) -> None:
    """Move + spawn + observe every board, in place, without options, counters or tiles past 32768
    (rules version 0's bitboard move).

    ``rewards`` and ``log_rewards`` [N] int64 are the raw score and log2 score gained, ``illegal``
    [N] bool marks actions that left the board as it was (nothing spawned); ``masks``, ``max_exp``,
    ``empty``, ``obs`` as in :func:`batch_env_step_serial`.
    """
    n = boards.shape[0]
    words = obs.reshape(n * 16).view(np.uint64)
    for i in prange(n):
        b = boards[i]
        nb, r = move(b, actions[i])
        if nb == b:
            rewards[i] = 0
            log_rewards[i] = 0
            illegal[i] = True
        else:
            rewards[i] = r
            log_rewards[i] = log2_reward(b, actions[i])
            illegal[i] = False
            nb = spawn(nb, states[i : i + 1], p_two)
        boards[i] = nb
        _observe_one(nb, np.int64(0), False, i, masks, max_exp, empty, words)
