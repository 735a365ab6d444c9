"""The page in a real browser: Debian's Chromium driven by Selenium against a real
``tongits-server`` (a child process on a free loopback port, server bots at its tables).

A person plays a whole match of one hand by clicking, a reload or a dropped connection
mid-hand is back in the seat, two pages and a terminal's text client share a table, a
spectator's WebSocket frames hold no hidden card, a wrong password says so, a phone's 360x640
screen needs no horizontal scrolling (at the table and at a hand's result), and a desktop
player can play from the keyboard. Screenshots are kept in the test's temporary
directory (and the 360x640 and 1280x800 ones in ``/tmp/tongits-web-*.png``, to look at).

Skipped, saying why, only when no Chromium (``chromium`` and ``chromedriver``) or no Selenium
is installed; .ci/run installs them.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver import ActionChains, ChromeOptions, Keys  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.chrome.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402

BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="no Chromium: install Debian's chromium and chromium-driver (.ci/run does)",
)

#: Seconds any one wait in the page may take.
WAIT = 30
CARD = re.compile(r'"([A2-9TJQK][cdhs])"')
PASSWORD = "correct horse"


class Site:
    """A running server: its address and the process."""

    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}"


def start_server(tmp: Path, *, password: str | None = None) -> Site:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TONGITS_PASSWORD", None)
    if password is not None:
        env["TONGITS_PASSWORD"] = password
    process = subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
         "--data-dir", str(tmp), "--bot-delay", "0.05", "--discovery", "false",
         "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=(tmp / "server.log").open("w"), text=True, env=env,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], WAIT)
    line = process.stdout.readline() if ready else ""
    match = re.match(r"listening on [\d.]+:(\d+)", line)
    if match is None:
        process.kill()
        raise AssertionError(f"the server did not start: {line!r}")
    return Site(process, int(match.group(1)))


def stop_server(site: Site) -> None:
    site.process.terminate()
    try:
        site.process.wait(10)
    except subprocess.TimeoutExpired:
        site.process.kill()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    running = start_server(tmp_path_factory.mktemp("server"))
    yield running
    stop_server(running)


def open_browser(width: int = 1280, height: int = 800) -> WebDriver:
    options = ChromeOptions()
    assert BROWSER is not None and DRIVER is not None
    options.binary_location = BROWSER
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = WebDriver(options=options, service=Service(DRIVER))
    driver.set_page_load_timeout(WAIT)
    return driver


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    driver = open_browser()
    yield driver
    driver.quit()


def browser_log(driver: WebDriver, kind: str) -> list[dict[str, Any]]:
    """The entries of one of Chromium's logs since the last call (``performance``: the
    DevTools events, WebSocket frames among them; ``browser``: the console)."""
    entries: list[dict[str, Any]] = driver.get_log(kind)  # type: ignore[no-untyped-call]
    return entries


def wait(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(
            condition, what)
    except TimeoutException:
        driver.save_screenshot("/tmp/tongits-web-failure.png")
        raise


def visible(driver: WebDriver, element_id: str) -> bool:
    return bool(driver.find_element(By.ID, element_id).is_displayed())


def sit_down(driver: WebDriver, site: Site, name: str, path: str = "/") -> None:
    driver.get(site.url + path)
    wait(driver, lambda d: visible(d, "login"), "the name form")
    driver.find_element(By.ID, "login-name").send_keys(name + "\n")
    wait(driver, lambda d: visible(d, "lobby") or visible(d, "table"), "the lobby")


def create_table(driver: WebDriver, *, timer: int = 0, hands: str = "", bots: int = 2,
                 name: str = "", private: bool = False) -> None:
    wait(driver, lambda d: visible(d, "lobby"), "the lobby")
    if private:
        driver.find_element(By.ID, "create-private").click()
    driver.find_element(By.CSS_SELECTOR, f'#create-bots option[value="{bots}"]').click()
    if name:
        box = driver.find_element(By.ID, "create-name")
        box.clear()
        box.send_keys(name)
    for field, value in (("create-timer", str(timer)), ("create-hands", hands)):
        box = driver.find_element(By.ID, field)
        box.clear()
        if value:
            box.send_keys(value)
    driver.find_element(By.CSS_SELECTOR, "#create-form button[type=submit]").click()
    wait(driver, lambda d: visible(d, "table"), "the table")


def hand_cards(driver: WebDriver) -> list[str]:
    return [c.get_attribute("data-card") or ""
            for c in driver.find_elements(By.CSS_SELECTOR, "#hand .card")]


def moves(driver: WebDriver) -> dict[str, Any]:
    return {b.get_attribute("data-action") or "": b
            for b in driver.find_elements(By.CSS_SELECTOR, "#moves button")}


def legal_count(driver: WebDriver) -> int:
    """How many moves the server offers the page now (its ``legal`` list)."""
    return int(driver.find_element(By.ID, "moves").get_attribute("data-legal") or 0)


def my_turn_or_over(driver: WebDriver) -> bool:
    return legal_count(driver) > 0 or visible(driver, "result")


def play_one_turn(driver: WebDriver) -> None:
    """Click as a person would: fold an answer, or draw, then discard the first card the page
    offers a discard for once it is selected."""
    offered = moves(driver)
    if "fold" in offered:
        offered["fold"].click()
        wait(driver, lambda d: "fold" not in moves(d), "the fold to go")
        return
    if "draw" in offered:
        offered["draw"].click()
        wait(driver, lambda d: "draw" not in moves(d)
             and (legal_count(d) > 0 or visible(d, "result")), "the drawn card")
    for card in hand_cards(driver):
        if visible(driver, "result"):
            return
        button = driver.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{card}"]')
        button.click()
        offered = moves(driver)
        if "discard" in offered:
            offered["discard"].click()
            wait(driver, lambda d: "discard" not in moves(d), "the discard to go")
            return
        button.click()  # no discard of that card: take it back
    raise AssertionError(f"no card could be discarded: {hand_cards(driver)}")


def frames(driver: WebDriver, into: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The WebSocket text frames the page received since the last call, added to ``into``."""
    for entry in browser_log(driver, "performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.webSocketFrameReceived":
            into.append(json.loads(message["params"]["response"]["payloadData"]))
    return into


def no_horizontal_scroll(driver: WebDriver) -> bool:
    return bool(driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"
        " && document.body.scrollWidth <= window.innerWidth"))


def test_a_person_plays_a_whole_match_against_two_server_bots(
    browser: WebDriver, site: Site,
) -> None:
    sit_down(browser, site, "Ana")
    create_table(browser, hands="1")
    seen: list[dict[str, Any]] = []
    turns = 0
    while not visible(browser, "result"):
        wait(browser, my_turn_or_over, "my turn or the hand's end")
        if visible(browser, "result"):
            break
        labels = [b.get_attribute("aria-label") for b in
                  browser.find_elements(By.CSS_SELECTOR, "#hand .card")]
        assert labels and all(re.fullmatch(r"(ace|[2-9]|10|jack|queen|king) of "
                                           r"(clubs|diamonds|hearts|spades)", str(x))
                              for x in labels)
        play_one_turn(browser)
        turns += 1
        assert turns < 60
    frames(browser, seen)
    wait(browser, lambda d: d.find_elements(By.ID, "to-lobby"), "the match's end")
    result = browser.find_element(By.ID, "result").text
    assert "Hand over" in result and "Match over after 1 hand:" in result
    over = [m for m in seen if m["type"] == "match_over"]
    assert len(over) == 1
    for seat, chips in enumerate(over[0]["standings"]["chips"]):
        assert f"{over[0]['standings']['names'][seat]}: {chips} chips" in result
    browser.save_screenshot("/tmp/tongits-web-1280-result.png")
    moved = [m for m in seen if m["type"] == "state" and m.get("event", {}).get("seat") == 0]
    assert turns >= 1 and moved, "the person's clicks made moves"
    browser.find_element(By.ID, "to-lobby").click()
    wait(browser, lambda d: visible(d, "lobby"), "back in the lobby")


def test_a_reload_or_a_dropped_connection_is_back_in_the_seat(
    browser: WebDriver, site: Site,
) -> None:
    sit_down(browser, site, "Ben")
    create_table(browser)
    wait(browser, lambda d: legal_count(d) > 0, "my turn")
    before = hand_cards(browser)
    token = browser.execute_script("return JSON.parse(localStorage['tongits.seat']).token")
    assert token
    browser.refresh()
    wait(browser, lambda d: visible(d, "table") and legal_count(d) > 0, "the seat again")
    assert hand_cards(browser) == before
    assert "You" in browser.find_element(By.CSS_SELECTOR, ".seat.me").text
    play_one_turn(browser)
    # a dropped connection (a phone's network gone) comes back to the seat by itself
    wait(browser, lambda d: legal_count(d) > 0, "my next turn")
    before = hand_cards(browser)
    browser.execute_script("window.droppedSocket = S.ws; S.ws.close()")
    wait(browser, lambda d: d.execute_script("return S.ws !== window.droppedSocket"
                                             " && S.welcomed") and legal_count(d) > 0,
         "the seat once more, on a new connection")
    assert hand_cards(browser) == before
    # the token never left the page in an address
    for entry in browser_log(browser, "performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            assert token not in message["params"]["request"]["url"]
    assert token not in browser.current_url


def test_an_invite_link_opens_into_its_private_table(site: Site) -> None:
    host, friend = open_browser(), open_browser()
    try:
        sit_down(host, site, "Hana")
        create_table(host, bots=1, private=True)
        link = wait(host, lambda d: visible(d, "invite")
                    and d.find_element(By.ID, "invite-link").text, "the invite link")
        assert re.fullmatch(re.escape(site.url) + r"/t/t\d+\?code=[a-z0-9]{10}", link)
        sit_down(friend, site, "Ivo", path=link.removeprefix(site.url))
        wait(friend, lambda d: visible(d, "table") and len(hand_cards(d)) in (12, 13),
             "a seat at the invited table")
        assert "Hana" in friend.find_element(By.ID, "seats").text
        host.refresh()  # the link stays on the host's page
        wait(host, lambda d: visible(d, "table") and d.find_element(By.ID, "invite-link").text
             == link, "the invite link after a reload")
    finally:
        host.quit()
        friend.quit()


def test_a_spectators_frames_hold_no_hidden_card(site: Site) -> None:
    player, watcher = open_browser(), open_browser()
    try:
        sit_down(player, site, "Cora")
        create_table(player, timer=1)  # the server plays Cora's turns when her time runs out
        sit_down(watcher, site, "Dan")
        row = wait(watcher, lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "#tables li")
                                       if "Cora" in r.text or "playing" in r.text], "the table")
        row[-1].find_element(By.XPATH, ".//button[text()='Watch']").click()
        wait(watcher, lambda d: visible(d, "table"), "the watched table")
        seen: list[dict[str, Any]] = []
        wait(watcher, lambda d: len([m for m in frames(d, seen) if m["type"] == "state"]) >= 12,
             "a dozen states")
        assert not watcher.find_elements(By.CSS_SELECTOR, "#hand .card")
        states = [m for m in seen if m["type"] == "state" and m["view"]["phase"] != "over"]
        assert states
        for state in states:
            view = state["view"]
            assert view["seat"] is None and view["hand"] == [] and "revealed" not in view
            assert "legal" not in state
            public = set(view["discards"])
            for meld in view["melds"]:
                public.update(meld["cards"] or [])
            for event in [*view["history"], state.get("event") or {}]:
                public.update(event.get("cards") or [])
                if "card" in event:
                    public.add(event["card"])
            named = set(CARD.findall(json.dumps(state)))
            assert named <= public, f"hidden cards in a spectator's frame: {named - public}"
    finally:
        player.quit()
        watcher.quit()


class TextClient:
    """A terminal's client of the protocol: text mode over TCP, as ``nc`` would speak it."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.lines = self.sock.makefile("r", encoding="utf-8")

    def send(self, msg: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def receive(self, kind: str) -> dict[str, Any]:
        while True:
            msg: dict[str, Any] = json.loads(self.lines.readline())
            if msg["type"] == kind:
                return msg


def test_two_pages_and_a_terminal_client_share_a_table(site: Site) -> None:
    ana, ben = open_browser(), open_browser()
    terminal = TextClient(int(site.url.rsplit(":", 1)[1]))
    try:
        sit_down(ana, site, "Ana")
        create_table(ana, bots=0, name="Shared")
        sit_down(ben, site, "Ben")
        row = wait(ben, lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "#tables li")
                                   if "Shared" in r.text], "the table in the lobby")
        table = row[0].get_attribute("data-table")
        assert table
        row[0].find_element(By.XPATH, ".//button[text()='Join']").click()
        wait(ben, lambda d: visible(d, "table"), "Ben's seat")
        terminal.send({"type": "hello", "version": 1, "name": "Cy", "kind": "human"})
        terminal.send({"type": "join", "table": table})
        assert terminal.receive("joined")["seat"] == 2
        state = terminal.receive("state")
        assert len(state["view"]["hand"]) in (12, 13)
        for page in (ana, ben):
            wait(page, lambda d: len(hand_cards(d)) in (12, 13), "the deal")
            seats = page.find_element(By.ID, "seats").text
            assert "You" in seats and "Cy" in seats
            assert "Ana" in seats or "Ben" in seats
        assert set(hand_cards(ana)).isdisjoint(hand_cards(ben))
        assert set(hand_cards(ana)).isdisjoint(state["view"]["hand"])
        terminal.send({"type": "chat", "text": "magandang gabi"})
        for page in (ana, ben):
            wait(page, lambda d: "Cy: magandang gabi" in d.find_element(By.ID, "log").text,
                 "the terminal's chat line")
        ben.find_element(By.ID, "chat-text").send_keys("kumusta\n")
        assert terminal.receive("chat")["text"] == "magandang gabi"  # its own line, echoed
        said = terminal.receive("chat")
        assert (said["name"], said["text"]) == ("Ben", "kumusta")
    finally:
        ana.quit()
        ben.quit()
        terminal.sock.close()


def test_a_wrong_password_says_so(tmp_path: Path, browser: WebDriver) -> None:
    guarded = start_server(tmp_path, password=PASSWORD)
    try:
        browser.get(guarded.url + "/")
        wait(browser, lambda d: visible(d, "login"), "the name form")
        browser.find_element(By.ID, "login-name").send_keys("Eve\n")
        wait(browser, lambda d: visible(d, "password-row"), "the password field")
        assert "needs a password" in browser.find_element(By.ID, "notice").text
        browser.find_element(By.ID, "login-password").send_keys("wrong\n")
        wait(browser, lambda d: "Wrong password" in d.find_element(By.ID, "notice").text,
             "the refusal")
        assert visible(browser, "login")
        browser.find_element(By.ID, "login-password").send_keys(PASSWORD + "\n")
        wait(browser, lambda d: visible(d, "lobby"), "the lobby")
    finally:
        stop_server(guarded)


def test_a_phone_screen_needs_no_horizontal_scroll(site: Site) -> None:
    phone = open_browser(360, 640)
    try:
        phone.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 360, "height": 640, "deviceScaleFactor": 2, "mobile": True})
        sit_down(phone, site, "Fely")
        assert no_horizontal_scroll(phone)
        create_table(phone)
        wait(phone, lambda d: legal_count(d) > 0, "my turn")
        offered = moves(phone)
        if "draw" in offered:
            offered["draw"].click()
            wait(phone, lambda d: "draw" not in moves(d) and legal_count(d) > 0, "the draw")
        card = phone.find_element(By.CSS_SELECTOR, "#hand .card")
        card.click()
        wait(phone, lambda d: "discard" in moves(d), "a discard offered")
        phone.save_screenshot("/tmp/tongits-web-360.png")
        assert no_horizontal_scroll(phone)
        width = phone.execute_script("return window.innerWidth")
        assert width == 360
        moves(phone)["discard"].click()
        turns = 0
        while not visible(phone, "result"):  # the hand's result, every hand shown, fits too
            wait(phone, my_turn_or_over, "my turn or the hand's end")
            if not visible(phone, "result"):
                play_one_turn(phone)
                turns += 1
                assert turns < 60
        phone.execute_script("document.getElementById('result').scrollIntoView()")
        phone.save_screenshot("/tmp/tongits-web-360-result.png")
        assert no_horizontal_scroll(phone)
    finally:
        phone.quit()


def test_the_desktop_page_plays_from_the_keyboard(browser: WebDriver, site: Site) -> None:
    sit_down(browser, site, "Gil")
    create_table(browser)
    wait(browser, lambda d: legal_count(d) > 0, "my turn")
    browser.save_screenshot("/tmp/tongits-web-1280.png")
    assert no_horizontal_scroll(browser)
    keys = ActionChains(browser)
    if "draw" in moves(browser):
        keys.send_keys("1").perform()  # the first move offered: the draw
        wait(browser, lambda d: "draw" not in moves(d) and legal_count(d) > 0, "the draw")
    card = hand_cards(browser)[0]
    browser.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{card}"]').send_keys(" ")
    wait(browser, lambda d: "discard" in moves(d), "the card selected from the keyboard")
    keys.send_keys(Keys.ESCAPE).perform()  # Escape clears the selection
    wait(browser, lambda d: "discard" not in moves(d), "the selection cleared")
    browser.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{card}"]').send_keys(" ")
    wait(browser, lambda d: "discard" in moves(d), "selected again")
    number = list(moves(browser)).index("discard") + 1
    keys.send_keys(str(number)).perform()
    wait(browser, lambda d: card not in hand_cards(d), "the discard, from the keyboard")
    errors = [e for e in browser_log(browser, "browser") if e["level"] == "SEVERE"]
    assert errors == [], errors  # no CSP violation, no script error
