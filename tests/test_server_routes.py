"""The server's route table (``routes.Router``): every request a client may send has a home,
a route of the lobby or the ladder, or a handler of the table it is sent to."""

from __future__ import annotations

from server_support import quick_config
from tongits.protocol import Hello
from tongits.protocol.messages import CLIENT_MESSAGES
from tongits.server import Server
from tongits.server.table import actor


def test_every_client_request_has_a_route_or_a_table_handler() -> None:
    routes = Server(quick_config()).router.routes
    homeless = {cls.__name__ for cls in CLIENT_MESSAGES.values()
                if cls not in routes and cls not in actor._HANDLERS}
    assert homeless == set()
    assert Hello in routes  # a second hello is answered by the route table, not the table


def test_no_request_has_two_homes() -> None:
    """A class with a route never reaches the table but through that route (create, join and
    spectate are routed to the table they name, which then handles them; a sync is charged
    as a lobby page, then handed to the connection's table)."""
    routes = Server(quick_config()).router.routes
    both = {cls.__name__ for cls in routes if cls in actor._HANDLERS}
    assert both == {"CreateTable", "Join", "Spectate", "Sync"}
