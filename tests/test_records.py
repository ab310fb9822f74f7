"""Game records: built from play or from actions, saved, loaded and replayed exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import Action, Game, IllegalMoveError, encode, move
from ai2048.records import (
    GameRecord,
    GameRecorder,
    RecordError,
    actions_to_str,
    max_tiles,
    record_game,
    replay_actions,
    str_to_actions,
)


def first_legal(board: int) -> Action:
    return Game(board=board).legal_actions()[0]


def cycling_policy():
    """Deterministic and legal: the first legal action after the previous one, clockwise."""
    last = [0]

    def act(board: int) -> Action:
        legal = Game(board=board).legal_actions()
        for k in range(4):
            a = Action((last[0] + 1 + k) % 4)
            if a in legal:
                last[0] = int(a)
                return a
        raise AssertionError("no legal move")

    return act


@pytest.fixture(scope="module")
def record() -> GameRecord:
    return record_game(cycling_policy(), seed=11, agent_name="cycle", agent_config={"k": 1}, meta={"game": 3})


def test_record_game__matches_a_game_played_by_hand(record: GameRecord) -> None:
    g = Game(seed=11)
    assert g.board == record.start_board
    for a, score in zip(record.actions, record.scores, strict=True):
        g.step(a)
        assert g.score == score
    assert g.is_over
    assert g.board == record.final_board
    assert record.final_score == g.score and record.max_tile == g.max_tile and record.moves == g.moves


def test_record_game__spawns_are_the_tiles_that_appeared(record: GameRecord) -> None:
    g = Game(seed=11)
    for a, (cell, e) in zip(record.actions, record.spawns, strict=True):
        after, _ = move(g.board, a)
        g.step(a)
        assert g.board == after | (e << (4 * cell))
        assert (after >> (4 * cell)) & 0xF == 0
        assert e in (1, 2)


def test_from_actions__rebuilds_the_same_record(record: GameRecord) -> None:
    again = GameRecord.from_actions(11, actions_to_str(record.actions), agent="cycle", agent_config={"k": 1},
                                    meta={"game": 3})
    assert again == record


def test_save_load__round_trip(record: GameRecord, tmp_path) -> None:
    path = record.save(tmp_path / "sub" / "game.json")
    loaded = GameRecord.load(path)
    assert loaded == record
    assert loaded.source == str(path)
    d = json.loads(path.read_text())
    assert d["format"] == "ai2048.game-record" and d["version"] == 1
    assert d["final_score"] == record.final_score and d["max_tile"] == record.max_tile
    assert not list(tmp_path.glob("sub/.*tmp"))


def test_replay__returns_every_board_and_score(record: GameRecord) -> None:
    t = record.replay()
    g = Game(seed=11)
    assert int(t.boards[0]) == g.board
    for i, a in enumerate(record.actions):
        g.step(a)
        assert int(t.boards[i + 1]) == g.board
        assert int(t.scores[i + 1]) == g.score
        assert int(t.max_tiles[i + 1]) == g.max_tile
    assert t.spawns() == record.spawns


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), p_two=st.sampled_from([0.9, 0.5, 1.0]), n=st.integers(0, 60))
def test_replay_actions__equals_game(seed: int, p_two: float, n: int) -> None:
    g = Game(seed=seed, p_two=p_two)
    boards = [g.board]
    for _ in range(n):
        if g.is_over:
            break
        g.step(first_legal(g.board))
        boards.append(g.board)
    rec = GameRecorder(seed, p_two)
    for b in boards[:-1]:
        rec.step(first_legal(b))
    t = replay_actions(seed, rec.actions, p_two)
    assert [int(b) for b in t.boards] == boards
    assert rec.record().replay().scores[-1] == g.score


def test_replay__tampered_spawn_names_file_and_move(record: GameRecord, tmp_path) -> None:
    path = record.save(tmp_path / "game.json")
    d = json.loads(path.read_text())
    toks = d["spawns"].split()
    cell, e = toks[4]
    toks[4] = cell + ("2" if e == "1" else "1")
    d["spawns"] = " ".join(toks)
    path.write_text(json.dumps(d))
    with pytest.raises(RecordError, match=r"game\.json does not replay at move 5 .*spawn"):
        GameRecord.load(path).replay()


def test_replay__tampered_score_names_move(record: GameRecord, tmp_path) -> None:
    d = record.to_dict()
    d["scores"][9] += 4
    with pytest.raises(RecordError, match="at move 10 .*score"):
        GameRecord.from_dict(d, source="x.json").replay()


def test_replay__swapped_action_is_caught(record: GameRecord) -> None:
    d = record.to_dict()
    acts = list(d["actions"])
    i = 7
    acts[i] = next(c for c in "urdl" if c != acts[i])
    d["actions"] = "".join(acts)
    with pytest.raises(RecordError, match=r"x\.json does not replay at move (8|9|10)"):
        GameRecord.from_dict(d, source="x.json").replay()


def test_replay__wrong_seed_is_caught(record: GameRecord) -> None:
    d = record.to_dict()
    d["seed"] = 12
    with pytest.raises(RecordError, match="start board"):
        GameRecord.from_dict(d).replay()


def test_replay__tampered_final_board_is_caught(record: GameRecord) -> None:
    d = record.to_dict()
    d["final_board"] = "0x0000000000000001"
    with pytest.raises(RecordError, match="final board"):
        GameRecord.from_dict(d).replay()


def test_replay__other_rules_version_is_refused(record: GameRecord) -> None:
    d = record.to_dict()
    d["rules_version"] = 99
    with pytest.raises(RecordError, match="rules version 99"):
        GameRecord.from_dict(d).replay()


def test_load__missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.json does not exist"):
        GameRecord.load(tmp_path / "nope.json")


def test_load__not_json(tmp_path) -> None:
    p = tmp_path / "bad.json"
    p.write_text('{"format": "ai2048.game-rec')
    with pytest.raises(RecordError, match="bad.json is not valid JSON"):
        GameRecord.load(p)


def test_load__foreign_json(tmp_path) -> None:
    p = tmp_path / "metrics.json"
    p.write_text(json.dumps({"games": 3}))
    with pytest.raises(RecordError, match="metrics.json is not an ai2048 game record"):
        GameRecord.load(p)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("actions", "uuxz", "position 2"),
        ("spawns", "a1 b", "spawn token"),
        ("seed", "seven", "seed='seven' must be a whole number"),
        ("start_board", "0xzz", "corrupt"),
        ("version", 7, "record version 7"),
    ],
)
def test_load__corrupt_fields(record: GameRecord, tmp_path, key: str, value, message: str) -> None:
    d = record.to_dict()
    d[key] = value
    p = tmp_path / "c.json"
    p.write_text(json.dumps(d))
    with pytest.raises(RecordError, match=message):
        GameRecord.load(p)


def test_load__missing_field(record: GameRecord) -> None:
    d = record.to_dict()
    del d["scores"]
    with pytest.raises(RecordError, match="no 'scores' field"):
        GameRecord.from_dict(d, source="r.json")


def test_recorder__undo_restores_board_score_and_random_stream() -> None:
    rec = GameRecorder(seed=3)
    a = first_legal(rec.board)
    rec.step(a)
    after_first = (rec.board, rec.game.score)
    b = first_legal(rec.board)
    rec.step(b)
    after_second = (rec.board, rec.game.score)
    assert rec.undo()
    assert (rec.board, rec.game.score) == after_first
    rec.step(b)
    assert (rec.board, rec.game.score) == after_second
    assert rec.undo() and rec.undo() and not rec.undo()
    assert rec.record().moves == 0
    rec.step(a)
    assert rec.record().replay().boards[-1] == rec.board


def test_recorder__illegal_move_raises_and_keeps_state() -> None:
    rec = GameRecorder(seed=10)  # seed 10 starts with UP illegal
    with pytest.raises(IllegalMoveError):
        rec.step(Action.UP)
    assert rec.record().moves == 0


def test_record_game__illegal_agent_move_names_agent_and_board() -> None:
    with pytest.raises(ValueError, match=r"agent 'stubborn' chose .* on board 0x"):
        record_game(lambda b: Action.UP, seed=10, agent_name="stubborn")


def test_record_game__max_moves_and_none_seed() -> None:
    r = record_game(first_legal, seed=None, max_moves=5)
    assert r.moves == 5 and isinstance(r.seed, int)
    assert r.replay().scores[-1] == r.final_score


def test_actions_str__round_trip_and_bad_letter() -> None:
    acts = [Action.UP, Action.RIGHT, Action.DOWN, Action.LEFT, 0]
    assert actions_to_str(acts) == "urdlu"
    assert str_to_actions("urdlu").tolist() == [0, 1, 2, 3, 0]
    with pytest.raises(ValueError, match="'x' at position 1"):
        str_to_actions("uxd")


def test_replay_actions__illegal_action_names_the_move() -> None:
    assert Action.UP not in Game(seed=10).legal_actions()
    with pytest.raises(ValueError, match=r"move 1 \(UP\) is illegal"):
        replay_actions(10, [Action.UP])


def test_max_tiles__values() -> None:
    boards = np.array([0, encode([0] * 15 + [11]), encode([3, 1] + [0] * 14)], dtype=np.uint64)
    assert max_tiles(boards).tolist() == [0, 2048, 8]


def test_replay__out_of_range_action_is_corrupt(record: GameRecord) -> None:
    bad = GameRecord(**{**record.__dict__, "actions": [*record.actions[:2], 7, *record.actions[3:]]})
    with pytest.raises(RecordError, match="action 7 at move 3 is not 0..3"):
        bad.replay()
