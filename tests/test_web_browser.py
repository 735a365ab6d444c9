"""The page in a real browser: Debian's Chromium driven by Selenium against a real
``tongits-server`` (a child process on a free loopback port, server bots at its tables).

A person plays a whole match of one hand by clicking (and, on a phone, a timed match of two
hands to its end), a reload or a dropped connection
mid-hand is back in the seat, two pages and a terminal's text client share a table, a
spectator's WebSocket frames hold no hidden card, a wrong password says so, a phone's 360x640
screen needs no horizontal scrolling (at the table and at a hand's result) and keeps your hand
on screen, a discard is one tap, and a desktop player can play from the keyboard. A call is
announced on all three pages of a table with the caller's name, each page's count is the
engine's, the tab's title says when it is your turn, every text's contrast is computed, and
"again" seats a page and a terminal's client together at a new table. Screenshots are kept
in the test's temporary directory (and the 360x640 and 1280x800 ones in
``$TONGITS_SHOTS/tongits-web-*.png``, ``/tmp`` by default, to look at).

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
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tongits.engine import Card
from tongits.engine.count import hand_count
from tongits.protocol.phrases import chip_words

pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver import ActionChains, ChromeOptions, Keys  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.chrome.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
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

    def __init__(self, process: subprocess.Popen[str], port: int, scheme: str = "http",
                 said: str = "") -> None:
        self.process = process
        self.url = f"{scheme}://127.0.0.1:{port}"
        self.said = said  # what the server said to open in a browser


def start_server(tmp: Path, *, password: str | None = None, tls: bool = False,
                 options: tuple[str, ...] = ()) -> Site:
    """A server; with ``tls`` a self-signed certificate and the password (if any) in a file,
    as a host on a LAN would start it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TONGITS_PASSWORD", None)
    extra = []
    if password is not None and tls:
        (tmp / "password").write_text(password + "\n")
        extra = ["--password-file", str(tmp / "password")]
    elif password is not None:
        env["TONGITS_PASSWORD"] = password
    if tls:
        extra.append("--tls-self-signed")
    process = subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
         "--data-dir", str(tmp), "--bot-delay", "0.05", "--discovery", "false",
         "--log-level", "WARNING", *extra, *options],
        stdout=subprocess.PIPE, stderr=(tmp / "server.log").open("w"), text=True, env=env,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], WAIT)
    line = process.stdout.readline() if ready else ""
    match = re.match(r"listening on [\d.]+:(\d+)", line)
    if match is None:
        process.kill()
        raise AssertionError(f"the server did not start: {line!r}")
    return Site(process, int(match.group(1)), "https" if tls else "http",
                process.stdout.readline().strip())


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
    """Chromium; it accepts a self-signed certificate, as a person on a LAN does once."""
    options = ChromeOptions()
    options.accept_insecure_certs = True
    assert BROWSER is not None and DRIVER is not None
    options.binary_location = BROWSER
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = WebDriver(options=options, service=Service(DRIVER))
    driver.set_page_load_timeout(WAIT)
    return driver


def open_phone() -> WebDriver:
    """Chromium as a phone: 360x640 CSS pixels, touch, twice as many device pixels."""
    phone = open_browser(360, 640)
    phone.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 360, "height": 640, "deviceScaleFactor": 2, "mobile": True})
    return phone


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


#: Where the screenshots go (``TONGITS_SHOTS``, else ``/tmp``), as ``tongits-web-NAME.png``.
SHOTS = Path(os.environ.get("TONGITS_SHOTS", "/tmp"))


def shot(driver: WebDriver, name: str) -> None:
    """A screenshot to look at: ``SHOTS/tongits-web-NAME.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"tongits-web-{name}.png"))


def wait(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(
            condition, what)
    except TimeoutException:
        shot(driver, "failure")
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
    """The cards of the hand shown, read in one step: read card by card, a hand drawn again
    meanwhile (a bot's move arriving) left the reader with cards no longer on the page."""
    cards: list[str] = driver.execute_script(
        "return [...document.querySelectorAll('#hand .card')].map((c) => c.dataset.card)")
    return cards


def moves(driver: WebDriver) -> list[str]:
    """The moves offered as buttons (their actions), read in one step, as ``hand_cards`` reads
    the hand: the page draws its buttons again on every message, and a button found a moment
    ago may be gone before it is read."""
    actions: list[str] = driver.execute_script(
        "return [...document.querySelectorAll('#moves button')].map((b) => b.dataset.action)")
    return actions


def legal_count(driver: WebDriver) -> int:
    """How many moves the server offers the page now (its ``legal`` list)."""
    return int(driver.find_element(By.ID, "moves").get_attribute("data-legal") or 0)


def my_turn_or_over(driver: WebDriver) -> bool:
    return legal_count(driver) > 0 or visible(driver, "result")


def click(driver: WebDriver, selector: str, what: str) -> None:
    """Click the element ``selector`` finds now: the page redraws its buttons on every message
    (a bot's move, a seat's change), so an element found a moment ago may be gone."""
    def clicked(d: WebDriver) -> bool:
        d.find_element(By.CSS_SELECTOR, selector).click()
        return True

    wait(driver, clicked, what)


def tap_a_discard(driver: WebDriver) -> str:
    """Tap the first card the page marks as discardable and say which it was: found, read and
    tapped in one step, again if the hand was drawn anew in between (``click``)."""
    def tapped(d: WebDriver) -> str:
        card = d.find_element(By.CSS_SELECTOR, "#hand .card.discardable")
        name = card.get_attribute("data-card") or ""
        card.click()
        return name

    name: str = wait(driver, tapped, "a card to discard")
    return name


def click_in_lobby(driver: WebDriver, says: str, button: str) -> str:
    """Click ``button`` on the newest (last) row of the lobby that ``says`` something and has
    that button, and give the row's table: the list is drawn anew every 4 s and on every
    change, so the row is found, read and clicked in one step, again if it was redrawn."""
    def clicked(d: WebDriver) -> str:
        for row in reversed(d.find_elements(By.CSS_SELECTOR, "#tables li")):
            found = row.find_elements(By.XPATH, f".//button[text()='{button}']")
            if says in row.text and found:
                table = row.get_attribute("data-table") or ""
                found[0].click()
                return table
        return ""

    table: str = wait(driver, clicked, f"{button} at the table {says!r} in the lobby")
    return table


def play_one_turn(driver: WebDriver) -> None:
    """Click as a person would: fold an answer, or draw, then discard with one tap on the first
    card the page marks as discardable."""
    offered = moves(driver)
    if "fold" in offered:
        click(driver, '#moves button[data-action="fold"]', "fold")
        wait(driver, lambda d: "fold" not in moves(d), "the fold to go")
        return
    if "draw" in offered:
        held = set(hand_cards(driver))
        click(driver, '#moves button[data-action="draw"]', "draw")
        wait(driver, lambda d: "draw" not in moves(d)
             and (legal_count(d) > 0 or visible(d, "result")), "the drawn card")
        if visible(driver, "result"):
            return
        # the card drawn is marked in the hand and named under it
        drawn = [c.get_attribute("data-card") or "" for c in
                 driver.find_elements(By.CSS_SELECTOR, "#hand .card.drawn")]
        assert drawn == list(set(hand_cards(driver)) - held)
        face = Card.parse(drawn[0]).pretty().replace("T", "10")  # as the card's face says
        assert f"You drew {face}." in driver.find_element(By.ID, "hint").text
    if visible(driver, "result"):
        return
    click(driver, "#hand .card.discardable", "a card to discard")
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#hand .card.discardable"),
         "the discard to go")


def my_next_turn(driver: WebDriver) -> None:
    """Wait for the seat's next turn; a hand that ended first (a bot went out, or called and
    nobody challenged, as 1 run in 7 did) is followed into the next deal."""
    while True:
        wait(driver, my_turn_or_over, "my next turn or the hand's end")
        if not visible(driver, "result"):
            return
        click(driver, "#next-hand", "the next hand")
        wait(driver, lambda d: not visible(d, "result"), "the next deal")


def play_to_the_hands_end(driver: WebDriver) -> None:
    """Play every turn offered (``play_one_turn``) until the page shows the hand's result."""
    turns = 0
    while not visible(driver, "result"):
        wait(driver, my_turn_or_over, "my turn or the hand's end")
        if not visible(driver, "result"):
            play_one_turn(driver)
            turns += 1
            assert turns < 60


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
    assert site.said == f"open {site.url}/ in a browser"  # what the server printed
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
                                           r"(clubs|diamonds|hearts|spades)"
                                           r"(, tap to discard|, used by a move below)?", str(x))
                              for x in labels)
        play_one_turn(browser)
        turns += 1
        assert turns < 60
    frames(browser, seen)
    wait(browser, lambda d: d.find_elements(By.ID, "to-lobby"), "the match's end")
    result = browser.find_element(By.ID, "result").text
    assert "The last hand: " in result and "Match over after 1 hand:" in result
    story = browser.find_element(By.ID, "log").text
    assert story.startswith("— hand 1 —") and "Hand over: " in story
    states = [m for m in seen if m["type"] == "state"]
    assert states and all(
        m["view"]["count"] == hand_count(Card.parse(c) for c in m["view"]["hand"])
        for m in states)  # the count the page shows is the engine's, in every state
    over = [m for m in seen if m["type"] == "match_over"]
    assert len(over) == 1
    for seat, chips in enumerate(over[0]["standings"]["chips"]):
        who = "You" if seat == 0 else over[0]["standings"]["names"][seat]
        noun = "chip" if abs(chips) == 1 else "chips"
        assert f"{who}: {'+' if chips > 0 else ''}{chips} {noun}" in result
    # the result table's Total is signed as the standings are (a winner's read "21")
    totals = browser.execute_script(
        "return [...document.querySelectorAll('#result tr[data-seat] td:nth-child(4)')]"
        ".map((td) => td.textContent)")
    assert totals == [("+" if c > 0 else "") + str(c) for c in over[0]["standings"]["chips"]]
    # under each seat's chips, why: the terms of the hand_result's why, in the terminal's words
    why = next(m for m in seen if m["type"] == "hand_result")["result"]["why"]
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#result tr.why td')].map((td) => td.textContent)")
    assert rows and [row.rpartition(": ")[2] for row in rows] == [
        words for words in map(chip_words, why) if words]  # a loser's row leads "to NAME: "
    shot(browser, "1280-result")
    moved = [m for m in seen if m["type"] == "state" and m.get("event", {}).get("seat") == 0]
    assert turns >= 1 and moved, "the person's clicks made moves"
    browser.find_element(By.ID, "to-lobby").click()
    wait(browser, lambda d: visible(d, "lobby"), "back in the lobby")


def test_a_table_opens_with_the_house_rules_chosen_in_the_page(
    browser: WebDriver, site: Site,
) -> None:
    """The create form offers the options ``welcome`` lists, and the table shows its own."""
    sit_down(browser, site, "Hana")
    browser.find_element(By.CSS_SELECTOR, "#create-rules summary").click()
    Select(browser.find_element(By.ID, "option-call_tie")).select_by_visible_text("caller")
    Select(browser.find_element(By.ID, "option-pick_to_sapaw")).select_by_visible_text("yes")
    ante = browser.find_element(By.ID, "option-ante")
    ante.clear()
    ante.send_keys("5")
    assert browser.find_element(By.ID, "option-scoring").text.split() == ["payments", "tally"]
    shot(browser, "1280-options")
    create_table(browser)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#options dd[data-option="ante"]'),
         "the table's options")
    seen = frames(browser, [])
    options = next(m["view"]["options"] for m in seen if m["type"] == "state")
    assert {k: options[k] for k in ("call_tie", "pick_to_sapaw", "ante", "scoring")} == {
        "call_tie": "caller", "pick_to_sapaw": True, "ante": 5, "scoring": "payments"}
    browser.find_element(By.ID, "options-title").click()
    shown = browser.execute_script(  # at once: the page redraws the panel on every message
        "return Object.fromEntries([...document.querySelectorAll('#options dd')]"
        ".map((dd) => [dd.dataset.option, dd.textContent]))")
    assert set(shown) == set(options)
    assert (shown["call_tie"], shown["pick_to_sapaw"], shown["ante"]) == ("caller", "yes", "5")
    assert browser.find_element(By.ID, "options-title").text == "Options: 3 house rules"
    shot(browser, "1280-table-options")


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
    my_next_turn(browser)
    # a dropped connection (a phone's network gone) comes back to the seat by itself
    before = hand_cards(browser)
    browser.execute_script("window.droppedSocket = S.ws; S.ws.close()")
    wait(browser, lambda d: d.execute_script("return S.ws !== window.droppedSocket"
                                             " && S.welcomed") and legal_count(d) > 0,
         "the seat once more, on a new connection")
    assert hand_cards(browser) == before
    # the seat's own comings and goings are in the status line, not the log ("You is back")
    seat_lines = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#log li.seat-line")]
    assert not [line for line in seat_lines if line.startswith("You")], seat_lines
    # the token never left the page in an address
    for entry in browser_log(browser, "performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            assert token not in message["params"]["request"]["url"]
    assert token not in browser.current_url


def test_a_dropped_connection_between_hands_shows_the_hands_result_again(
    site: Site,
) -> None:
    """A phone that loses its network while the hand's result is on screen (the others have
    not asked for the next hand) comes back to that result: its story, counts and chips, and
    the next hand's button, not a table with no hand and nothing to do. The server does not
    send the ``hand_result`` again (the page's ``seq`` covers it): the view has the result."""
    phone = open_phone()
    terminal = TextClient(int(site.url.rsplit(":", 1)[1]))
    try:
        sit_down(phone, site, "Ana")
        create_table(phone, bots=1, name="Between")
        terminal.send({"type": "hello", "version": 1, "name": "Cy", "kind": "human"})
        terminal.send({"type": "join", "table": phone.execute_script("return S.table")})
        other = threading.Thread(target=terminal.play_until_the_hands_end, daemon=True)
        other.start()
        play_to_the_hands_end(phone)
        other.join(WAIT)
        title = phone.find_element(By.ID, "hand-over").text
        assert title.startswith("Hand over")
        phone.execute_script("window.droppedSocket = S.ws; S.ws.close()")
        wait(phone, lambda d: d.execute_script("return S.ws !== window.droppedSocket"
                                               " && S.welcomed"), "a new connection")
        wait(phone, lambda d: visible(d, "result")
             and d.find_element(By.ID, "hand-over").text == title, "the hand's result again")
        assert phone.find_elements(By.ID, "next-hand")
        shot(phone, "360-result-after-a-drop")
    finally:
        phone.quit()
        terminal.sock.close()


def test_a_tap_on_a_card_that_is_no_discard_now_says_why(site: Site) -> None:
    """A phone's first tap at the start of a turn, on a card, before drawing: the page says
    what the table waits for (the moves the server offers), where it did nothing at all."""
    phone = open_phone()
    try:
        sit_down(phone, site, "Ana")
        create_table(phone)
        my_next_turn(phone)
        while "draw" not in moves(phone):  # the dealer's first turn is a discard: play it
            play_one_turn(phone)
            my_next_turn(phone)
        assert phone.find_element(By.ID, "hint").text == ""
        click(phone, "#hand .card", "a card that is no discard now")
        wait(phone, lambda d: d.find_element(By.ID, "hint").text.startswith(
            "Not a discard now: first "), "why nothing was discarded")
        assert "draw from the stock" in phone.find_element(By.ID, "hint").text
        assert in_view(phone, "hint")
        shot(phone, "360-not-a-discard")
    finally:
        phone.quit()


def test_an_invite_link_opens_into_its_private_table(site: Site) -> None:
    host, friend, late = open_browser(), open_browser(), open_browser()
    try:
        sit_down(host, site, "Hana")
        create_table(host, bots=1, private=True)
        link = wait(host, lambda d: visible(d, "invite")
                    and d.find_element(By.ID, "invite-link").text, "the invite link")
        assert re.fullmatch(re.escape(site.url) + r"/t/t\d+\?code=[a-z0-9]{10}", link)
        assert host.find_element(By.ID, "waiting").text == (
            "Waiting for 1 player: share this link")
        host.find_element(By.ID, "invite-copy").click()
        wait(host, lambda d: d.find_element(By.ID, "copied").text, "Copy says what it did")
        # a link cut short in a chat, then one whose table has closed: said in words
        path = link.removeprefix(site.url)
        sit_down(friend, site, "Ivo", path=path[:-3])
        wait(friend, lambda d: visible(d, "lobby") and "code is wrong" in
             d.find_element(By.ID, "notice").text, "a wrong code said")
        friend.get(site.url + "/t/t999?code=abcdefghij")
        wait(friend, lambda d: visible(d, "lobby") and "table is closed" in
             d.find_element(By.ID, "notice").text, "a closed table said")
        # a table opened from the lobby then: the lobby's word does not follow to it
        click(friend, "#create-form button[type=submit]", "Open table")
        wait(friend, lambda d: visible(d, "table") and len(hand_cards(d)) in (12, 13),
             "a seat at the friend's own table")
        assert not visible(friend, "notice")
        friend.execute_script("localStorage.clear()")  # a new phone, then the right link
        friend.get(site.url + path)
        wait(friend, lambda d: visible(d, "login"), "the name form")
        # the form names the table (the server puts its name in the page of a link with the
        # right code): it said only "You are invited to a table"
        assert friend.find_element(By.ID, "login-title").text == (
            "You are invited to a table: Hana's table")
        assert friend.find_element(By.ID, "login-enter").text == "Join the table"
        sit_down(friend, site, "Ivo", path=path)
        wait(friend, lambda d: visible(d, "table") and len(hand_cards(d)) in (12, 13),
             "a seat at the invited table")
        assert "Hana" in friend.find_element(By.ID, "seats").text
        assert friend.find_element(By.ID, "table-title").text == "Hana's table"  # not its id
        assert friend.find_element(By.ID, "invite-link").text == link
        host.refresh()  # the link stays on the host's page
        wait(host, lambda d: visible(d, "table") and d.find_element(By.ID, "invite-link").text
             == link, "the invite link after a reload")
        # a third friend with the link: the table is full, so the page watches it and says so
        # as news, not in the colour of an error (nothing went wrong)
        sit_down(late, site, "Jo", path=path)
        wait(late, lambda d: visible(d, "table") and "you are watching" in
             d.find_element(By.ID, "notice").text, "the late friend told it watches")
        news = late.find_element(By.ID, "notice")
        assert news.get_attribute("role") == "status"
        watching_colour = news.value_of_css_property("background-color")
        shot(late, "1280-watching-notice")
        late.get(site.url + "/t/t999?code=abcdefghij")
        wait(late, lambda d: "table is closed" in d.find_element(By.ID, "notice").text,
             "a closed table said")
        error = late.find_element(By.ID, "notice")
        assert error.get_attribute("role") == "alert"
        assert error.value_of_css_property("background-color") != watching_colour
    finally:
        host.quit()
        friend.quit()
        late.quit()


def test_a_connection_lost_and_back_is_said_in_the_log(site: Site) -> None:
    """The server killed and started again mid-hand: the status said "connection lost,
    reconnecting…" while it lasted, then "connected", and nothing on the page told of it. The
    log now says it, in the terminal's words (the phrasebook's ``link.back``)."""
    phone = open_phone()
    try:
        sit_down(phone, site, "Lia")
        create_table(phone)
        wait(phone, lambda d: len(hand_cards(d)) in (12, 13), "the hand dealt")
        phone.execute_script("S.ws.close()")  # as the network or the server would
        wait(phone, lambda d: "connection back after" in d.find_element(By.ID, "log").text
             and d.find_element(By.ID, "status").text == "connected", "the link back, said")
        assert phone.find_element(By.ID, "log").text.count("connection back after") == 1
    finally:
        phone.quit()


def test_a_spectators_frames_hold_no_hidden_card(site: Site) -> None:
    player, watcher = open_browser(), open_browser()
    try:
        sit_down(player, site, "Cora")
        create_table(player, timer=1)  # the server plays Cora's turns when her time runs out
        sit_down(watcher, site, "Dan")
        click_in_lobby(watcher, "Cora", "Watch")
        wait(watcher, lambda d: visible(d, "table"), "the watched table")
        wait(player, lambda d: "Someone is watching (1 spectator)" in d.find_element(
            By.ID, "log").text, "the spectator announced to the player")
        told = wait(watcher, lambda d: d.find_element(By.ID, "log").text, "the hand so far")
        assert told.startswith("— hand 1 —")  # the watcher is told the hand from its start
        # told that it watches (no hand of its own), and not offered turn alerts
        wait(watcher, lambda d: d.find_element(By.ID, "turn").text.startswith(
            "You are watching"), "the watcher told it watches")
        assert not visible(watcher, "alerts-box")
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

    def play_until_the_hands_end(self) -> None:
        """Play every turn offered (fold, else draw, else the first discard) until the
        ``hand_result``; the next hand is not asked for."""
        while True:
            msg: dict[str, Any] = json.loads(self.lines.readline())
            if msg["type"] == "hand_result":
                return
            self.play_offered(msg)

    def play_until_match_over(self, into: list[dict[str, Any]]) -> None:
        """Play every turn offered (fold, else draw, else the first discard) and ask for the
        next hand, until ``match_over``, which goes into ``into``."""
        while True:
            msg: dict[str, Any] = json.loads(self.lines.readline())
            if msg["type"] == "match_over":
                into.append(msg)
                return
            if msg["type"] == "hand_result" and not msg.get("last"):
                self.send({"type": "next_hand"})
            self.play_offered(msg)

    def play_offered(self, msg: dict[str, Any]) -> None:
        """A ``state`` that offers moves: fold, else draw, else the first discard."""
        legal = msg.get("legal") or [] if msg["type"] == "state" else []
        for action in ("fold", "draw", "discard"):
            chosen = [move for move in legal if move["action"] == action]
            if chosen:
                self.send({"type": "move", "move": chosen[0]})
                return


def test_two_pages_and_a_terminal_client_share_a_table(site: Site) -> None:
    ana, ben = open_browser(), open_browser()
    terminal = TextClient(int(site.url.rsplit(":", 1)[1]))
    try:
        sit_down(ana, site, "Ana")
        create_table(ana, bots=0, name="Shared")
        sit_down(ben, site, "Ben")
        table = click_in_lobby(ben, "Shared", "Join")
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
        # asked for, not refused: not in the error's colour (it was); a wrong one is an error
        assert browser.find_element(By.ID, "notice").get_attribute("role") == "status"
        browser.find_element(By.ID, "login-password").send_keys("wrong\n")
        wait(browser, lambda d: "Wrong password" in d.find_element(By.ID, "notice").text,
             "the refusal")
        assert browser.find_element(By.ID, "notice").get_attribute("role") == "alert"
        assert visible(browser, "login")
        browser.find_element(By.ID, "login-password").send_keys(PASSWORD + "\n")
        wait(browser, lambda d: visible(d, "lobby"), "the lobby")
    finally:
        stop_server(guarded)


def test_a_page_over_https_asks_the_password_and_plays(tmp_path: Path,
                                                       browser: WebDriver) -> None:
    """A host's ``--tls-self-signed --password-file`` server: the page is served over HTTPS,
    its WebSocket is WSS, it asks for the password and a hand is played to the match's end."""
    guarded = start_server(tmp_path, password=PASSWORD, tls=True)
    try:
        browser.get(guarded.url + "/")
        wait(browser, lambda d: visible(d, "login"), "the name form")
        browser.find_element(By.ID, "login-name").send_keys("Jo\n")
        wait(browser, lambda d: visible(d, "password-row"), "the password field")
        assert browser.find_element(By.ID, "status").text == "password needed"
        browser.find_element(By.ID, "login-password").send_keys(PASSWORD + "\n")
        create_table(browser, hands="1")
        assert browser.execute_script("return location.protocol") == "https:"
        play_to_the_hands_end(browser)
        wait(browser, lambda d: d.find_elements(By.ID, "to-lobby"), "the match's end")
        sockets = [json.loads(e["message"])["message"]["params"]["url"]
                   for e in browser_log(browser, "performance")
                   if json.loads(e["message"])["message"]["method"] == "Network.webSocketCreated"]
        assert sockets and all(url.startswith("wss://") for url in sockets)
    finally:
        stop_server(guarded)


def test_an_invite_link_with_the_password_seats_a_phone_without_asking(tmp_path: Path) -> None:
    """``--invite-password``: the link a private table's creator is shown carries the server
    password (in its fragment, which no request sends), so a friend who taps it on a phone
    sits down with a name only, and the address left in the bar holds no password."""
    guarded = start_server(tmp_path, password=PASSWORD, tls=True,
                           options=("--invite-password", "true"))
    host, friend = open_browser(), open_phone()
    try:
        host.get(guarded.url + "/")
        wait(host, lambda d: visible(d, "login"), "the name form")
        host.find_element(By.ID, "login-name").send_keys("Hana\n")
        wait(host, lambda d: visible(d, "password-row"), "the password field")
        host.find_element(By.ID, "login-password").send_keys(PASSWORD + "\n")
        create_table(host, bots=1, private=True)
        link = wait(host, lambda d: visible(d, "invite")
                    and d.find_element(By.ID, "invite-link").text, "the invite link")
        assert re.fullmatch(re.escape(guarded.url) + r"/t/t\d+\?code=[a-z0-9]{10}"
                            r"#password=correct%20horse", link)
        friend.get(link)
        wait(friend, lambda d: visible(d, "login"), "the name form")
        friend.find_element(By.ID, "login-name").send_keys("Ivo\n")
        wait(friend, lambda d: visible(d, "table") and len(hand_cards(d)) in (12, 13),
             "a seat at the invited table, no password asked")
        assert "password" not in friend.current_url
        assert "Hana" in friend.find_element(By.ID, "seats").text
    finally:
        host.quit()
        friend.quit()
        stop_server(guarded)


def test_a_phone_screen_needs_no_horizontal_scroll(site: Site) -> None:
    """At 360x640 nothing scrolls sideways (the table, a hand's result), your hand and your
    moves stay on screen while the table scrolls above them, and a discard is one tap."""
    phone = open_phone()
    try:
        sit_down(phone, site, "Fely")
        assert no_horizontal_scroll(phone)
        create_table(phone)
        wait(phone, lambda d: legal_count(d) > 0, "my turn")
        if "draw" in moves(phone):
            click(phone, '#moves button[data-action="draw"]', "draw")
            wait(phone, lambda d: "draw" not in moves(d) and legal_count(d) > 0, "the draw")
        shot(phone, "360")
        assert no_horizontal_scroll(phone)
        assert phone.execute_script("return window.innerWidth") == 360
        phone.execute_script("window.scrollTo(0, 0)")
        assert in_view(phone, "hand") and in_view(phone, "moves")  # docked at the bottom
        before = hand_cards(phone)
        card = tap_a_discard(phone)  # one tap: the discard
        wait(phone, lambda d: card not in hand_cards(d), "the card discarded")
        assert len(hand_cards(phone)) == len(before) - 1
        play_to_the_hands_end(phone)  # the hand's result, every hand shown, fits too
        phone.execute_script("document.getElementById('result').scrollIntoView()")
        shot(phone, "360-result")
        assert no_horizontal_scroll(phone)
    finally:
        phone.quit()


def in_view(driver: WebDriver, element_id: str) -> bool:
    """Whether the element's top is on the screen (not scrolled away; a pixel's fraction above
    it is the rounding of a scroll to it)."""
    return bool(driver.execute_script(
        "const top = document.getElementById(arguments[0]).getBoundingClientRect().top;"
        "return top > -1 && top < window.innerHeight", element_id))


def test_a_phone_plays_a_timed_match_of_two_hands_to_its_end(site: Site) -> None:
    """Between hands the page counts down to the deal the table's timer makes (and the table
    does deal then, nobody clicking); the last hand says so; the match's end ranks the seats
    by chips and is brought on screen."""
    phone = open_phone()
    try:
        sit_down(phone, site, "Iya")
        create_table(phone, timer=12, hands="2")
        for hand in (1, 2):
            play_to_the_hands_end(phone)
            assert no_horizontal_scroll(phone)
            if hand == 1:  # (the last hand's result scrolls on to the match's end)
                assert in_view(phone, "result")
                countdown = wait(phone, lambda d: re.fullmatch(
                    r"The next hand is dealt in (\d+) s",
                    d.find_element(By.ID, "next-deal").text), "the countdown")
                assert 0 < int(countdown.group(1)) <= 12
                shot(phone, "360-next-deal")
                wait(phone, lambda d: not visible(d, "result"), "the timer's deal")
                assert phone.find_element(By.ID, "hand-no").text == "hand 2 of 2"
        wait(phone, lambda d: d.find_elements(By.ID, "to-lobby"), "the match's end")
        assert in_view(phone, "match-over") and no_horizontal_scroll(phone)
        shot(phone, "360-match-over")
        rows = [li.text for li in phone.find_elements(By.CSS_SELECTOR, "#result .standings li")]
        chips = [int(re.search(r": ([+-]?\d+) chips?,", row).group(1))  # type: ignore[union-attr]
                 for row in rows]
        assert len(rows) == 3 and chips == sorted(chips, reverse=True)
        assert not any(" 1 hands" in row for row in rows)
        assert "Match over after 2 hands" in phone.find_element(By.ID, "match-over").text
    finally:
        phone.quit()


def test_the_desktop_page_plays_from_the_keyboard(browser: WebDriver, site: Site) -> None:
    """Each kind of move has its own key (D draws on every turn), a card is discarded with
    Enter, and the focus is then on a move or a card, never lost to the page's body."""
    sit_down(browser, site, "Gil")
    create_table(browser)
    wait(browser, lambda d: legal_count(d) > 0, "my turn")
    shot(browser, "1280")
    assert no_horizontal_scroll(browser)
    keys = ActionChains(browser)
    for turn in range(2):
        wait(browser, my_turn_or_over, "my turn or the hand's end")
        if turn and (visible(browser, "result") or "draw" not in moves(browser)):
            break  # a bot went out or called after our first discard: the keys were shown
        if "draw" in moves(browser):
            assert browser.execute_script(
                "return document.querySelector('#moves button[data-action=draw]').dataset.key"
            ) == "d"
            keys.send_keys("d").perform()
            wait(browser, lambda d: "draw" not in moves(d) and legal_count(d) > 0, "the draw")
        focused = browser.switch_to.active_element
        assert focused.tag_name == "button"  # a move or a card, after the draw

        def entered(d: WebDriver) -> str:  # in one step, as tap_a_discard taps
            card = d.find_element(By.CSS_SELECTOR, "#hand .card.discardable")
            name = card.get_attribute("data-card") or ""
            card.send_keys(Keys.ENTER)
            return name

        name = wait(browser, entered, "a card to discard by its key")
        wait(browser, partial(lacks, card=name), "the discard, from the keyboard")
    errors = [e for e in browser_log(browser, "browser") if e["level"] == "SEVERE"]
    assert errors == [], errors  # no CSP violation, no script error


def lacks(driver: WebDriver, card: str | None) -> bool:
    """Whether ``card`` has left the hand the page shows."""
    return card not in hand_cards(driver)


def announces(driver: WebDriver, words: str) -> bool:
    """Whether the table's announcement says ``words``."""
    return words in driver.find_element(By.ID, "announce").text


def shown_count(driver: WebDriver) -> int:
    """The count the page shows as yours."""
    match = re.fullmatch(r"Your count: (\d+)", driver.find_element(By.ID, "my-count").text)
    assert match, driver.find_element(By.ID, "my-count").text
    return int(match.group(1))


def engine_count(driver: WebDriver) -> int:
    """The engine's count of the cards the page shows in your hand (the default options)."""
    return hand_count(Card.parse(card) for card in hand_cards(driver))


def act(page: WebDriver) -> str:
    """One decision of a person who calls as soon as the table allows, challenges every call,
    melds whatever it can, else draws, and discards with a tap. What it did ("" if nothing
    was asked of it now)."""
    offered = moves(page)
    for action in ("challenge", "call", "meld", "draw"):
        if action in offered:
            click(page, f'#moves button[data-action="{action}"]', action)
            if action == "call":
                wait(page, lambda d: visible(d, "confirm"), "the call's confirmation")
                assert "Your count is" in page.find_element(By.ID, "confirm-text").text
                page.find_element(By.ID, "confirm-yes").click()
            return action
    if page.find_elements(By.CSS_SELECTOR, "#hand .card.discardable"):
        click(page, "#hand .card.discardable", "a card to discard")
        return "discard"
    return ""


def play_until_someone_calls(pages: list[WebDriver]) -> int:
    """Let each page ``act`` in turn until one calls (hands that end otherwise are followed
    by the next); checks each page's count and title on its turns. The caller's index."""
    for _ in range(400):
        for index, page in enumerate(pages):
            if visible(page, "result") and page.find_elements(By.ID, "next-hand"):
                click(page, "#next-hand", "the next hand")
                continue
            if legal_count(page) == 0:
                continue
            assert page.title == "● Your turn — Tongits"
            assert shown_count(page) == engine_count(page)
            if act(page) == "call":
                return index
    raise AssertionError("nobody could call")


def test_a_call_is_announced_on_every_page_with_the_callers_name(site: Site) -> None:
    """Three people at one table, one on a phone. When one calls, every page says who called
    and how many cards they hold where the table is; a seat asked to answer sees the question
    with its own count (the engine's); everyone is told who challenged and the counts. Each
    page's count is the engine's count of its hand; the tab's title says when it is your
    turn, and only then."""
    names = ("Ana", "Ben", "Cy")
    pages = [open_browser(), open_browser(), open_phone()]
    try:
        sit_down(pages[0], site, names[0])
        create_table(pages[0], bots=0, name="Call table")
        for page, name in zip(pages[1:], names[1:], strict=True):
            sit_down(page, site, name)
            click_in_lobby(page, "Call table", "Join")
            wait(page, lambda d: visible(d, "table"), "a seat")
        for page in pages:
            wait(page, lambda d: len(hand_cards(d)) in (12, 13), "the deal")
            assert shown_count(page) == engine_count(page)
        caller = play_until_someone_calls(pages)
        who = names[caller]
        for index, page in enumerate(pages):
            said = "You called" if index == caller else f"{who} called"
            wait(page, partial(announces, words=said), "the call on the table")
            assert re.search(r"holding \d+ cards|challenge or fold", page.find_element(
                By.ID, "announce").text)
        shot(pages[2], "360-call")
        shot(pages[0], "1280-call")
        answered, deadline = 0, time.monotonic() + WAIT
        while not visible(pages[caller], "result"):  # each seat asked in turn challenges
            assert time.monotonic() < deadline, "the call was never answered"
            for page in pages:
                if "challenge" in moves(page):
                    text = page.find_element(By.ID, "announce").text
                    assert f"{who} called: challenge or fold?" in text
                    assert f"Your count: {engine_count(page)}" in text
                    shot(page, "360-asked" if page is pages[2] else "1280-asked")
                    click(page, '#moves button[data-action="challenge"]', "challenge")
                    answered += 1
                    assert answered <= 2
        for index, page in enumerate(pages):
            wait(page, lambda d: visible(d, "result"), "the hand's end")
            story = page.find_element(By.ID, "result").text
            caller_name = "You" if index == caller else who
            assert f"{caller_name} called with a count of" in story
            assert "Challenged:" in story or "Nobody challenged" in story
            assert page.title == "Tongits"
        shot(pages[2], "360-call-result")
        shot(pages[0], "1280-call-result")
    finally:
        for page in pages:
            page.quit()


CONTRAST = """
const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255;
  return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const background = (node) => {
  for (; node; node = node.parentElement) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length === 3 || colour[3] > 0) return colour.slice(0, 3);
  }
  return [255, 255, 255];
};
const out = [];
for (const node of document.querySelectorAll("body *")) {
  const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
  if (!own || !node.getClientRects().length) continue;
  const style = getComputedStyle(node);
  if (style.visibility === "hidden" || style.color === "rgba(0, 0, 0, 0)") continue;
  const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(node))];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const mine = node.closest(".me") ? " of me" : "";
  const name = node.tagName + "#" + node.id + "." + node.className + mine;
  out.push([name, node.textContent.trim().slice(0, 30), ratio]);
}
return out;
"""


def contrast_ratios(driver: WebDriver) -> list[tuple[str, str, float]]:
    """Every element showing text of its own: its text colour against the first opaque
    background under it, as WCAG 2 computes a contrast ratio."""
    return [tuple(row) for row in driver.execute_script(CONTRAST)]


def test_every_text_has_a_contrast_of_at_least_4_5(browser: WebDriver, site: Site) -> None:
    """WCAG AA on the page's own styles, measured in the browser: the lobby, the table on your
    turn (your seat, the bots, the moves, the log) and a hand's result."""
    sit_down(browser, site, "Lu")
    low = [r for r in contrast_ratios(browser) if r[2] < 4.5]
    create_table(browser)
    wait(browser, lambda d: legal_count(d) > 0, "my turn")
    if not moves(browser):  # a dealer with no meld may only discard: card taps, no keys shown
        low += [r for r in contrast_ratios(browser) if r[2] < 4.5]
        click(browser, "#hand .card.discardable", "a discard")
        wait(browser, lambda d: bool(moves(d)), "a turn with moves and their keys")
    ratios = contrast_ratios(browser)
    assert any(r[0].endswith(" of me") for r in ratios)  # your seat is measured
    assert any(r[0].startswith("KBD") for r in ratios)  # and the keys of the moves
    low += [r for r in ratios if r[2] < 4.5]
    play_to_the_hands_end(browser)
    low += [r for r in contrast_ratios(browser) if r[2] < 4.5]
    assert low == []
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('button')].filter((b) => b.getClientRects().length)"
        ".map((b) => [b.textContent, b.getBoundingClientRect().width,"
        " b.getBoundingClientRect().height])")
    assert sizes and all(w >= 44 and h >= 44 for _, w, h in sizes), sizes


def test_again_seats_a_page_and_a_terminal_client_together(site: Site) -> None:
    """A one-hand match of a page, a server bot and a terminal's client; at its end the page's
    "again" and the terminal's ``again`` (``create_table`` with ``rematch``) land both at one
    new table."""
    page = open_browser()
    terminal = TextClient(int(site.url.rsplit(":", 1)[1]))
    try:
        sit_down(page, site, "Dee")
        create_table(page, bots=1, hands="1", name="Rematch")
        table = page.execute_script("return S.table")
        terminal.send({"type": "hello", "version": 1, "name": "Eli", "kind": "human"})
        terminal.send({"type": "join", "table": table})
        token = terminal.receive("joined")["token"]
        done: list[dict[str, Any]] = []
        player = threading.Thread(target=terminal.play_until_match_over, args=(done,))
        player.start()
        turns = 0
        while not page.find_elements(By.ID, "again"):
            wait(page, lambda d: my_turn_or_over(d) or d.find_elements(By.ID, "again"),
                 "my turn or the match's end")
            if legal_count(page) > 0:
                play_one_turn(page)
                turns += 1
                assert turns < 60
        player.join(WAIT)
        assert done and done[0]["type"] == "match_over"
        assert "The last hand" in page.find_element(By.ID, "result").text
        page.find_element(By.ID, "again").click()
        wait(page, lambda d: d.execute_script("return S.table") not in (None, table),
             "the new table")
        again = page.execute_script("return S.table")
        terminal.send({"type": "create_table", "name": "Rematch", "rematch": table,
                       "token": token})
        assert terminal.receive("joined")["table"] == again
        wait(page, lambda d: "Eli" in d.find_element(By.ID, "seats").text,
             "the terminal's player beside the page")
        assert "Rematch" in page.find_element(By.ID, "table-title").text
    finally:
        page.quit()
        terminal.sock.close()


def test_the_page_registers_queues_for_the_ladder_and_shows_the_standings(
    tmp_path: Path, browser: WebDriver,
) -> None:
    """As ``tongits ladder``: an account registered from the page (its key kept by the
    browser), a queue that seats it at a rated table (the server's anchor bots fill it), and
    the standings."""
    ladder = start_server(tmp_path, options=("--ladder-anchor-wait", "0"))
    try:
        sit_down(browser, ladder, "Mia")
        wait(browser, lambda d: visible(d, "register-form"), "the ladder's register form")
        browser.find_element(By.ID, "register-name").send_keys("Mia\n")
        wait(browser, lambda d: visible(d, "queue"), "the account, and a queue button")
        assert "Your account: Mia" in browser.find_element(By.ID, "ladder-state").text
        browser.find_element(By.ID, "standings-show").click()
        standings = wait(browser, lambda d: d.find_element(By.ID, "standings").text,
                         "the standings")
        assert "anchor-" in standings and "server bot" in standings
        browser.find_element(By.ID, "queue").click()
        wait(browser, lambda d: visible(d, "table"), "a rated table")
        seats = wait(browser, lambda d: "anchor-" in d.find_element(By.ID, "seats").text
                     and d.find_element(By.ID, "seats").text, "the anchors seated")
        assert "You (Mia)" in seats
    finally:
        stop_server(ladder)


def test_the_turn_line_speaks_only_when_its_words_change(browser: WebDriver, site: Site) -> None:
    """The turn line is a polite live region: a screen reader reads each change, so the clock's
    seconds tick beside it, not in it."""
    sit_down(browser, site, "Ros")
    create_table(browser, timer=30)
    wait(browser, lambda d: legal_count(d) > 0, "my turn")
    browser.execute_script(
        "window.turnChanges = 0; window.clockChanges = 0;"
        "new MutationObserver(() => { window.turnChanges += 1; }).observe("
        "  document.getElementById('turn'), {childList: true, characterData: true, subtree: true});"
        "new MutationObserver(() => { window.clockChanges += 1; }).observe("
        "  document.getElementById('turn-clock'), {childList: true, characterData: true,"
        "  subtree: true});")
    assert browser.find_element(By.ID, "turn").get_attribute("aria-live") == "polite"
    wait(browser, lambda d: d.execute_script("return window.clockChanges") >= 3,
         "three seconds of the clock")
    assert browser.execute_script("return window.turnChanges") == 0
    assert browser.find_element(By.ID, "turn").text == "Your turn"
