"""The lobby's commands and table lines."""

from __future__ import annotations

import pytest
from tongits.client.tui.lobby import Choice, LobbyError, describe, parse_lobby
from tongits.client.tui.render import lobby_panel, to_text
from tongits.client.tui.state import TablesListed, TableState


@pytest.mark.parametrize(
    ("line", "choice"),
    [
        ("create Friday", Choice("create", "Friday")),
        ("create Friday bots 1 timer 20", Choice("create", "Friday", bots=1, timer=20.0)),
        ("join t1", Choice("join", "t1")),
        ("join t1 2", Choice("join", "t1", seat=2)),
        ("watch t3", Choice("watch", "t3")),
        ("spectate t3", Choice("watch", "t3")),
    ],
)
def test_parse_lobby(line: str, choice: Choice) -> None:
    assert parse_lobby(line) == choice


@pytest.mark.parametrize("line", ["", "create", "create x bots", "join", "join t1 x", "dance"])
def test_parse_lobby_errors(line: str) -> None:
    with pytest.raises(LobbyError):
        parse_lobby(line)


def test_create_private() -> None:
    assert parse_lobby("create Friday private bots 1") == Choice(
        "create", "Friday", bots=1, private=True
    )


def test_lobby_lists_tables() -> None:
    table = {
        "table": "t1",
        "name": "Friday",
        "players": 3,
        "started": True,
        "hands": 0,
        "timer": 30,
        "seats": [
            {"seat": 0, "name": "Ana", "player": "human"},
            {"seat": 1, "name": "greedy-bot-1", "player": "bot"},
        ],
    }
    assert describe(table).startswith("t1    Friday         3/3  playing, hand 1 · 30s")
    state = TableState()
    state.apply(TablesListed([table]))
    text = to_text(lobby_panel(state))
    assert "greedy-bot-1*" in text and "watch TABLE" in text
    state.apply(TablesListed(None))
    assert state.lobby is None
