"""The client decides no rule: on every typed move its verdict is the engine's.

Random hands are played with random legal moves; at every state, from every seat's view (and a
spectator's), random command lines are typed: legal moves, the seat's own cards and other cards
in every command, both notations, meld numbers on and off the table. Whenever a line parses as a
move, the client either accepts it exactly when the real hand would, or refuses it with the code
the real hand gives (``Hand.why_illegal``, the check the server makes).
"""

from __future__ import annotations

import random

from engine_support import SEEDS, states
from hypothesis import given, settings
from tongits.client.tui.commands import CommandError, Local, parse_command, read_command
from tongits.engine import DECK, Card, Hand, seat_view

WORDS = ("draw", "pick", "meld", "secret", "sapaw", "discard", "call", "challenge", "fold",
         "dr", "disc", "sa")


def typed_line(rng: random.Random, hand: Hand, seat: int | None) -> str:
    """A line a player might type at this state."""
    legal = hand.legal_moves()
    write = rng.choice((str, Card.pretty))
    if legal and rng.random() < 0.3:
        return rng.choice(legal).text(write)
    mine = sorted(hand.hands[seat]) if seat is not None else []
    def card() -> str:
        return write(rng.choice(mine) if mine and rng.random() < 0.8 else rng.choice(DECK))
    word = rng.choice(WORDS)
    if word in ("sapaw", "sa"):
        return f"{word} {card()} {rng.randrange(len(hand.melds) + 2)}"
    if word == "pick" and rng.random() < 0.2:
        return f"pick {rng.randrange(len(hand.melds) + 2)}"
    if word in ("pick", "meld", "secret"):
        return word + " " + " ".join(card() for _ in range(rng.randint(1, 5)))
    if word in ("discard", "disc"):
        return f"{word} {card()}"
    return word


@settings(max_examples=50, deadline=None)
@given(SEEDS)
def test_the_clients_verdict_on_every_typed_move_is_the_engines(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for hand in states(seed):
        for seat in (0, 1, 2, None):
            view = seat_view(hand, seat)
            for _ in range(3):
                line = typed_line(rng, hand, seat)
                try:
                    move = parse_command(line)
                except CommandError:
                    continue  # not a move: nothing for the engine to judge
                assert not isinstance(move, Local)
                real = hand.why_illegal(seat, move) if seat is not None else "not_your_turn"
                expected = real if real is None or isinstance(real, str) else real.code
                try:
                    read_command(line, view)
                    verdict = None
                except CommandError as refused:
                    verdict = refused.code
                    assert verdict is not None and str(refused)
                assert verdict == expected, (line, seat)
                checked += 1
    assert checked > 0
