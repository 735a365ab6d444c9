"""Completion in two stages (pgcli's ``suggest_type`` then ``pgcompleter``).

Stage one, ``suggest(text)``, is a pure function of the typed text alone: it says what kind of
word comes next and what has been typed already (``sapaw 8d `` wants a meld id that accepts
``8d``). Stage two, ``candidates(suggestion, view)``, turns that into words drawn only from the
view's legal moves, so only legal things complete. ``MoveCompleter`` glues both to prompt_toolkit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from tongits.engine import Action, Card, InvalidMove, Move, SeatView

from .commands import COMMANDS, Args, CommandSpec, resolve


class Want(StrEnum):
    """The kind of word that comes next."""

    COMMAND = "command"
    PICK = "pick"  # hand cards melding with the top discard (or a meld id, pick_to_sapaw)
    MELD_CARDS = "meld_cards"  # hand cards forming a meld
    SECRET_CARDS = "secret_cards"  # four of a kind from the hand
    SAPAW_CARD = "sapaw_card"  # a hand card that some meld accepts
    SAPAW_MELD = "sapaw_meld"  # a meld id accepting ``card``
    DISCARD_CARD = "discard_card"  # a card in hand
    TEXT = "text"  # free text (chat)
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class Suggestion:
    want: Want
    word: str = ""  # the partial word under the cursor, replaced by a completion
    given: tuple[Card, ...] = ()  # cards already typed for this command
    card: Card | None = None  # the card of ``sapaw CARD ``


_CARD_WANTS = {
    Action.PICK: Want.PICK,
    Action.MELD: Want.MELD_CARDS,
    Action.SECRET: Want.SECRET_CARDS,
}


def suggest(text: str) -> Suggestion:
    """What comes next after ``text`` (the line up to the cursor)."""
    tokens = text.replace(",", " ").split()
    ends_word = bool(text) and not (text[-1].isspace() or text[-1] == ",")
    word = tokens.pop() if ends_word and tokens else ""
    if not tokens:
        return Suggestion(Want.COMMAND, word)
    spec = resolve(tokens[0])
    if spec is None:
        return Suggestion(Want.NOTHING, word)
    return _SUGGEST[spec.args](spec, tokens[1:], word)


def _no_words(_spec: CommandSpec, _args: list[str], word: str) -> Suggestion:
    return Suggestion(Want.NOTHING, word)


def _text(_spec: CommandSpec, _args: list[str], word: str) -> Suggestion:
    return Suggestion(Want.TEXT, word)


def _pick_words(spec: CommandSpec, args: list[str], word: str) -> Suggestion:
    """Cards, unless a meld id was typed (``pick 3``, with pick_to_sapaw): nothing follows it."""
    if any(a.isdigit() for a in args):
        return Suggestion(Want.NOTHING, word)
    return _group_words(spec, args, word)


def _group_words(spec: CommandSpec, args: list[str], word: str) -> Suggestion:
    given = _cards(args)
    if given is None or spec.action not in _CARD_WANTS:
        return Suggestion(Want.NOTHING, word)
    return Suggestion(_CARD_WANTS[spec.action], word, given)


def _sapaw_words(_spec: CommandSpec, args: list[str], word: str) -> Suggestion:
    if not args:
        return Suggestion(Want.SAPAW_CARD, word)
    card = _cards(args[:1])
    if len(args) == 1 and card:
        return Suggestion(Want.SAPAW_MELD, word, card=card[0])
    return Suggestion(Want.NOTHING, word)


def _discard_words(_spec: CommandSpec, args: list[str], word: str) -> Suggestion:
    return Suggestion(Want.NOTHING if args else Want.DISCARD_CARD, word)


#: ``suggest``: after the command word, what its arguments ask for next.
_SUGGEST: dict[Args, Callable[[CommandSpec, list[str], str], Suggestion]] = {
    Args.NONE: _no_words,
    Args.TEXT: _text,
    Args.PICK: _pick_words,
    Args.CARDS: _group_words,
    Args.CARD_MELD: _sapaw_words,
    Args.CARD: _discard_words,
}


def _cards(tokens: Iterable[str]) -> tuple[Card, ...] | None:
    try:
        return tuple(Card.parse(t) for t in tokens)
    except InvalidMove:
        return None


def card_prefix(word: str) -> str:
    """A typed card prefix in canonical lower case: ``10`` → ``t``, ``K♠`` → ``ks``; a lone
    ``1`` (no rank is 1: the ace is ``A``) is the start of ``10``."""
    w = word.strip()
    for symbol, char in (("♣", "c"), ("♦", "d"), ("♥", "h"), ("♠", "s")):
        w = w.replace(symbol, char)
    if w.startswith("10"):
        w = "t" + w[2:]
    elif w == "1":
        w = "t"
    return w.lower()


def card_matches(card: Card, word: str) -> bool:
    return str(card).lower().startswith(card_prefix(word))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One completion: ``text`` replaces the word under the cursor."""

    text: str
    meta: str = ""


def candidates(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    """Stage two: the words for ``s`` that lead only to legal moves of ``view``."""
    words = _CANDIDATES.get(s.want)
    return words(s, view) if words is not None else []


def _legal(view: SeatView | None) -> tuple[Move, ...]:
    return view.legal if view is not None else ()


#: Commands for once a hand is over: a review grades a finished hand; a match ends with one.
AFTER_THE_HAND = ("review", "again", "lobby")


def _command_words(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    actions = {m.action for m in _legal(view)}
    over = view is not None and view.result is not None
    out = [
        Candidate(name if spec.args is Args.NONE else name + " ", spec.help)
        for name, spec in COMMANDS.items()
        if (spec.action is None or spec.action in actions)
        and name.startswith(s.word.lower())
        and (over or name not in AFTER_THE_HAND)
        and (view is None or name != "start")  # a start deals a match's first hand
    ]
    return sorted(out, key=lambda c: COMMANDS[c.text.strip()].action is None)


def _group_cards(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    action = _GROUP_ACTIONS[s.want]
    return _combinations(s, [m for m in _legal(view) if m.action is action], view)


def _sapaw_cards(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    fits_into: dict[Card, list[int]] = {}
    for m in _legal(view):
        if m.action is Action.SAPAW and m.card is not None and m.meld is not None:
            fits_into.setdefault(m.card, []).append(m.meld)
    return [
        Candidate(str(c), "→ meld " + ", ".join(str(i) for i in ids))
        for c, ids in sorted(fits_into.items())
        if card_matches(c, s.word)
    ]


def _sapaw_melds(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    melds = {m.id: m for m in view.melds} if view is not None else {}
    out = []
    for m in _legal(view):
        if (
            m.action is Action.SAPAW and m.card == s.card and m.meld is not None
            and str(m.meld).startswith(s.word)
        ):
            shown = melds.get(m.meld)
            meta = " ".join(str(c) for c in shown.cards) if shown else ""
            out.append(Candidate(str(m.meld), meta))
    return out


def _discard_cards(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    if view is None:
        return []
    return [
        Candidate(str(m.card), f"count → {view.count((m.card,))}")
        for m in view.legal
        if m.action is Action.DISCARD and m.card is not None and card_matches(m.card, s.word)
    ]


#: The action whose legal moves complete each kind of card group.
_GROUP_ACTIONS = {Want.PICK: Action.PICK, Want.MELD_CARDS: Action.MELD,
                  Want.SECRET_CARDS: Action.SECRET}

#: ``candidates``: the words for each kind of suggestion (none for text or nothing).
_CANDIDATES: dict[Want, Callable[[Suggestion, SeatView | None], list[Candidate]]] = {
    Want.COMMAND: _command_words,
    Want.PICK: _group_cards,
    Want.MELD_CARDS: _group_cards,
    Want.SECRET_CARDS: _group_cards,
    Want.SAPAW_CARD: _sapaw_cards,
    Want.SAPAW_MELD: _sapaw_melds,
    Want.DISCARD_CARD: _discard_cards,
}


def _combinations(s: Suggestion, moves: list[Move], view: SeatView | None) -> list[Candidate]:
    """Legal card groups that contain every card already typed; the completion is the rest of
    the group, with a card matching the partial word first."""
    given = set(s.given)
    top = view.top if view is not None else None
    out: list[Candidate] = []
    seen: set[str] = set()
    for m in moves:
        if m.meld is not None:
            if not given and str(m.meld).startswith(s.word):
                out.append(Candidate(str(m.meld), f"lay {top} off onto meld {m.meld}"))
            continue
        if not given <= set(m.cards):
            continue
        rest = [c for c in m.cards if c not in given]
        if not rest:
            continue
        if s.word:
            first = next((c for c in rest if card_matches(c, s.word)), None)
            if first is None:
                continue
            rest.remove(first)
            rest.insert(0, first)
        text = " ".join(str(c) for c in rest)
        if text in seen:
            continue
        seen.add(text)
        whole = [*m.cards, top] if m.action is Action.PICK and top is not None else m.cards
        out.append(
            Candidate(
                text, "→ " + " ".join(str(c) for c in sorted(whole, key=lambda c: (c.rank, c.suit)))
            )
        )
    return out


class MoveCompleter(Completer):
    """prompt_toolkit completer reading the current view through ``get_view``."""

    def __init__(self, get_view: Callable[[], SeatView | None]) -> None:
        self.get_view = get_view

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.strip() and not complete_event.completion_requested:
            return  # an empty line shows no menu until Tab asks for one
        s = suggest(text)
        for c in candidates(s, self.get_view()):
            yield Completion(c.text, start_position=-len(s.word), display_meta=c.meta)
