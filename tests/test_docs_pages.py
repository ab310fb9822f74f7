"""The guide pages say what is true now: no run log in them, and the README's claims match the code.

A guide page (README.md and docs/*.md, except the lab notes ``docs/*-lab.md`` and ``docs/history.md``)
holds one current figure per row with its command, machine and load. When it was measured (a UTC
clock time, an ISO date), on which commit, and who ran it belong in the lab notes beside the guide;
this test fails when one of them creeps back. Link targets are not read (a guide may link to a dated
section of a lab page). Nothing is imported: the code's values are read with :mod:`ast`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ai2048"

LOG_WORDING: dict[str, re.Pattern[str]] = {
    "a UTC clock time": re.compile(r"\b\d{1,2}:\d{2}\b[^\n]{0,14}?\bUTC\b|\bUTC\b"),
    "a date": re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b"),
    # 7 to 40 hex digits with a digit and a letter among them, alone (backticked, in brackets, ...)
    "a commit hash": re.compile(r"(?<![\w/#.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])"),
    "the wording of a work log": re.compile(
        r"\b(?:this|that|other|earlier|first|\w+th) sessions?\b|\bsession by session\b|\bhelpers?\b", re.I),
}

SEED_COMMITS: dict[str, str] = {
    "22de602": "seed 000's early history, where its Small_QNet lives (docs/deeprl.md)",
    "512f57a": "seed 003's network.py, the last version with win_tile and game_type (docs/deeprl.md)",
}
"""Commits of the seed projects the guides cite as sources: another repository's history, not a
record of a run here."""

LINK_TARGET = re.compile(r"\]\([^)]*\)")


def guide_pages(root: Path = ROOT) -> list[Path]:
    """README.md and every docs page that is not a lab page or the history page."""
    docs = (p for p in (root / "docs").glob("*.md") if not p.stem.endswith("-lab") and p.stem != "history")
    return [root / "README.md", *sorted(docs)]


def log_wording(text: str, allowed: dict[str, str] = SEED_COMMITS) -> list[tuple[int, str, str]]:
    """``(line, what, text)`` for each UTC stamp, date, commit hash or work-log wording in ``text``,
    link targets skipped and the commits in ``allowed`` let through."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        shown = LINK_TARGET.sub("]()", line)
        for what, pattern in LOG_WORDING.items():
            hits = [m.group(0) for m in pattern.finditer(shown)]
            found += [(number, what, hit) for hit in hits if hit not in allowed]
    return found


@pytest.mark.parametrize("page", guide_pages(), ids=lambda p: p.name)
def test_guide_page__holds_no_run_log(page):
    found = log_wording(page.read_text(encoding="utf-8"))
    where = [f"{page.name}:{n}: {what}: {text!r}" for n, what, text in found]
    assert not where, "move these to the page's lab notes (docs/*-lab.md):\n" + "\n".join(where)


def test_guide_pages__cited_seed_commits_are_still_cited():
    """An excuse for a hash that no guide cites any more must go too."""
    text = "".join(p.read_text(encoding="utf-8") for p in guide_pages())
    assert not [c for c in SEED_COMMITS if c not in text]


def test_guide_pages__are_the_readme_and_docs_without_lab_notes():
    names = {p.name for p in guide_pages()}
    assert {"README.md", "tables.md", "engine.md", "architecture.md"} <= names
    assert not names & {"tables-lab.md", "engine-lab.md", "history.md"}


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("Measured 12:04 UTC on the AMD EPYC VM.", "a UTC clock time"),
        ("beside niced tests; 18:20–18:39 UTC, load 2", "a UTC clock time"),
        ("## Strength (measured 2026-11-27)", "a date"),
        ("the code of the commit that recorded it (f9b7bd0)", "a commit hash"),
        ("code of `1449e8c`, load 1", "a commit hash"),
        ("git show 6b42544:src/ai2048/search/games.py", "a commit hash"),
        ("Measured in this session, load 2", "the wording of a work log"),
        ("beside niced helpers' tests", "the wording of a work log"),
        ("Every measurement, session by session, is in the lab notes.", "the wording of a work log"),
    ],
)
def test_log_wording__finds_each_kind(line, what):
    assert [w for _, w, _ in log_wording(line)] == [what]


@pytest.mark.parametrize(
    "line",
    [
        "`ai2048 eval endgame --games 300 --seed 1110000 --workers 2` (3-ply): 46.7%",
        "| `442-512` | 512 | 68,216,198 | 509 | 781 MiB | 47 |",
        "the SHA-256 digest, a 0xF wall nibble, 12.5 s, 1,024 envs, p_two = 0.9, deadbeef",
        "see the [lab notes](tables-lab.md#2026-11-27-what-moved-the-rate-the-late-game-pool)",
        "Each WebSocket session plays its own game; `--session-ttl` 300",
        "`small_qnet` (seed 000's early history, commit `22de602`)",
    ],
)
def test_log_wording__lets_figures_links_and_cited_seed_commits_through(line):
    assert log_wording(line) == []


# -- the README's claims against the code -----------------------------------------------------------


def _constant(path: Path, name: str) -> object:
    """The literal value of module-level constant ``name`` in ``path``, read without importing it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(getattr(t, "id", None) == name for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} defines no constant {name}")


def test_readme__parallel_default_names_the_code_threshold():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    threshold = _constant(SRC / "envs" / "batch.py", "PARALLEL_MIN_GAMES")
    sentence = readme.split("also takes `parallel`", 1)[1].split(")", 1)[0]
    assert f"from {threshold:,} envs" in sentence and "timed" in sentence


def test_readme__names_the_shipped_networks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shipped = sorted(p.stem for p in (SRC / "models" / "networks").glob("*.ntz"))
    assert shipped, "no shipped network: the README says the package ships one"
    section = readme.split("## Shipped networks", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{name}`" in section for name in shipped)
    assert "empty until" not in section
