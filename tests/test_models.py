"""Shipped networks: the compact format, packing a run, the models API and CLI, ``--init``, bad input.

A tiny two-stage network ("0123,4567", a second stage from the 128 tile) is trained once per
module, evaluated at depth 1 and 2, and packed into a temporary models folder named by
``$AI2048_MODELS``, so nothing here depends on the network the package ships (the last test
checks that one, and skips while there is none).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ai2048
import ai2048.models as models
from ai2048.cli import main
from ai2048.cli.models import pack_parser
from ai2048.evaluate import evaluate
from ai2048.models import agreement, compact, store
from ai2048.models.card import check_same_run, evaluation
from ai2048.models.pack import pack
from ai2048.ntuple.network import Network, load_file
from ai2048.rules import RULES_VERSION
from ai2048.stats import tile_table_percent
from ai2048.train.ntuple import NTupleConfig, final_evaluation, run

TINY = NTupleConfig(
    patterns="0123,4567", games=300, chunk=100, checkpoint_every=100, seed=5, stages=(7,), tc=True, alpha=1.0
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A trained run, its two evaluation results and a models folder holding it packed as 'tiny'."""
    root = tmp_path_factory.mktemp("models")
    out = run(TINY, root / "run")
    agent1 = ai2048.make_agent("ntuple", weights=str(out))
    agent1.config = {"weights": str(out)}  # as `ai2048 eval ntuple --set weights=RUN` records it
    e1 = evaluate(agent1, games=20, seed=11, progress=False).save(root / "e1.json")
    agent2 = ai2048.make_agent("ntuple", weights=str(out), depth=2)
    agent2.config = {"weights": str(out), "depth": 2}
    e2 = evaluate(agent2, games=3, seed=12, progress=False).save(root / "e2.json")
    folder = root / "shipped"
    pack(out, "tiny", eval_1ply=e1, eval_depth2=e2, command="ai2048 train ntuple (test)", default=True,
         directory=folder, positions=2000, checks=1000, seed=3, log=lambda s: None)
    return {"run": out, "e1": e1, "e2": e2, "dir": folder, "root": root}


@pytest.fixture()
def shipped(trained: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$AI2048_MODELS`` pointing at the folder with 'tiny'."""
    monkeypatch.setenv(store.ENV, str(trained["dir"]))
    return trained["dir"]


def _sparse_network(seed: int, density: float, scale: float, fill: float = 0.0) -> Network:
    rng = np.random.default_rng(seed)
    net = Network("0123", stages=(9,))
    w = np.full(net.w.size, np.float32(fill))
    on = rng.random(w.size) < density
    w[on] = (rng.standard_normal(int(on.sum())) * scale).astype(np.float32)
    half = net.table
    copy = rng.random(half) < 0.7  # a promoted stage: mostly the stage below, changed in places
    w[half:][copy] = w[:half][copy] + (rng.standard_normal(int(copy.sum())) * scale / 50).astype(
        np.float32
    ) * (w[:half][copy] != fill)
    net.w[:] = w
    return net


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    density=st.sampled_from([0.0, 0.001, 0.2, 1.0]),
    scale=st.sampled_from([0.5, 300.0, 60000.0]),
    k=st.integers(-8, 2),
    fill=st.sampled_from([0.0, 0.0, 125.25]),
    codec=st.sampled_from(["lzma", "zlib"]),
)
def test_compact__decodes_to_the_stored_weights_within_half_a_step(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    density: float,
    scale: float,
    k: int,
    fill: float,
    codec: str,
) -> None:
    net = _sparse_network(seed, density, scale, fill)
    step = 2.0**k
    exact = np.random.default_rng(seed).choice(net.w.size, 5, replace=False)
    path = tmp_path_factory.mktemp("c") / "n.ntz"
    compact.write(path, net, step=step, fill=fill, exact=exact, codec=codec)
    header, w, boards, moves = compact.decode(path)
    assert np.array_equal(w, compact.stored_weights(net.w, 2, fill, step, exact))
    touched = net.w != np.float32(fill)
    assert np.all(w[~touched] == np.float32(fill))
    assert np.all(np.abs(w.astype(np.float64) - net.w) <= step / 2 + np.abs(net.w) * 2**-23)
    assert np.array_equal(w[exact], net.w[exact])
    nonzero = touched & (np.rint((net.w.astype(np.float64) - np.float32(fill)) / step) != 0)
    assert (
        header["touched"] == int(nonzero.sum()) and boards.size == moves.size == 0
    )  # codes of 0 are not stored


def test_compact__step_must_be_a_power_of_two_and_weights_finite() -> None:
    net = _sparse_network(0, 0.01, 10.0)
    with pytest.raises(ValueError, match="power of two"):
        compact.encode(net, step=0.3)
    net.w[7] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        compact.encode(net, step=1.0)


def test_agreement__feature_indices_sum_to_the_kernels_value(trained: dict[str, Path]) -> None:
    net, _ = load_file(trained["run"] / "weights.npz")
    boards = agreement.game_positions(net, 200, seed=1)
    assert len(set(boards.tolist())) > 150
    for b in boards:
        idx = agreement.feature_indices(net, int(b))
        assert float(net.w[idx].astype(np.float64).sum()) == pytest.approx(
            net.value(int(b)), rel=1e-5, abs=1e-3
        )
    assert np.array_equal(
        agreement.feature_indices_many(net, boards)[7], agreement.feature_indices(net, int(boards[7]))
    )
    slow = np.unique(np.concatenate([agreement.decision_indices(net, int(b)) for b in boards]))
    assert np.array_equal(agreement.hot_indices(net, boards), slow)


def test_pack__plays_the_float32_moves_on_1000_fresh_positions(
    trained: dict[str, Path], shipped: Path
) -> None:
    net, _ = load_file(trained["run"] / "weights.npz")
    small = models.load("tiny")
    assert small.patterns == net.patterns and small.stages == net.stages == (7,)
    assert np.any(net.w[net.table :] != 0), "the run should reach the second stage"
    boards = agreement.game_positions(net, 1000, seed=99)  # not the packer's seeds (3, 4, ...)
    assert np.array_equal(agreement.greedy_moves(small, boards), agreement.greedy_moves(net, boards))
    header, _, cb, cm = compact.decode(shipped / "tiny.ntz")
    assert cb.size == 1000 and np.array_equal(agreement.greedy_moves(small, cb), cm)


def test_pack__card_holds_what_the_issue_asks(trained: dict[str, Path], shipped: Path) -> None:
    card = models.card("tiny")
    assert card["file"]["sha256"] == compact.sha256_file(shipped / "tiny.ntz")
    assert card["network"]["patterns"] == "0123,4567" and card["network"]["stages"] == [7]
    assert card["rules"] == {"rules_version": RULES_VERSION, "p_two": 0.9, "max_tile": 131072}
    tr = card["training"]
    assert (
        tr["command"] == "ai2048 train ntuple (test)"
        and tr["seed"] == 5
        and tr["games"] == 300
        and tr["machine"]
    )
    ev1, ev2 = card["evaluation"]["1-ply"], card["evaluation"]["2-ply"]
    assert ev1["games"] == 20 and ev2["games"] == 3 and ev1["depth"] == 1 and ev2["depth"] == 2
    row = ev1["tiles"][-1]
    assert row["reach_lo"] <= row["reach"] <= row["reach_hi"] and ev1["moves_per_s"] > 0
    assert any("shown to it as two 16384s" in x for x in card["limits"])
    md = (shipped / "tiny.md").read_text()
    assert (
        md == models.markdown(card)
        and "shown to it as two 16384s" in md
        and f"{ev1['score_mean']:,.0f}" in md
        and "### 1-ply (depth 1): 20 games" in md and "### 2-ply (depth 2): 3 games" in md
    )


def test_models_api__names_make_and_the_default_agent(trained: dict[str, Path], shipped: Path) -> None:
    assert models.names() == ["tiny"] and models.default_name() == "tiny"
    agent = models.make("tiny", depth=1)
    board = int(agreement.game_positions(models.load("tiny"), 1, seed=5)[0])
    assert ai2048.legal_mask(board)[int(agent.act(board))]
    plain = ai2048.make_agent("ntuple")  # no weights: the default shipped network
    assert plain.net is agent.net and int(plain.act(board)) == int(agent.act(board))
    assert models.make(directory=shipped).net is agent.net


def test_models_api__nothing_shipped_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(store.ENV, str(tmp_path / "empty"))
    assert models.names() == []
    with pytest.raises(
        models.NoShippedModelError, match="no trained n-tuple network is shipped in .*weights=runs/tc"
    ):
        ai2048.make_agent("ntuple")
    with pytest.raises(models.UnknownModelError, match="no shipped network named 'x'.*available: none"):
        models.load("x")


def test_models_api__missing_name_lists_the_available_ones(shipped: Path) -> None:
    with pytest.raises(
        models.UnknownModelError, match=r"no shipped network named '4x6' in .*available: tiny"
    ):
        models.make("4x6")
    with pytest.raises(ValueError, match="model name '../etc' is not valid"):
        models.card("../etc")
    with pytest.raises(ValueError, match="not both"):
        ai2048.make_agent("ntuple", weights="run", model="tiny")


def _copy_model(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for suffix in (".ntz", ".json", ".md"):
        (dst / f"tiny{suffix}").write_bytes((src / f"tiny{suffix}").read_bytes())
    return dst / "tiny.ntz"


def test_bad_input__truncated_file_says_half_written(shipped: Path, tmp_path: Path) -> None:
    path = _copy_model(shipped, tmp_path / "m")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(models.ModelFileError, match=f"{path}.*truncated or half-written"):
        models.load("tiny", directory=tmp_path / "m")
    with pytest.raises(models.ModelFileError, match=f"{path}.*corrupt or truncated"):
        compact.load(path)  # no card: the container itself notices


def test_bad_input__flipped_byte_is_a_hash_mismatch(shipped: Path, tmp_path: Path) -> None:
    path = _copy_model(shipped, tmp_path / "m")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(
        models.ModelFileError, match=f"{path} is corrupt: its SHA-256 is [0-9a-f]{{64}}, its card says"
    ):
        models.load("tiny", directory=tmp_path / "m")
    with pytest.raises(models.ModelFileError, match="corrupt"):
        compact.load(path)  # without the card, zip's CRC-32 of each section notices


def _rewrite_header(path: Path, **changes: object) -> None:
    with np.load(path, allow_pickle=False) as z:
        sections = {k: z[k] for k in z.files}
    header = json.loads(str(sections["header"]))
    header.update(changes)
    sections["header"] = np.array(json.dumps(header))
    with open(path, "wb") as f:
        np.savez(f, **sections)


def test_bad_input__other_rules_version_or_patterns_name_the_file(shipped: Path, tmp_path: Path) -> None:
    path = _copy_model(shipped, tmp_path / "m")
    _rewrite_header(path, rules_version=RULES_VERSION + 1)
    with pytest.raises(
        models.ModelFileError, match=f"{path} holds a network trained under rules version {RULES_VERSION + 1}"
    ):
        compact.load(path)
    path = _copy_model(shipped, tmp_path / "n")
    card = json.loads((tmp_path / "n" / "tiny.json").read_text())
    card["network"]["patterns"] = "012345"  # a card from another pattern set beside this file
    (tmp_path / "n" / "tiny.json").write_text(json.dumps(card))
    with pytest.raises(
        models.ModelFileError, match="holds patterns 0123,4567 with stages \\[7\\], but its card says 012345"
    ):
        models.load("tiny", directory=tmp_path / "n")
    with pytest.raises(models.ModelFileError, match="holds patterns 0123,4567, not the requested 4567"):
        store.load_path(path, patterns="4567")


def test_bad_input__run_directory_from_other_rules_or_patterns(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    bad = tmp_path / "run"
    bad.mkdir()
    for f in ("config.json", "meta.json", "weights.npz"):
        (bad / f).write_bytes((trained["run"] / f).read_bytes())
    meta = json.loads((bad / "meta.json").read_text())
    (bad / "meta.json").write_text(json.dumps({**meta, "rules_version": RULES_VERSION + 1}))
    with pytest.raises(
        ValueError, match=f"meta.json says rules version {RULES_VERSION + 1}; this ai2048 plays version"
    ):
        pack(bad, "x", directory=tmp_path / "out", log=lambda s: None)
    (bad / "meta.json").write_text(json.dumps(meta))
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "patterns": "4x6"}))
    with pytest.raises(ValueError, match="holds patterns 0123,4567, not the requested 012345"):
        pack(bad, "x", directory=tmp_path / "out", log=lambda s: None)
    with pytest.raises(
        ValueError, match=f"evaluation result e1.json played weights {trained['run']}, not the run {bad}"
    ):
        pack(bad, "x", eval_1ply=trained["e1"], directory=tmp_path / "out", log=lambda s: None)
    for bad_step in (float("nan"), 0.3, -1.0):
        with pytest.raises(ValueError, match="step=.* must be .*a power of two"):
            pack(trained["run"], "x", step=bad_step, directory=tmp_path / "out", log=lambda s: None)
    with pytest.raises(ValueError, match="wall_seconds=inf must be a finite number"):
        pack(trained["run"], "x", wall_seconds=float("inf"), directory=tmp_path / "out", log=lambda s: None)
    with pytest.raises(ValueError, match="was played at depth 1, not depth 2"):
        pack(trained["run"], "x", eval_depth2=trained["e1"], directory=tmp_path / "out", log=lambda s: None)
    assert not (tmp_path / "out" / "x.ntz").exists()


def test_card__reads_train_eval_json(trained: dict[str, Path], tmp_path: Path) -> None:
    """A run's ``eval.json`` (``train ntuple --eval-games``: ``ai2048 eval``'s result, naming the run)."""
    net, _ = load_file(trained["run"] / "weights.npz")
    res = final_evaluation(replace(TINY, eval_games=30), net, trained["run"])
    assert res is not None
    res.save(tmp_path / "eval.json")
    ev = evaluation(tmp_path / "eval.json", depth=1)
    s = res.summary()
    assert ev["games"] == 30 and ev["score_mean"] == s["score_mean"]
    assert [r["reach"] for r in ev["tiles"]] == pytest.approx([100 * r["reach_rate"] for r in s["tiles"]])
    check_same_run(ev, trained["run"])  # it names the run's weights


def test_card__reads_an_older_runs_eval_json(tmp_path: Path) -> None:
    """The 1-ply table runs wrote as ``eval.json`` before the trainer evaluated with ``ai2048 eval``."""
    exponents = [7, 8, 8, 9]
    old = {"games": 4, "seed": 2, "depth": 1, "score_mean": 1500.0, "score_sem": 120.0,
           "score_median": 1400.0, "score_max": 2100, "moves_mean": 150.0, "moves_per_s": 1e6,
           "seconds": 0.001,
           "tiles": tile_table_percent(np.array(exponents)), "max_exponents": exponents,
           "scores": [1100, 1300, 1500, 2100]}
    (tmp_path / "eval.json").write_text(json.dumps(old))
    ev = evaluation(tmp_path / "eval.json", depth=1)
    assert (ev["games"], ev["score_mean"], ev["score_se"], ev["weights"]) == (4, 1500.0, 120.0, None)
    assert {r["tile"]: r["reach"] for r in ev["tiles"]} == {128: 100.0, 256: 75.0, 512: 25.0}


def test_cli__lists_shows_and_packs(trained: dict[str, Path], shipped: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "tiny (default)" in out and "0123,4567" in out
    assert "2-ply: games" in out and "1-ply: games" in out
    assert "N-ply: the ntuple agent at --set depth=N" in out
    assert "depth 2" not in out
    assert main(["models", "tiny"]) == 0
    assert "# Model card: `tiny`" in capsys.readouterr().out
    assert main(["models", "tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "tiny"
    assert main(["models", "nope"]) == 2
    assert "available: tiny" in capsys.readouterr().err
    args = [
        "models",
        "pack",
        str(trained["run"]),
        "--name",
        "again",
        "--dir",
        str(tmp_path),
        "--codec",
        "lzma",
        "--positions",
        "500",
        "--checks",
        "200",
        "--eval-1ply",
        str(trained["e1"]),
        "--eval-2ply",
        str(trained["e2"]),
    ]
    assert main(args) == 0
    assert "packed again" in capsys.readouterr().out
    again = models.card("again", tmp_path)
    assert models.names(tmp_path) == ["again"] and again["network"]["codec"] == "lzma"
    assert list(again["evaluation"]) == ["1-ply", "2-ply"]
    assert "### 2-ply (depth 2): 3 games" in (tmp_path / "again.md").read_text()
    old_flag = pack_parser().parse_args(["r", "--name", "n", "--eval-depth2", "e.json"])
    assert old_flag.eval_2ply == Path("e.json")  # the flag's old name still works


def _old_card_folder(shipped: Path, folder: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """``folder`` holding 'tiny' as ``old`` (its network file as it is), its card changed by ``edit``."""
    folder.mkdir()
    card = json.loads((shipped / "tiny.json").read_text())
    card["name"], card["file"]["name"] = "old", "old.ntz"
    edit(card)
    (folder / "old.json").write_text(json.dumps(card, indent=2))
    (folder / "old.ntz").write_bytes((shipped / "tiny.ntz").read_bytes())
    return folder


def _depth_key(card: dict[str, Any]) -> None:
    """The card as packs wrote it before the tables said the ply: the 2-ply table under ``depth 2``."""
    card["evaluation"] = {"depth 2" if k == "2-ply" else k: v for k, v in card["evaluation"].items()}


def test_card__an_older_card_naming_its_table_depth_2_loads_and_says_2_ply(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _old_card_folder(shipped, tmp_path / "m", _depth_key)
    card = models.card("old", folder)
    assert "depth 2" in card["evaluation"] and "2-ply" not in card["evaluation"]
    assert models.load("old", folder).w.size > 0  # its file still matches its checksum
    ev2 = card["evaluation"]["depth 2"]
    assert models.headline(card)["2-ply"]["games"] == ev2["games"] == 3
    assert f"### 2-ply (depth 2): {ev2['games']} games" in models.markdown(card)
    assert main(["models", "--dir", str(folder)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "0123,4567" in line)
    assert f"{ev2['score_mean']:,.0f}" in row  # the 2-ply columns are filled from the old key


def test_card__one_table_under_both_its_old_and_new_key_is_an_error(shipped: Path, tmp_path: Path) -> None:
    folder = _old_card_folder(shipped, tmp_path / "m",
                              lambda c: c["evaluation"].update({"depth 2": c["evaluation"]["2-ply"]}))
    with pytest.raises(ValueError, match="evaluation 'depth 2' is the same table as '2-ply'"):
        models.markdown(models.card("old", folder))


def test_train_init__starts_from_the_shipped_weights(
    trained: dict[str, Path], shipped: Path, tmp_path: Path
) -> None:
    ship = models.load("tiny")
    cfg = replace(TINY, games=1, chunk=1, checkpoint_every=1, init="shipped")
    w = load_file(run(cfg, tmp_path / "a") / "weights.npz")[0].w
    on = ship.w != 0
    assert np.mean(w[on] == ship.w[on]) > 0.6  # one game moves only the weights it visits
    assert json.loads((tmp_path / "a" / "config.json").read_text())["init"] == "shipped"
    fresh = load_file(run(replace(cfg, init=""), tmp_path / "b") / "weights.npz")[0].w
    assert np.mean(fresh[on] == ship.w[on]) < 0.1


def test_pack__a_run_from_init_shipped_records_its_parts(
    trained: dict[str, Path], shipped: Path, tmp_path: Path
) -> None:
    """Packing a continued run sums the parts (games, kernel and wall seconds) and lists each one."""
    before = models.card("tiny")["training"]
    cfg = replace(TINY, games=200, init="shipped", tc=False, alpha=0.005)
    out = run(cfg, tmp_path / "more")
    card = pack(out, "tiny2", directory=shipped, wall_seconds=60.0, positions=2000, checks=1000, seed=3,
                log=lambda s: None)
    tr = card["training"]
    assert [p["games"] for p in tr["parts"]] == [before["games"], 200]
    assert tr["games"] == before["games"] + 200 and tr["init"] == "tiny" and tr["parts"][1]["init"] == "tiny"
    assert tr["train_seconds"] == pytest.approx(before["train_seconds"] + tr["parts"][1]["train_seconds"])
    assert tr["wall_seconds"] is None  # the first part's wall time was not given
    assert tr["config"]["alpha"] == 0.005 and tr["parts"][0]["config"]["tc"] is True
    text = (shipped / "tiny2.md").read_text()
    assert "## Training parts" in text and "| 2 | tiny |" in text and "--alpha 0.005" in text
    # a third part, started from the second by name, extends the same list
    out3 = run(replace(cfg, games=100, init="tiny2"), tmp_path / "more3")
    card3 = pack(out3, "tiny3", directory=shipped, positions=2000, checks=1000, seed=3, log=lambda s: None)
    tr3 = card3["training"]
    assert [p["games"] for p in tr3["parts"]] == [before["games"], 200, 100]
    assert tr3["games"] == tr["games"] + 100
    for name in ("tiny2", "tiny3"):
        for suffix in (".json", ".md", compact.SUFFIX):
            (shipped / f"{name}{suffix}").unlink()


def test_train_init__adds_a_stage_above_the_shipped_ones(shipped: Path, tmp_path: Path) -> None:
    """--init with more --stages than the source: its stages are copied, the new one starts unopened
    (promoted from below when its tile first appears), and a run that drops a stage is refused."""
    ship = models.load("tiny")
    cfg = replace(TINY, stages=(7, 15), games=1, chunk=1, checkpoint_every=1, init="tiny")
    net, arrays = load_file(run(cfg, tmp_path / "a") / "weights.npz", extra=("train_ready",))
    table = ship.w.size // 2
    on = ship.w != 0
    assert np.mean(net.w[:2 * table][on] == ship.w[on]) > 0.6
    assert list(arrays["train_ready"]) == [1, 1, 0] and not np.any(net.w[2 * table:])
    with pytest.raises(ValueError, match=r"--stages may add stages above the source's"):
        run(replace(TINY, stages=(6, 7), init="tiny"), tmp_path / "b")


def test_train_init__mismatch_is_an_error_before_any_work(shipped: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"shipped network 'tiny' has \[7\], the config says \[\]"):
        run(replace(TINY, stages=(), init="tiny"), tmp_path / "a")
    with pytest.raises(
        ValueError, match="patterns: shipped network 'tiny' has 0123,4567, the config says 012345"
    ):
        run(replace(TINY, patterns="012345", init="shipped"), tmp_path / "b")
    with pytest.raises(ValueError, match="neither 'shipped', a shipped network \\(available: tiny\\)"):
        run(replace(TINY, init="no-such"), tmp_path / "c")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_shipped_network__fits_64_mib_and_replays_its_checks() -> None:
    """The network the package ships (skipped until one is packed into ai2048/models/networks)."""
    found = store.names(store.PACKAGE_DIR)
    if not found:
        pytest.skip("no network is shipped in ai2048/models/networks yet")
    name = store.default_name(store.PACKAGE_DIR)
    card = store.card(name, store.PACKAGE_DIR)
    assert card["file"]["bytes"] <= 64 * 2**20
    t0 = time.perf_counter()
    header, w, boards, moves = compact.decode(
        store.PACKAGE_DIR / card["file"]["name"], card["file"]["sha256"], card["file"]["bytes"]
    )
    print(f"decoded {name} in {time.perf_counter() - t0:.2f} s")
    net = Network(header["patterns"], stages=header["stages"], kind=header["kind"], weights=w)
    assert boards.size >= 1000 and np.array_equal(agreement.greedy_moves(net, boards), moves)
    assert card["evaluation"] and any("32768" in x for x in card["limits"])


def test_shipped_network__its_markdown_is_its_card_and_names_the_ply() -> None:
    """The shipped ``NAME.md`` is :func:`models.markdown` of its JSON, tables headed by their ply."""
    found = store.names(store.PACKAGE_DIR)
    if not found:
        pytest.skip("no network is shipped in ai2048/models/networks yet")
    for name in found:
        card = store.card(name, store.PACKAGE_DIR)
        md = (store.PACKAGE_DIR / f"{name}.md").read_text()
        assert md == models.markdown(card)
        assert all(k.endswith("-ply") for k in card["evaluation"]) and "depth 2:" not in md


def test_cli_watch__depth_2_plays_the_default_shipped_network(
    shipped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "ntuple", "--set", "depth=2", "--seed", "1", "--max-moves", "5"]) == 0
    assert "moves 5" in capsys.readouterr().out


def _reached_past_32768(card: dict[str, Any]) -> None:
    """The 2-ply table of a network whose games reached 65536 (one of its 3) and 131072 (none shown)."""
    rows = card["evaluation"]["2-ply"]["tiles"]
    rows.append({"tile": 32768, "reached": 1, "reach": 33.3, "reach_lo": 6.1, "reach_hi": 79.2})
    rows.append({"tile": 65536, "reached": 1, "reach": 33.3, "reach_lo": 6.1, "reach_hi": 79.2})


def test_cli_models__lists_65536_where_a_network_reached_it(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "2-ply: games" in line)
    assert "32768" in header and "65536" not in header  # 'tiny' reached neither: no column for it
    folder = _old_card_folder(shipped, tmp_path / "m", _reached_past_32768)
    card = models.card("old", folder)
    assert models.headline(card)["2-ply"]["65536"] == 33.3 and models.headline(card)["2-ply"]["131072"] == 0.0
    assert "| 65536 | 1 | 33.3 | 6.1 – 79.2 |" in models.markdown(card)
    assert main(["models", "--dir", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "2-ply: games" in line)
    assert "65536" in header and "131072" not in header
    row = next(line for line in lines if "0123,4567" in line)
    assert row.count("33.3%") == 2  # 32768 and 65536
