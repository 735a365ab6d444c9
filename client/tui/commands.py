"""The command line's grammar: reading a typed line into a move or a local command, and saying
why a move would be refused before it is sent.

One table (``COMMANDS``) lists every command; parsing, completion and ``help`` all read it.
Legality is never decided here: a move is sendable exactly when it is in ``view.legal``. When it
is not, ``why_not`` reconstructs the reason from the seat's own view, so the player reads
"draw or pick first" instead of a bare refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from tongits.engine import Action, Card, InvalidMove, Move, Phase, SeatView
from tongits.engine.melds import fits, meld_kind


class Args(StrEnum):
    """What a command takes after its name."""

    NONE = "none"
    PICK = "pick"  # two or more hand cards, or (option pick_to_sapaw) one meld id
    CARDS = "cards"  # a meld from the hand
    CARD_MELD = "card_meld"  # a hand card, then a meld id
    CARD = "card"  # one hand card
    TEXT = "text"  # free text


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    args: Args
    usage: str
    help: str
    action: Action | None = None


COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        CommandSpec("draw", Args.NONE, "draw", "take top stock card", Action.DRAW),
        CommandSpec("pick", Args.PICK, "pick 7h 7s", "discard into a meld", Action.PICK),
        CommandSpec("meld", Args.CARDS, "meld 4c 5c 6c", "lay a meld face up", Action.MELD),
        CommandSpec(
            "secret",
            Args.CARDS,
            "secret Qc Qd Qh Qs",
            "4 of a kind, hidden",
            Action.SECRET,
        ),
        CommandSpec("sapaw", Args.CARD_MELD, "sapaw 8d 3", "lay off onto meld 3", Action.SAPAW),
        CommandSpec("discard", Args.CARD, "discard Kd", "discard, end turn", Action.DISCARD),
        CommandSpec("call", Args.NONE, "call", "lowest count wins", Action.CALL),
        CommandSpec("challenge", Args.NONE, "challenge", "answer call: compare", Action.CHALLENGE),
        CommandSpec("fold", Args.NONE, "fold", "answer call: give up", Action.FOLD),
        CommandSpec("hint", Args.NONE, "hint", "advice for your hand"),
        CommandSpec("review", Args.NONE, "review", "grade your moves"),
        CommandSpec("sort", Args.NONE, "sort", "by suit / by rank"),
        CommandSpec("say", Args.TEXT, "say TEXT", "chat at the table"),
        CommandSpec("help", Args.NONE, "help", "this list"),
        CommandSpec("quit", Args.NONE, "quit", "leave the game"),
    )
}


class CommandError(Exception):
    """A line that cannot be sent; ``str()`` is the reason, for the player."""


@dataclass(frozen=True, slots=True)
class Local:
    """A command handled by the client itself: ``hint``, ``sort``, ``say``, ``help``, ``quit``."""

    name: str
    text: str = ""


Command: TypeAlias = Move | Local


def resolve(word: str) -> CommandSpec | None:
    """The command named ``word`` or by a unique prefix of it (``dr`` is draw, ``d`` is none)."""
    word = word.lower()
    if word in COMMANDS:
        return COMMANDS[word]
    found = [spec for name, spec in COMMANDS.items() if name.startswith(word)]
    return found[0] if word and len(found) == 1 else None


def parse_card(token: str) -> Card:
    try:
        return Card.parse(token)
    except InvalidMove:
        raise CommandError(f"{token!r} is not a card (write 7h, Th or 10h, K♠)") from None


def parse_cards(tokens: Sequence[str]) -> tuple[Card, ...]:
    cards = tuple(parse_card(t) for t in tokens)
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise CommandError(f"{card} is named twice")
        seen.add(card)
    return cards


def _meld_id(token: str) -> int:
    if not token.isdigit():
        raise CommandError(f"{token!r} is not a meld number")
    return int(token)


def parse_command(line: str) -> Command:
    """Read one typed line; raise ``CommandError`` if it is not a well-formed command."""
    text = line.strip()
    if not text:
        raise CommandError("type a command; Tab completes, `help` lists them")
    head, _, rest = text.partition(" ")
    spec = resolve(head)
    if spec is None:
        raise CommandError(f"unknown command {head!r}; `help` lists them")
    if spec.args is Args.TEXT:
        if not rest.strip():
            raise CommandError(f"usage: {spec.usage}")
        return Local(spec.name, rest.strip())
    tokens = rest.replace(",", " ").split()
    if spec.action is None:
        if tokens:
            raise CommandError(f"{spec.name} takes nothing after it")
        return Local(spec.name)
    action = spec.action
    if spec.args is Args.NONE:
        if tokens:
            raise CommandError(f"{spec.name} takes nothing after it")
        return Move(action)
    if spec.args is Args.CARD:
        if len(tokens) != 1:
            raise CommandError(f"usage: {spec.usage} (one card)")
        return Move(action, card=parse_card(tokens[0]))
    if spec.args is Args.CARD_MELD:
        if len(tokens) != 2:
            raise CommandError(f"usage: {spec.usage} (a card, then a meld number)")
        first, second = tokens
        if first.isdigit() and not second.isdigit():
            first, second = second, first
        return Move(action, card=parse_card(first), meld=_meld_id(second))
    if spec.args is Args.PICK and len(tokens) == 1 and tokens[0].isdigit():
        return Move(action, meld=int(tokens[0]))
    if not tokens:
        raise CommandError(f"usage: {spec.usage}")
    return Move(action, parse_cards(tokens))


def _show(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def why_not(move: Move, view: SeatView, names: Sequence[str] = ()) -> str | None:
    """``None`` if ``move`` is in the view's legal moves, else the reason, in words.

    The reason is reconstructed from what the seat sees, in the order the engine checks; when
    none of the known reasons applies the answer is a plain "not legal now"."""
    if move in view.legal:
        return None
    reason = _reason(move, view, names)
    return reason or f"{move} is not legal now"


def _name(seat: int | None, names: Sequence[str]) -> str:
    if seat is None:
        return "nobody"
    return names[seat] if seat < len(names) and names[seat] else f"seat {seat}"


def _reason(move: Move, view: SeatView, names: Sequence[str]) -> str | None:
    seat = view.seat
    action = move.action
    if seat is None:
        return "you are watching this table, not playing"
    if view.phase is Phase.OVER:
        return "the hand is over"
    if view.to_act != seat:
        if view.phase is Phase.ANSWER:
            return f"not your turn: {_name(view.to_act, names)} is answering the call"
        return f"not your turn: {_name(view.to_act, names)} is to play"
    hand = set(view.hand)
    missing = [
        c for c in (*move.cards, *([move.card] if move.card is not None else [])) if c not in hand
    ]
    if view.phase is Phase.ANSWER:
        if action in (Action.CHALLENGE, Action.FOLD):
            return None
        return f"{_name(view.caller, names)} called: answer with challenge or fold"
    if action in (Action.CHALLENGE, Action.FOLD):
        return "there is no call to answer"
    if view.phase is Phase.START:
        if action is Action.CALL:
            if not view.opened[seat]:
                return "you cannot call before you have a meld on the table"
            if view.blocked[seat]:
                return "you cannot call this turn: someone laid off onto your meld"
            return None
        if action is Action.PICK:
            return _pick_reason(move, view, missing)
        if action is Action.DRAW:
            return None
        return "draw or pick first"
    if action is Action.CALL:
        if view.turn == 0:
            return "the dealer cannot call on the first turn"
        return "call only at the start of your turn, before drawing"
    if action in (Action.DRAW, Action.PICK):
        if view.turn == 0:
            return "the dealer's first turn has no draw: play melds, then discard"
        return "you already drew or picked this turn: meld, sapaw or discard"
    if missing:
        return f"{_show(missing)} not in your hand"
    last = (
        len(move.cards) >= len(hand)
        if action in (Action.MELD, Action.SECRET)
        else (action is Action.SAPAW and len(hand) == 1)
    )
    if action is Action.DISCARD:
        if view.options.no_sapawable_discard:
            assert move.card is not None
            if any(m.accepts(move.card) for m in view.melds):
                return f"{move.card} could be laid off, so it may not be discarded (house rule)"
        return None
    if action is Action.SAPAW:
        assert move.card is not None
        meld = next((m for m in view.melds if m.id == move.meld), None)
        if meld is None:
            return f"there is no meld {move.meld}"
        if meld.secret:
            return f"meld {meld.id} is secret: it takes no cards"
        if not fits(meld.cards, move.card):
            return f"{move.card} does not fit meld {meld.id} ({_show(meld.cards)})"
    elif action is Action.SECRET:
        if len(move.cards) != 4 or len({c.rank for c in move.cards}) != 1:
            return f"{_show(move.cards)} is not four of a kind"
    elif action is Action.MELD and meld_kind(move.cards) is None:
        return f"{_show(move.cards)} is not a meld (a set of 3-4 or a run of 3+ in one suit)"
    if last and view.options.tongits_needs_discard:
        return "house rule: your last card must leave by a discard"
    return None


def _pick_reason(move: Move, view: SeatView, missing: Sequence[Card]) -> str | None:
    top = view.top
    if top is None:
        return "the discard pile is empty: draw"
    if move.meld is not None:
        if not view.options.pick_to_sapaw:
            return f"{top} may only be picked into a new meld: pick two cards that meld with it"
        meld = next((m for m in view.melds if m.id == move.meld), None)
        if meld is None:
            return f"there is no meld {move.meld}"
        if not meld.accepts(top):
            return f"{top} does not fit meld {meld.id}"
        return None
    if missing:
        return f"{_show(missing)} not in your hand"
    if len(move.cards) < 2:
        return f"pick needs two or more of your cards that meld with {top}"
    if meld_kind((*move.cards, top)) is None:
        return f"{_show(move.cards)} with {top} is not a meld"
    if len(move.cards) >= len(view.hand) and view.options.tongits_needs_discard:
        return "house rule: your last card must leave by a discard"
    return None


def read_command(line: str, view: SeatView | None, names: Sequence[str] = ()) -> Command:
    """Parse ``line`` and, for a move, check it against the view's legal moves; raise
    ``CommandError`` with the reason if it should not be sent."""
    command = parse_command(line)
    if isinstance(command, Local):
        return command
    if view is None:
        raise CommandError("no hand is being played yet")
    reason = why_not(command, view, names)
    if reason is not None:
        raise CommandError(reason)
    return command


def help_lines() -> list[str]:
    """The commands, two to a line so that they fit an 80-column screen."""
    cells = [f"{spec.usage:<19}{spec.help:<20}" for spec in COMMANDS.values()]
    return [
        "".join(f"{cell:<40}" for cell in cells[i : i + 2]).rstrip()
        for i in range(0, len(cells), 2)
    ]
