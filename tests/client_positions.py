"""Chosen positions for the client tests: an engine ``Hand`` set up by hand, so that the view
and its legal moves come from the engine itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tongits.engine import DECK, Card, Hand, Options, Phase, SeatView, parse_cards, seat_view
from tongits.engine.melds import TableMeld


def position(
    hand: str,
    *,
    top: str | None = None,
    melds: Sequence[tuple[int, str]] = (),
    phase: Phase = Phase.START,
    seat: int = 1,
    to_act: int | None = None,
    options: Options | None = None,
    opened: tuple[bool, bool, bool] | None = None,
    secret: Sequence[int] = (),
    turn: int = 3,
    laid_off: Mapping[int, Sequence[tuple[str, int]]] | None = None,
) -> SeatView:
    """Seat ``seat`` holds ``hand``; ``top`` is the discard; ``melds`` are (owner, cards);
    ``laid_off``: per meld index, the cards of it laid off and by which seat, in order."""
    mine = set(parse_cards(hand))
    table = [set(parse_cards(cards)) for _, cards in melds]
    used = mine | set().union(*table) | (set(parse_cards(top)) if top else set())
    rest = [c for c in DECK if c not in used]
    hands: list[set[Card]] = [set(), set(), set()]
    hands[seat] = mine
    hands[(seat + 1) % 3] = set(rest[:10])
    hands[(seat + 2) % 3] = set(rest[10:20])
    laid = laid_off or {}
    owners = {owner for owner, _ in melds}
    h = Hand.restore(
        options=options or Options(),
        dealer=0,
        hands=hands,
        stock=rest[20:30],
        discards=list(parse_cards(top)) if top else [],
        melds=[
            TableMeld(i, owner, sorted(cards, key=lambda c: (c.rank, c.suit)), i in secret,
                      {Card.parse(card): by for card, by in laid.get(i, ())})
            for i, ((owner, _), cards) in enumerate(zip(melds, table, strict=True))
        ],
        to_act=seat if to_act is None else to_act,
        phase=phase,
        turn=turn,
        opened=opened or tuple(s in owners for s in range(3)),
    )
    return seat_view(h, seat)
