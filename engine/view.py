"""What one seat may know (RULES.md §11), built by one function from the seat argument alone.

``seat_view(hand, seat)`` is what the server sends a seat, what a server-side bot decides from and
what a remote bot receives (``SeatView.from_dict``); ``seat=None`` is a spectator. Until the hand
ends nobody sees another seat's cards, the stock, or a secret meld's rank; afterwards all is
revealed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import Card
from .hand import Hand, Phase, Result, Step
from .melds import fits
from .moves import Action, Move
from .options import Options


@dataclass(frozen=True, slots=True)
class MeldView:
    """A meld as a seat sees it; a secret meld of another seat shows no cards until the end."""

    id: int
    owner: int
    cards: tuple[Card, ...]
    secret: bool = False
    laid_off: tuple[tuple[Card, int], ...] = ()

    def accepts(self, card: Card) -> bool:
        return not self.secret and fits(self.cards, card)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "owner": self.owner, "secret": self.secret}
        out["cards"] = [str(c) for c in self.cards] if self.cards else None
        if self.laid_off:
            out["laid_off"] = {str(c): s for c, s in self.laid_off}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MeldView:
        cards = tuple(Card.parse(c) for c in data.get("cards") or ())
        laid = tuple((Card.parse(c), s) for c, s in (data.get("laid_off") or {}).items())
        return cls(data["id"], data["owner"], cards, bool(data.get("secret")), laid)


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything a seat (or a spectator, ``seat is None``) may know about a hand."""

    seat: int | None
    dealer: int
    options: Options
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, int, int]
    stock: int
    discards: tuple[Card, ...]
    melds: tuple[MeldView, ...]
    opened: tuple[bool, bool, bool]
    blocked: tuple[bool, bool, bool]
    to_act: int | None
    phase: Phase
    turn: int
    caller: int | None
    history: tuple[dict[str, Any], ...]
    legal: tuple[Move, ...]
    result: Result | None = None
    revealed: tuple[tuple[Card, ...], ...] | None = None

    @property
    def my_turn(self) -> bool:
        return bool(self.legal)

    @property
    def top(self) -> Card | None:
        return self.discards[-1] if self.discards else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat,
            "dealer": self.dealer,
            "options": self.options.to_dict(omit_defaults=False),
            "hand": [str(c) for c in self.hand],
            "hand_sizes": list(self.hand_sizes),
            "stock": self.stock,
            "discards": [str(c) for c in self.discards],
            "melds": [m.to_dict() for m in self.melds],
            "opened": list(self.opened),
            "blocked": list(self.blocked),
            "to_act": self.to_act,
            "phase": self.phase.value,
            "turn": self.turn,
            "caller": self.caller,
            "history": list(self.history),
            "legal": [m.to_dict() for m in self.legal],
        }
        if self.result is not None:
            out["result"] = self.result.to_dict()
        if self.revealed is not None:
            out["revealed"] = [[str(c) for c in h] for h in self.revealed]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatView:
        """Rebuild a view received over the wire (the inverse of ``to_dict``)."""

        def cards(items: Any) -> tuple[Card, ...]:
            return tuple(Card.parse(c) for c in items or ())

        result = data.get("result")
        revealed = data.get("revealed")
        return cls(
            seat=data.get("seat"),
            dealer=data["dealer"],
            options=Options.from_dict(data.get("options")),
            hand=cards(data.get("hand")),
            hand_sizes=tuple(data["hand_sizes"]),
            stock=data["stock"],
            discards=cards(data.get("discards")),
            melds=tuple(MeldView.from_dict(m) for m in data.get("melds") or ()),
            opened=tuple(data["opened"]),
            blocked=tuple(data["blocked"]),
            to_act=data.get("to_act"),
            phase=Phase(data["phase"]),
            turn=data.get("turn", 0),
            caller=data.get("caller"),
            history=tuple(data.get("history") or ()),
            legal=tuple(Move.from_dict(m) for m in data.get("legal") or ()),
            result=Result.from_dict(result) if result else None,
            revealed=tuple(cards(h) for h in revealed) if revealed else None,
        )


def _public_step(step: Step, seat: int | None, over: bool) -> dict[str, Any]:
    out = step.to_dict()
    if step.move.action is Action.SECRET and step.seat != seat and not over:
        del out["cards"]
    if step.auto:
        out["auto"] = True
    return out


def seat_view(hand: Hand, seat: int | None) -> SeatView:
    """The view of ``seat`` (``None``: a spectator). Everything is taken from ``seat``, never from
    the seat to act, so a view built for a waiting seat holds only that seat's knowledge."""
    over = hand.over
    melds = tuple(
        MeldView(
            m.id,
            m.owner,
            tuple(m.cards) if (not m.secret or over or m.owner == seat) else (),
            m.secret,
            tuple(m.laid_off.items()),
        )
        for m in hand.melds
    )
    return SeatView(
        seat=seat,
        dealer=hand.dealer,
        options=hand.options,
        hand=tuple(sorted(hand.hands[seat])) if seat is not None else (),
        hand_sizes=(len(hand.hands[0]), len(hand.hands[1]), len(hand.hands[2])),
        stock=len(hand.stock),
        discards=tuple(hand.discards),
        melds=melds,
        opened=(hand.opened(0), hand.opened(1), hand.opened(2)),
        blocked=(hand.call_blocked(0), hand.call_blocked(1), hand.call_blocked(2)),
        to_act=None if over else hand.to_act,
        phase=hand.phase,
        turn=hand.turn,
        caller=hand.caller,
        history=tuple(_public_step(s, seat, over) for s in hand.steps),
        legal=tuple(hand.legal_moves(seat)) if seat is not None else (),
        result=hand.result,
        revealed=tuple(tuple(sorted(h)) for h in hand.hands) if over else None,
    )
