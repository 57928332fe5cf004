"""The page in a real headless Chromium (Debian's chromium and chromedriver, driven by Selenium): play both games by clicking, watch, replay, errors.

The server is ``python -m grinch_env.web --port 0 --log-dir DIR`` in a subprocess
(it prints the free port it got; DIR holds a small tournament's game logs) and is
stopped at the end.  Screenshots go to a pytest temporary directory and are
checked; with ``GRINCH_UPDATE_SCREENSHOTS=1`` they go to ``docs/images/web_*.png``
(shown in ``docs/web.md``) instead.
"""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from grinch_env.aec import log_to_json, replay_log
from grinch_env.evaluation.evaluate import evaluate
from grinch_env.games import get_game

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
VIEWPORT = (1400, 900)
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"  # Debian's, installed by .ci/run: Selenium Manager downloads nothing


UPDATE_SCREENSHOTS = os.environ.get("GRINCH_UPDATE_SCREENSHOTS", "") not in ("", "0")


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    """Return a small Gnoming tournament's result and the directory of its game logs."""
    log_dir = tmp_path_factory.mktemp("tournament_logs")
    return evaluate(["greedy", "random"], 3, 2, seed=5, game="gnoming", game_options={"max_turns_per_player": 10}, log_dir=log_dir), log_dir


@pytest.fixture(scope="module")
def server(tournament):
    """Yield the page's address; the server runs on a free port of 127.0.0.1 and is stopped afterwards."""
    proc = subprocess.Popen([sys.executable, "-m", "grinch_env.web", "--port", "0", "--log-dir", str(tournament[1])],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving on http://127.0.0.1:"), line
        yield line.split()[2]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False})
    driver.screenshot_dir = IMAGES if UPDATE_SCREENSHOTS else tmp_path_factory.mktemp("screenshots")  # the committed pictures change only on request
    yield driver
    driver.quit()


def wait(driver, condition, timeout=30):
    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: condition(d))


def body(driver, key):
    return driver.find_element(By.TAG_NAME, "body").get_attribute(f"data-{key}")


def open_page(driver, url, tab):
    driver.get(url)
    wait(driver, lambda d: body(d, "ready") == "1")
    driver.find_element(By.ID, f"tab-{tab}").click()


def fill(driver, fields):
    for name, value in fields.items():
        element = driver.find_element(By.ID, name)
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)


PAGE_STATE = """return {views: document.body.dataset.views, done: document.body.dataset.done,
    error: document.getElementById("error").classList.contains("hidden") ? "" : document.getElementById("error").textContent};"""


def submit(driver, button):
    """Click a button that asks the server for a new view; return when the page shows it (or an error)."""
    before = driver.execute_script(PAGE_STATE)["views"]
    driver.find_element(By.ID, button).click() if isinstance(button, str) else button.click()
    return wait(driver, lambda d: (lambda s: s if s["views"] != before or s["error"] else None)(d.execute_script(PAGE_STATE)))


def error(driver):
    box = driver.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def api(url, path):
    with urllib.request.urlopen(url.rstrip("/") + path) as res:
        return json.loads(res.read())


def screenshot(driver, name):
    """Save the page as <name>.png (in docs/images with GRINCH_UPDATE_SCREENSHOTS=1) and check it: a PNG of the viewport's size with a real picture on it."""
    path = driver.screenshot_dir / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "header")).perform()  # no button under the mouse
    assert driver.save_screenshot(str(path))
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == VIEWPORT
        pixels = np.asarray(image.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50 and pixels.std() > 20  # text, boxes and colours, not a blank page


def scores(driver):
    return [int(td.text) for td in driver.find_elements(By.CSS_SELECTOR, "#scores td.num")]


def click_moves(driver, choose, shot_at=None, shot=None):
    """Click a legal move each turn (``choose(turn, buttons)``) until the game ends; return the number of clicks."""
    clicks = 0
    while driver.execute_script(PAGE_STATE)["done"] != "1":
        buttons = driver.find_elements(By.CSS_SELECTOR, "#moves button.move")
        assert buttons and driver.find_element(By.ID, "banner").text.startswith("Your turn: ")
        if clicks == shot_at:
            screenshot(driver, shot)
        try:
            assert not submit(driver, choose(clicks, buttons))["error"]
        except StaleElementReferenceException:  # the page redrew the buttons under the click: look again
            continue
        clicks += 1
    return clicks


def test_play_grinch_by_clicking_to_the_final_scores(server, browser):
    open_page(browser, server, "play")
    fill(browser, {"play-game": "grinch", "play-players": "3", "play-seat": "0", "play-opponents": "greedy,random",
                   "play-options": "num_rounds=1", "play-seed": "7"})
    submit(browser, "play-start")
    assert browser.find_element(By.ID, "banner").text == "Your turn: draw a card (1 of 2)"
    key = body(browser, "session")
    legal = api(server, f"/api/s/{key}")["legal"]
    assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")] == [m["label"] for m in legal]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#hand .chip")) == 2  # the two cards dealt; the others' hands are ?? in the table
    # Draw from a discard pile where one is offered (the last button), else the first move.
    clicks = click_moves(browser, lambda turn, buttons: buttons[-1] if turn < 6 else buttons[0], shot_at=4, shot="web_play_grinch")
    assert clicks == 10  # the Grinch's round: 3 turns of 2 draws and a discard, then one score
    log = json.loads(urllib.request.urlopen(f"{server}api/s/{key}/log").read())
    final = replay_log(get_game("grinch").raw_env, log["seed"], [tuple(e) for e in log["log"]], **log["env_kwargs"]).game
    assert scores(browser) == final.totals
    banner = browser.find_element(By.ID, "banner").text
    assert banner.endswith("(highest total wins)") and ("win" in banner if 0 in final.winners() else "Winner: seat" in banner)
    assert not browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
    screenshot(browser, "web_play_final")


def test_play_gnoming_by_clicking_to_the_final_scores(server, browser):
    open_page(browser, server, "play")
    fill(browser, {"play-game": "gnoming", "play-players": "3", "play-seat": "1", "play-opponents": "random",
                   "play-options": "max_turns_per_player=10", "play-seed": "4"})
    submit(browser, "play-start")
    assert browser.find_element(By.ID, "banner").text == "Your turn: turn up one of your cards"
    legal = api(server, f"/api/s/{body(browser, 'session')}")["legal"]
    assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")] == [m["label"] for m in legal]
    assert [m["label"] for m in legal] == [f"turn up slot {k}" for k in range(9)]  # the set-up: every card is still face down
    clicks = click_moves(browser, lambda turn, buttons: buttons[turn % len(buttons)], shot_at=9, shot="web_play_gnoming")
    key = body(browser, "session")
    log = json.loads(urllib.request.urlopen(f"{server}api/s/{key}/log").read())
    assert clicks == sum(1 for agent, _ in log["log"] if agent == "player_1")
    final = api(server, f"/api/s/{key}")
    assert final["done"] and scores(browser) == final["totals"]
    assert browser.find_element(By.ID, "banner").text.endswith("(lowest total wins)")


def test_watch_step_by_step_then_live(server, browser):
    open_page(browser, server, "watch")
    fill(browser, {"watch-game": "grinch", "watch-players": "4", "watch-agents": "greedy,random,expectimax:samples=4",
                   "watch-options": "num_rounds=1", "watch-seed": "3"})
    submit(browser, "watch-start")
    assert body(browser, "moves") == "0" and browser.find_element(By.ID, "banner").text == "Seat 1 (random) to act — press Step, or Live to let it run"
    for n in range(1, 12):
        submit(browser, "step")
        assert body(browser, "moves") == str(n)
    assert browser.find_element(By.ID, "table-title").text.lower() == "table — spectator view: every hand shown"
    assert "??" not in browser.find_element(By.ID, "table-text").get_attribute("textContent")  # the text table, also behind a picture
    submit(browser, browser.find_element(By.CSS_SELECTOR, "#view-seat option[value='2']"))
    assert browser.find_element(By.ID, "table-title").text.lower() == "table — as seat 2 sees it: cards hidden from this seat are ??"
    assert "??" in browser.find_element(By.ID, "table-text").get_attribute("textContent") and len(browser.find_elements(By.CSS_SELECTOR, "#hand .chip")) == 4  # 2 dealt + 1 kept from each of its 2 turns
    screenshot(browser, "web_watch")
    fill(browser, {"speed": "120"})
    browser.find_element(By.ID, "live").click()
    wait(browser, lambda d: body(d, "done") == "1", timeout=120)
    key = body(browser, "session")
    assert body(browser, "moves") == "22"  # 1 round at 4 players: 3 Whos x 4 decisions + the Grinch's 10
    assert scores(browser) == api(server, f"/api/s/{key}")["totals"] and not error(browser)


def test_replay_a_log_file(server, browser, tmp_path):
    env = get_game("grinch").raw_env(num_players=3, num_rounds=1)
    env.reset(seed=21)
    rng = np.random.default_rng(0)
    while not env.game.done:
        env.step(int(rng.choice(env.game.legal_actions())))
    path = tmp_path / "grinch_game.json"
    path.write_text(log_to_json(env.action_log, seed=21, num_players=3, num_rounds=1))
    open_page(browser, server, "replay")
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    fill(browser, {"replay-game": "grinch"})
    submit(browser, "replay-start")
    assert not error(browser) and body(browser, "moves") == "0"
    for n in range(1, 9):
        assert submit(browser, "step")["views"] and body(browser, "moves") == str(n)
    submit(browser, "back")
    assert body(browser, "moves") == "7"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#history li")) == 7
    screenshot(browser, "web_replay")
    submit(browser, "last")
    assert body(browser, "done") == "1" and body(browser, "moves") == str(len(env.action_log)) == "18"
    assert scores(browser) == env.game.totals


def test_replay_a_tournaments_log_from_the_list(server, browser, tournament):
    result, log_dir = tournament
    open_page(browser, server, "replay")
    options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#replay-list option")]
    assert options == ["choose a game"] + [
        f"game {i}: {', '.join(result.agents[a] for a in g['lineup'])} (totals {', '.join(map(str, g['totals']))})" for i, g in enumerate(result.games)]
    index = json.loads((log_dir / "index.json").read_text())
    Select(browser.find_element(By.ID, "replay-list")).select_by_index(2)  # game 1
    assert browser.find_element(By.ID, "replay-path").get_attribute("value") == str(log_dir / index["games"][1]["file"])
    submit(browser, "replay-start")
    assert not error(browser) and body(browser, "moves") == "0"
    submit(browser, "last")
    assert body(browser, "done") == "1" and scores(browser) == result.games[1]["totals"]
    screenshot(browser, "web_replay_tournament")


def test_bad_spec_and_bad_log_show_clear_errors(server, browser, tmp_path):
    open_page(browser, server, "watch")
    fill(browser, {"watch-game": "grinch", "watch-players": "3", "watch-agents": "greedy,nosuch"})
    submit(browser, "watch-start")
    assert error(browser).startswith("unknown agent 'nosuch' for Grinch Grow Your Heart: use one of ")
    screenshot(browser, "web_error")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    browser.find_element(By.ID, "tab-replay").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(bad))
    submit(browser, "replay-start")
    assert error(browser).startswith("the log is not JSON")
