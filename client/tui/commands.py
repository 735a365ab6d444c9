"""The command line's grammar: reading a typed line into a move or a local command, and saying
why a move would be refused before it is sent.

One table (``COMMANDS``) lists every command; parsing, completion and ``help`` all read it.
Legality is never decided here: a move is sendable exactly when it is in ``view.legal``. When it
is not, the engine says why from the seat's own view (``SeatView.why_illegal``) and ``why_not``
words its code, so the player reads "draw or pick first" instead of a bare refusal.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from tongits.engine import Action, Card, InvalidMove, Move, Phase, SeatView
from tongits.protocol import ErrorCode


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
        CommandSpec("pick", Args.PICK, "pick 7h 7s", "meld the top discard", Action.PICK),
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
        CommandSpec("log", Args.NONE, "log", "earlier lines (PgUp)"),
        CommandSpec("score", Args.NONE, "score", "chips in the match"),
        CommandSpec("options", Args.NONE, "options", "the table's rules"),
        CommandSpec("say", Args.TEXT, "say TEXT", "chat at the table"),
        CommandSpec("start", Args.NONE, "start", "deal (owner of a full table)"),
        CommandSpec("again", Args.NONE, "again", "a new match, same settings and players"),
        CommandSpec("lobby", Args.NONE, "lobby", "back to the server's tables"),
        CommandSpec("leave", Args.NONE, "leave", "give up the seat: to the lobby"),
        CommandSpec("help", Args.NONE, "help", "this list"),
        CommandSpec("quit", Args.NONE, "quit", "leave the game"),
    )
}


#: Between the moves of a turn the hint suggests ("pick 9♣ J♣ · discard 7♣"), which a player
#: may type as shown: each move is a line of its own.
TURN_SEPARATOR = "·"

#: Before what the hint's moves leave ("discard J♠ → count 24"): a move typed as shown, its
#: last with the arrow, is read without it (it was refused as "usage: discard Kd").
OUTCOME = "→"


class CommandError(Exception):
    """A line that cannot be sent; ``str()`` is the reason, for the player, and ``code`` the
    engine's code when the line is a move the engine refuses (``None``: it does not parse)."""

    def __init__(self, reason: str, code: str | None = None) -> None:
        super().__init__(reason)
        self.code = code


@dataclass(frozen=True, slots=True)
class Local:
    """A command handled by the client itself: ``hint``, ``sort``, ``log``, ``score``,
    ``options``, ``say``, ``start``, ``again``, ``lobby``, ``leave``, ``help``, ``quit``."""

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


#: Words players type for a move that are not its command here, and the command they mean.
_OTHER_WORDS: dict[str, str] = {
    "throw": "discard", "drop": "discard", "toss": "discard", "tapon": "discard",
    "bunot": "draw", "knock": "call", "fight": "challenge", "laban": "challenge",
    "layoff": "sapaw",
}

#: Words players type that name no move here, and what to type instead.
_NOT_COMMANDS: dict[str, str] = {
    "tongits": "Tongits is not typed: it is won when your last card leaves your hand",
    "take": "to take the discard: pick and your cards it melds with (pick 7h 7s); or draw",
}


def _spans(words: Sequence[str]) -> list[tuple[str, bool]]:
    """The words, a rank typed apart from its suit (``10 h``) joined to it, each with whether
    it is a card."""
    spans = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if not _is_card(word) and rest and _is_card(word + rest[0]):
            word += rest.pop(0)
        spans.append((word, _is_card(word)))
    return spans


def _cards_typed(words: Sequence[str]) -> list[str] | None:
    """``words`` read as cards, in the player's spelling (``_spans``); None when they are not
    all cards."""
    spans = _spans(words)
    return [word for word, _ in spans] if all(card for _, card in spans) else None


def _is_card(word: str) -> bool:
    try:
        Card.parse(word)
    except InvalidMove:
        return False
    return True


def _move_for(cards: Sequence[str]) -> str:
    """The move a player typing only cards most likely means, as an example to type."""
    return ("discard " if len(cards) == 1 else "meld ") + " ".join(cards)


def _unknown(word: str, rest: str = "") -> str:
    """Why ``word`` names no command, with the commands it may have meant: those it begins
    (``d``: discard or draw), a near spelling (``drw``: draw), another word for one
    (``throw``: discard), or, for a line of cards (``10h``), the move to put before them."""
    cards = _cards_typed([word, *_words_after(rest)])
    if cards:
        return f"name the move first: {_move_for(cards)}"
    lowered = word.lower()
    if lowered == "lay" and rest.lower().startswith("off"):  # "lay off 9s 1"
        lowered, rest = "layoff", rest[3:]
    if lowered in _NOT_COMMANDS:
        return _NOT_COMMANDS[lowered]
    if lowered in _OTHER_WORDS:
        typed = " ".join([_OTHER_WORDS[lowered], *_words_after(rest)])
        return f"unknown command {word!r}: here it is {typed}"
    meant = sorted(name for name in COMMANDS if name.startswith(lowered))
    taking = [name for name in meant if COMMANDS[name].args is not Args.NONE]
    if rest.strip() and len(taking) == 1:  # "d 10h": of discard and draw, only one takes cards
        return f"unknown command {word!r}: did you mean {taking[0]} {rest.strip()}?"
    if not meant:
        meant = sorted(difflib.get_close_matches(lowered, COMMANDS, n=3, cutoff=0.6))
    if meant:
        return f"unknown command {word!r}: did you mean {' or '.join(meant)}?"
    return f"unknown command {word!r}; `help` lists them"


#: Cards written without a space between them: ``3h4h5h``.
_RUN_TOGETHER = re.compile(r"(?:(?:10|[2-9tjqka])[cdhs♣♦♥♠]){2,}", re.IGNORECASE)
_ONE_CARD = re.compile(r"(?:10|[2-9tjqka])[cdhs♣♦♥♠]", re.IGNORECASE)


def parse_card(token: str) -> Card:
    try:
        return Card.parse(token)
    except InvalidMove:
        if _RUN_TOGETHER.fullmatch(token):
            apart = " ".join(_ONE_CARD.findall(token))
            raise CommandError(f"{token!r}: put a space between the cards: {apart}") from None
        raise CommandError(f"{token!r} is not a card (write 7h, Th or 10h, K♠)") from None


def parse_cards(tokens: Sequence[str]) -> tuple[Card, ...]:
    tokens = _together(tokens)
    cards = tuple(parse_card(t) for t in tokens)
    seen: set[Card] = set()
    for card, token in zip(cards, tokens, strict=True):
        if card in seen:
            raise CommandError(f"{token} is named twice: name each card once")
        seen.add(card)
    return cards


def _together(tokens: Sequence[str]) -> list[str]:
    """The words as cards when they are cards with a rank and its suit typed apart
    (``10 h``), else as they are (each is then read, or refused, on its own)."""
    return _cards_typed(tokens) or list(tokens)


def _is_meld_id(token: str) -> bool:
    """A meld number as typed: ``3``, or ``#3`` as the screen shows it."""
    return token.removeprefix("#").isdigit()


def _meld_id(token: str) -> int:
    if not _is_meld_id(token):
        raise CommandError(f"{token!r} is not a meld number")
    return int(token.removeprefix("#"))


def parse_command(line: str) -> Command:
    """Read one typed line; raise ``CommandError`` if it is not a well-formed command."""
    text = line.strip()
    if not text:
        raise CommandError("type a command; Tab completes, `help` lists them")
    head, _, rest = text.partition(" ")
    spec = resolve(head)
    if spec is None:
        raise CommandError(_unknown(head, rest))
    if spec.args is Args.TEXT:
        return _PARSE[spec.args](spec, rest)
    if TURN_SEPARATOR in rest:
        first = text.partition(TURN_SEPARATOR)[0].strip()
        raise CommandError(f"one move at a time: {first} first, then the next")
    return _PARSE[spec.args](spec, rest.partition(OUTCOME)[0])


def _words_after(rest: str) -> list[str]:
    return rest.replace(",", " ").split()


def _move_of(spec: CommandSpec) -> Action:
    """The action of a command that takes cards or a meld (every one is a move)."""
    assert spec.action is not None, f"{spec.name} takes arguments but is not a move"
    return spec.action


def _text_args(spec: CommandSpec, rest: str) -> Command:
    if not rest.strip():
        raise CommandError(f"usage: {spec.usage}")
    return Local(spec.name, rest.strip())


def _no_args(spec: CommandSpec, rest: str) -> Command:
    if spec.action is Action.DRAW and _words_after(rest):
        raise CommandError("draw takes nothing after it; the discard is taken by pick (pick 7h "
                           "7s, F3)")
    if _words_after(rest):
        raise CommandError(f"{spec.name} takes nothing after it")
    return Local(spec.name) if spec.action is None else Move(spec.action)


def _card_arg(spec: CommandSpec, rest: str) -> Command:
    tokens = _together(_words_after(rest))
    if len(tokens) != 1:
        raise CommandError(f"usage: {spec.usage} (one card)")
    return Move(_move_of(spec), card=parse_card(tokens[0]))


def _card_meld_args(spec: CommandSpec, rest: str) -> Command:
    tokens = [*_together(_words_after(rest)[:-1]), *_words_after(rest)[-1:]]
    if len(tokens) != 2:
        raise CommandError(f"usage: {spec.usage} (a card, then a meld number)")
    first, second = tokens
    if _is_meld_id(first) and not _is_meld_id(second):
        first, second = second, first
    return Move(_move_of(spec), card=parse_card(first), meld=_meld_id(second))


def _pick_args(spec: CommandSpec, rest: str) -> Command:
    """Cards from the hand, or (option pick_to_sapaw) the number of the meld to lay off on."""
    tokens = _words_after(rest)
    if len(tokens) == 1 and _is_meld_id(tokens[0]):
        return Move(_move_of(spec), meld=_meld_id(tokens[0]))
    if tokens and _cards_typed(tokens) is None and not any(_is_card(t) for t in tokens):
        raise CommandError("pick is followed by your cards that meld with the discard: pick "
                           "7h 7s, or F3")
    return _cards_args(spec, rest)


def _cards_args(spec: CommandSpec, rest: str) -> Command:
    tokens = _words_after(rest)
    if not tokens:
        raise CommandError(f"usage: {spec.usage} ({spec.help})")
    return Move(_move_of(spec), parse_cards(tokens))


#: ``parse_command``: how the words after each kind of command are read.
_PARSE: dict[Args, Callable[[CommandSpec, str], Command]] = {
    Args.NONE: _no_args,
    Args.TEXT: _text_args,
    Args.CARD: _card_arg,
    Args.CARD_MELD: _card_meld_args,
    Args.PICK: _pick_args,
    Args.CARDS: _cards_args,
}


def _show(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def why_not(move: Move, view: SeatView, names: Sequence[str] = ()) -> str | None:
    """``None`` if ``move`` is in the view's legal moves, else the engine's reason, in words.

    The reason is the engine's (``SeatView.why_illegal``: the check ``Hand.apply`` makes, asked
    of the seat's own view); this module only words its code for the player."""
    error = refusal(move, view)
    return None if error is None else _words(error, move, view, names)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a move may not be sent: the engine's code (a wire ``ErrorCode``) and message."""

    code: str
    message: str


def _words(error: Refusal, move: Move, view: SeatView, names: Sequence[str],
           typed: Mapping[Card, str] | None = None) -> str:
    if error.code == ErrorCode.CARD_NOT_IN_HAND:
        return _not_in_hand(move, view, typed or {})
    phrase = _PHRASES.get(error.code)
    return phrase(move, view, names) if phrase is not None else error.message


def refusal(move: Move, view: SeatView) -> Refusal | None:
    """The engine's verdict on ``move`` from this view: ``None`` when it may be sent."""
    if move in view.legal:
        return None
    try:
        error = view.why_illegal(move)
    except ValueError:  # a malformed view: the server's list of legal moves is the word
        error = None
    if error is None:
        return Refusal(ErrorCode.ILLEGAL_MOVE, f"{move} is not legal now")
    return Refusal(error.code, error.message)


def _name(seat: int | None, names: Sequence[str]) -> str:
    if seat is None:
        return "nobody"
    return names[seat] if seat < len(names) and names[seat] else f"seat {seat}"


def _not_your_turn(move: Move, view: SeatView, names: Sequence[str]) -> str:
    if view.seat is None:
        return "you are watching this table, not playing"
    if view.phase is Phase.ANSWER:
        return f"not your turn: {_name(view.to_act, names)} is answering the call"
    return f"not your turn: {_name(view.to_act, names)} is to play"


def _not_in_hand(move: Move, view: SeatView, typed: Mapping[Card, str]) -> str:
    """The cards missing from the hand as the player typed them (``10h``, ``10♥``: the screen
    writes ``T♥``), and the cards of the same rank the hand does hold."""
    named = (*move.cards, *([move.card] if move.card is not None else []))
    missing = [c for c in named if c not in view.hand]
    top = view.discards[-1] if view.discards else None
    if move.action is Action.PICK and top is not None and missing == [top]:
        return f"{typed.get(top, top)} is the discard you take: name only your own cards " \
               "(pick 7h 7s)"
    said = " ".join(typed.get(card, str(card)) for card in missing)
    ranks = {card.rank for card in missing}
    held = [card.pretty() for card in view.hand if card.rank in ranks]
    return f"{said} not in your hand" + (f"; you have {' '.join(held)}" if held else "")


def _dealer_first_turn(move: Move, view: SeatView, names: Sequence[str]) -> str:
    if move.action is Action.CALL:
        return "the dealer cannot call on the first turn"
    return "the dealer's first turn has no draw: play melds, then discard"


def _pick_needs_meld(move: Move, view: SeatView, names: Sequence[str]) -> str:
    if move.meld is not None:
        return f"{view.top} may only be picked into a new meld: pick two cards that meld with it"
    return (f"{_show(move.cards)} with {view.top} is not a meld: pick two or more of your "
            f"cards that meld with {view.top}")


def _cannot_sapaw(move: Move, view: SeatView, names: Sequence[str]) -> str:
    card = move.card if move.card is not None else view.top
    meld = view.melds[move.meld] if move.meld is not None else None
    if meld is None:
        return f"{card} does not fit that meld"
    if meld.secret:
        return f"meld {meld.id} is secret: it takes no cards"
    return f"{card} does not fit meld {meld.id} ({_show(meld.cards)})"


Phrase: TypeAlias = Callable[[Move, SeatView, Sequence[str]], str]

#: The player's words for each engine code (``IllegalMove.code``); others show the engine's.
_PHRASES: dict[str, Phrase] = {
    "hand_over": lambda m, v, n: "the hand is over",
    "not_your_turn": _not_your_turn,
    "must_answer": lambda m, v, n: f"{_name(v.caller, n)} called: answer with challenge or fold",
    "no_call": lambda m, v, n: "there is no call to answer",
    "not_opened": lambda m, v, n: "you cannot call before you have a meld on the table",
    "call_blocked": lambda m, v, n: "you cannot call this turn: someone laid off onto your meld",
    "must_acquire": lambda m, v, n: "draw or pick first",
    "dealer_first_turn": _dealer_first_turn,
    "call_at_start": lambda m, v, n: "call only at the start of your turn, before drawing",
    "already_acquired": lambda m, v, n: (
        "you already drew or picked this turn: meld, sapaw or discard"
    ),
    "empty_discard": lambda m, v, n: "the discard pile is empty: draw",
    "pick_needs_meld": _pick_needs_meld,
    "no_such_meld": lambda m, v, n: f"there is no meld {m.meld}",
    "cannot_sapaw": _cannot_sapaw,
    "not_a_meld": lambda m, v, n: (
        f"{_show(m.cards)} is not a meld (a set of 3-4 or a run of 3+ in one suit)"
    ),
    "not_four_of_a_kind": lambda m, v, n: f"{_show(m.cards)} is not four of a kind",
    "must_keep_card": lambda m, v, n: "house rule: your last card must leave by a discard",
    "sapawable_discard": lambda m, v, n: (
        f"{m.card} could be laid off, so it may not be discarded (house rule)"
    ),
}


def read_command(line: str, view: SeatView | None, names: Sequence[str] = ()) -> Command:
    """Parse ``line`` and, for a move, check it against the view's legal moves; raise
    ``CommandError`` with the reason if it should not be sent."""
    try:
        command = parse_command(line)
    except CommandError as unread:
        fits = _fits(line, view)
        raise (unread if fits is None else CommandError(fits)) from None
    if isinstance(command, Local):
        return command
    if view is None:
        raise CommandError("no hand is being played yet")
    error = refusal(command, view)
    if error is not None:
        raise CommandError(_words(error, command, view, names, _spelled(line)), error.code)
    return command


def _fits(line: str, view: SeatView | None) -> str | None:
    """For ``sapaw CARD`` without a meld number: the melds the card may be laid off on now,
    as the line to type, or that it fits none (None when the line is something else, or the
    seat may not lay off now: the usage is the answer then)."""
    head, _, rest = line.strip().partition(" ")
    words = _words_after(rest)
    cards = _cards_typed(words)
    if view is None or resolve(head) is not COMMANDS["sapaw"] or not cards or len(cards) != 1:
        return None
    card = Card.parse(cards[0])
    melds = [move.meld for move in view.legal
             if move.action is Action.SAPAW and move.card == card]
    if not melds and view.phase is Phase.PLAY and view.legal and card in view.hand:
        return f"{cards[0]} fits no meld on the table now"
    if not melds:
        return None
    return f"which meld? {cards[0]} fits " + " or ".join(
        f"#{meld} (sapaw {cards[0]} {meld})" for meld in melds)


def _spelled(line: str) -> dict[Card, str]:
    """Each card of a typed line, in the player's own spelling (``10h``, ``10 h``, ``T♥``)."""
    words = _words_after(line.strip().partition(" ")[2])
    return {Card.parse(word): word for word, card in _spans(words) if card}


def help_lines(cols: int = 80) -> list[str]:
    """The moves two to a line, then the client's own commands, so that help fits the log of
    an 80×24 screen; on a narrower screen (``cols``) one move to a line. The client's commands
    take as many lines as they need, so that nothing is cut off."""
    moves = [f"{spec.usage:<19}{spec.help:<20}" for spec in COMMANDS.values() if spec.action]
    local = [spec.usage for spec in COMMANDS.values() if spec.action is None]
    per_line = 2 if cols >= 80 else 1
    rows: list[list[str]] = [[]]
    for word in local:
        if rows[-1] and len("also: " + " · ".join([*rows[-1], word])) > cols - 2:
            rows.append([])
        rows[-1].append(word)
    return [*("".join(f"{cell:<40}" for cell in moves[i : i + per_line]).rstrip()
              for i in range(0, len(moves), per_line)),
            *(("also: " if i == 0 else "      ") + " · ".join(row) for i, row in enumerate(rows))]
