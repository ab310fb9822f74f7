"""The web page's layout in a real headless Chromium at two window sizes (issue 17): the board's
four rows and columns are equal and stay so as tiles appear, a normal notice is not drawn in the
error colour (an error is), the agent help explains every setting (no bare nulls), and nothing
overflows the window. Screenshots are saved for a person to look at (``AI2048_SHOTS=DIR`` keeps them).

Needs Debian's ``chromium`` and ``chromium-driver`` and ``pip install selenium`` (no browser is
ever downloaded; the same setup as ``test_ui_browser.py``); skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install "
                                                             "selenium")
pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")
pytest.importorskip("uvicorn", reason="uvicorn comes with the 'ui' extra: pip install 'ai2048[ui]'")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if not (CHROMIUM and CHROMEDRIVER):
    pytest.skip(
        "headless browser test needs Debian's chromium and chromium-driver: apt-get install -y chromium "
        "chromium-driver",
        allow_module_level=True,
    )

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from _ui_server_helpers import serving  # noqa: E402
from ai2048.ui.server import create_app  # noqa: E402

ERROR_RED = "rgb(187, 51, 51)"  # .message.error in style.css
SIZES = [(1100, 900), (390, 800)]  # the desktop window, and a phone-sized one

GEOMETRY = """
const cells = [...document.querySelectorAll('#board .cell')].map(c => c.getBoundingClientRect());
const board = document.getElementById('board').getBoundingClientRect();
return {cells: cells.map(r => [r.left, r.top, r.width, r.height]),
        board: [board.left, board.top, board.width, board.height],
        inner: [window.innerWidth, window.innerHeight], scroll: document.documentElement.scrollWidth,
        color: getComputedStyle(document.getElementById('message')).color,
        message: document.getElementById('message').getBoundingClientRect().height,
        controls: document.getElementById('new').getBoundingClientRect().top};
"""


@pytest.fixture(scope="module")
def server_url():
    with serving(create_app(default_agent="random")) as url:
        yield url + "/"


@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def browser(request):
    from selenium.webdriver.chrome.service import Service

    width, height = request.param
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-dev-shm-usage",
                 "--hide-scrollbars", "--force-device-scale-factor=1",
                 f"--window-size={max(width, 500)},{height}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    # headless Chromium keeps windows at least 500 px wide: the viewport is set through DevTools
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
    yield driver, request.param
    driver.quit()


def _equal_grid(cells: list[list[float]]) -> None:
    """Four rows of four cells, every row and column the same size, cells square, within a pixel."""
    assert len(cells) == 16
    heights = [c[3] for c in cells]
    widths = [c[2] for c in cells]
    assert max(heights) - min(heights) <= 1.0, heights
    assert max(widths) - min(widths) <= 1.0, widths
    assert abs(heights[0] - widths[0]) <= 1.0
    rows = [cells[i * 4 : i * 4 + 4] for i in range(4)]
    assert all(max(c[1] for c in r) - min(c[1] for c in r) <= 0.5 for r in rows)  # a row's cells are aligned
    gaps = [rows[i + 1][0][1] - rows[i][0][1] for i in range(3)]
    assert max(gaps) - min(gaps) <= 1.0, gaps


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_layout__equal_rows_notice_colour_help_and_screenshots(server_url: str, browser, tmp_path) -> None:
    driver, (width, height) = browser
    shots = Path(os.environ.get("AI2048_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(driver, 60)
    driver.get(server_url)
    wait.until(lambda d: "new game, seed" in d.find_element(By.ID, "message").text)
    g = driver.execute_script(GEOMETRY)
    assert g["inner"][0] == width
    _equal_grid(g["cells"])
    assert g["scroll"] <= width  # nothing overflows sideways
    assert g["board"][0] >= 0 and g["board"][0] + g["board"][2] <= width
    assert g["color"] != ERROR_RED  # "new game, seed ..." is a notice
    first = g["cells"]

    # play on with the random agent: tiles of 1 to 4 digits must not change any row's height
    Select(driver.find_element(By.ID, "agent")).select_by_value("random")
    for _ in range(40):
        driver.find_element(By.ID, "ai").click()
    wait.until(lambda d: int(d.find_element(By.ID, "moves").text or 0) >= 20)
    g = driver.execute_script(GEOMETRY)
    _equal_grid(g["cells"])
    assert [c[3] for c in g["cells"]] == pytest.approx([c[3] for c in first], abs=0.5)
    driver.save_screenshot(str(shots / f"play-{width}x{height}.png"))
    assert _png_size(shots / f"play-{width}x{height}.png")[0] == width

    # expectimax's help explains each setting; no bare "null" for reward_weight
    Select(driver.find_element(By.ID, "agent")).select_by_value("expectimax")
    help_text = driver.find_element(By.ID, "agent-help").text
    assert "reward_weight = none" in help_text and "None means 0 with a built-in heuristic" in help_text
    names = [line.split()[0] for line in help_text.splitlines()[1:] if line.strip()]
    assert "evaluator" not in names and "data" not in names  # Python-only internals are not offered
    assert "=null" not in help_text.replace(" ", "")
    assert "depth = " in help_text and "[from: " in help_text
    g = driver.execute_script(GEOMETRY)
    assert g["scroll"] <= width
    driver.save_screenshot(str(shots / f"help-{width}x{height}.png"))

    # an error is drawn in red, and the message line keeps its height
    before, controls = g["message"], g["controls"]
    driver.find_element(By.ID, "config").send_keys("depth=99")
    driver.find_element(By.ID, "hint").click()
    wait.until(lambda d: "out of range" in d.find_element(By.ID, "message").text)
    g = driver.execute_script(GEOMETRY)
    assert g["color"] == ERROR_RED
    if width >= 1000:  # a two-line error fits the message line's room: the controls do not move
        assert g["controls"] == pytest.approx(controls, abs=0.5)
    driver.save_screenshot(str(shots / f"error-{width}x{height}.png"))
    driver.find_element(By.ID, "config").clear()
    driver.find_element(By.ID, "new").click()
    wait.until(lambda d: "new game, seed" in d.find_element(By.ID, "message").text)
    g = driver.execute_script(GEOMETRY)
    assert g["color"] != ERROR_RED and g["message"] == pytest.approx(before, abs=0.5)
