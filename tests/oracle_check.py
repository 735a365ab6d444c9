"""The engine played beside the rules oracle (``rules_oracle``), compared at every decision.

Used by ``tests/test_rules_oracle.py`` (a few hands per run) and ``bench/oracle_diff.py`` (many).
Each match is a seed: table options, deals and every choice come from ``random.Random(seed)``,
so a disagreement replays exactly. At every decision both sides must agree on whose turn it is
and its phase, the legal moves of that seat (either way: the engine allowing what the rules
forbid, or refusing what they allow), every seat's count, opened and blocked seats, and what
each seat's view holds (§11); at the end of a hand, on the whole result and chips (§9); and
after each hand, on the match's dealer and ledger (§3, §9's pot, §13).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rules_oracle import OracleError, OracleHand, OracleLedger, OracleResult, melds_within
from tongits.engine import (
    DECK,
    Action,
    Card,
    End,
    Hand,
    HandRecord,
    InvalidMove,
    Match,
    MeldView,
    Move,
    Options,
    ReplayError,
    Result,
    hand_record,
    parse_cards,
    seat_view,
)
from tongits.engine.options import CallTie, SapawBlock, Scoring, StockoutNoneOpen
from tongits.engine.policies import Policy, get_policy
from tongits.engine.view import seat_legal, seat_view_dict, seat_view_parts

#: The nine two-valued options of RULES.md §10 (``ante`` is the tenth): every combination is
#: one of ``2 ** 9`` tables, which ``options_for`` walks through in order.
COMBINATIONS = 2**9
ANTES = (0, 1, 5)
CARD_TEXT = re.compile(r"\b[A2-9TJQK][cdhs]\b")


def options_for(index: int, ante: int) -> Options:
    """The ``index``-th of the 512 combinations of the two-valued options, with ``ante``."""
    bits = [bool(index >> i & 1) for i in range(9)]
    return Options(
        pick_to_sapaw=bits[0],
        sapaw_block=SapawBlock.HAND if bits[1] else SapawBlock.NEXT_TURN,
        self_sapaw_blocks_call=bits[2],
        tongits_needs_discard=bits[3],
        call_tie=CallTie.CALLER if bits[4] else CallTie.CHALLENGER,
        stockout_none_open=StockoutNoneOpen.VOID if bits[5] else StockoutNoneOpen.COMPARE_ALL,
        no_sapawable_discard=bits[6],
        concealed_melds_count=bits[7],
        scoring=Scoring.TALLY if bits[8] else Scoring.PAYMENTS,
        ante=ante,
    )


def meldy_deck(rng: random.Random) -> list[Card]:
    """A deck whose dealt hands hold more sets, fours and runs than a shuffle gives, so that
    hands reach secret melds, lay-offs, early calls and Tongits often: each seat's cards are
    drawn partly as whole groups (a rank's cards, a stretch of a suit), the stock shuffled."""
    pool = list(DECK)
    rng.shuffle(pool)
    dealt: list[list[Card]] = [[], [], []]
    sizes = [13, 12, 12]
    for seat in range(3):
        while len(dealt[seat]) < sizes[seat]:
            room = sizes[seat] - len(dealt[seat])
            pick = rng.choice(pool)
            if rng.random() < 0.5:
                group = [c for c in pool if str(c)[0] == str(pick)[0]]
            else:
                group = []
                for card in DECK[DECK.index(pick) : DECK.index(pick) // 13 * 13 + 13]:
                    if card not in pool or len(group) == 5:
                        break
                    group.append(card)
            group = group[: rng.randint(1, min(room, len(group)))]
            for card in group:
                pool.remove(card)
                dealt[seat].append(card)
    deck = [dealt[i % 3].pop() for i in range(37)]  # group 0, of 13, is the dealer's
    return deck + pool


@dataclass
class Tally:
    """What a run checked: hands, decisions, how hands ended and which rules came up."""

    hands: int = 0
    decisions: int = 0
    matches: int = 0
    disagreements: list[str] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.hands += other.hands
        self.decisions += other.decisions
        self.matches += other.matches
        self.disagreements.extend(other.disagreements)
        self.seen.update(other.seen)


class Disagreement(Exception):
    """The engine and the oracle differ; the message says where and how."""


def result_of(oracle: OracleResult) -> Result:
    """The oracle's result in the engine's type, burned and challengers in seat order (they
    are compared as sets)."""
    return Result(End(oracle.end), oracle.winner, oracle.counts, tuple(sorted(oracle.burned)),
                  tuple(sorted(oracle.challengers)), oracle.chips)


def compare_state(hand: Hand, oracle: OracleHand) -> None:
    """Raise ``Disagreement`` unless the engine's position is the oracle's."""
    if oracle.phase == "over":
        compare_end(hand, oracle)
    elif hand.over:
        raise Disagreement(f"the engine ended the hand ({hand.result}), the rules did not")
    else:
        compare_turn(hand, oracle)
    for seat in range(3):
        if hand.count(seat) != oracle.count(seat):
            raise Disagreement(f"count of seat {seat}: engine {hand.count(seat)}, rules "
                               f"{oracle.count(seat)} ({sorted(map(str, oracle.hands[seat]))})")
        if hand.opened(seat) != oracle.opened[seat]:
            raise Disagreement(f"seat {seat} opened: engine {hand.opened(seat)}")
        if not hand.over and hand.call_blocked(seat) != oracle.blocked(seat):
            raise Disagreement(f"seat {seat} blocked: engine {hand.call_blocked(seat)}, "
                               f"rules {oracle.blocked(seat)}")
    for viewer in (0, 1, 2, None):
        compare_view(hand, oracle, viewer)


def compare_end(hand: Hand, oracle: OracleHand) -> None:
    if not hand.over or hand.result is None or oracle.result is None:
        raise Disagreement(f"the hand is over by the rules ({oracle.result}), not the engine")
    got, want = hand.result, result_of(oracle.result)
    got = Result(got.end, got.winner, got.counts, tuple(sorted(got.burned)),
                 tuple(sorted(got.challengers)), got.chips)
    if got != want:
        raise Disagreement(f"result: engine {got}, rules {want}")


def compare_turn(hand: Hand, oracle: OracleHand) -> None:
    """Whose turn, its phase, and its legal moves, both ways."""
    if (hand.to_act, hand.phase.value) != (oracle.to_act, oracle.phase):
        raise Disagreement(f"to act: engine seat {hand.to_act} {hand.phase.value}, "
                           f"rules seat {oracle.to_act} {oracle.phase}")
    got, want = set(hand.legal_moves()), oracle.legal()
    if got != want:
        raise Disagreement(f"legal moves of seat {hand.to_act}: the engine also allows "
                           f"{sorted(map(str, got - want))}, refuses "
                           f"{sorted(map(str, want - got))}")


def compare_view(hand: Hand, oracle: OracleHand, seat: int | None) -> None:
    """§11: a seat's view holds what it may know, and no card it may not have seen."""
    who = "a spectator" if seat is None else f"seat {seat}"
    view = seat_view(hand, seat)
    over = oracle.phase == "over"
    own = set() if seat is None else oracle.hands[seat]
    if set(view.hand) != own or len(view.hand) != len(own):
        raise Disagreement(f"{who}'s view: hand {sorted(map(str, view.hand))}")
    public = (tuple(len(h) for h in oracle.hands), len(oracle.stock), tuple(oracle.pile),
              tuple(oracle.opened))
    if (view.hand_sizes, view.stock, view.discards, view.opened) != public:
        raise Disagreement(f"{who}'s view: sizes, stock, discards or opened differ")
    if not over and view.blocked != tuple(oracle.blocked(s) for s in range(3)):
        raise Disagreement(f"{who}'s view: blocked {view.blocked}")
    compare_melds(view.melds, oracle, seat, who)
    history = [(step.seat, step.move, step.auto) for step in view.history]
    if history != oracle.history_seen_by(seat):
        raise Disagreement(f"{who}'s view: history {[str(step) for step in view.history]}")
    if not over and view.caller != oracle.caller:
        raise Disagreement(f"{who}'s view: caller {view.caller}")
    mine = seat is not None and seat == oracle.to_act and not over
    if set(view.legal) != (oracle.legal() if mine else set()):
        raise Disagreement(f"{who}'s view: legal moves {sorted(map(str, view.legal))}")
    if over and (view.revealed is None or [set(h) for h in view.revealed] != oracle.hands):
        raise Disagreement(f"{who}'s view after the hand: revealed {view.revealed}")
    compare_wire(hand, oracle, seat, who)


def compare_wire(hand: Hand, oracle: OracleHand, seat: int | None, who: str) -> None:
    """The maps a server sends (a whole view, its parts shared by every seat and the seat's
    own, the legal moves) show no card the seat may not know, and the seat's own count."""
    wired = seat_view_dict(hand, seat)
    if wired["count"] != (None if seat is None else oracle.count(seat)):
        raise Disagreement(f"{who}'s view: count {wired['count']}")
    shared, mine = seat_view_parts(hand, seat)  # the server sends ``shared`` to every seat
    for shown, may_know in (([wired, mine, seat_legal(hand, seat)], oracle.knowable(seat)),
                            (shared, oracle.knowable(None))):
        leaked = {Card.parse(t) for t in CARD_TEXT.findall(json.dumps(shown))} - may_know
        if leaked:
            raise Disagreement(f"{who}'s view shows {sorted(map(str, leaked))}, "
                               "which it may not know (§11)")


def compare_melds(melds: Sequence[MeldView], oracle: OracleHand, seat: int | None, who: str
                  ) -> None:
    """Every meld, its owner and who laid off what; another's secret meld without its cards."""
    if len(melds) != len(oracle.melds):
        raise Disagreement(f"{who}'s view: {len(melds)} melds")
    for shown, meld in zip(melds, oracle.melds, strict=True):
        hidden = meld.secret and meld.owner != seat and oracle.phase != "over"
        cards = set() if hidden else meld.cards
        if (shown.id, shown.owner, shown.secret, set(shown.cards)) != (
                meld.id, meld.owner, meld.secret, cards):
            raise Disagreement(f"{who}'s view of meld {meld.id}: {shown}")
        if dict(shown.laid_off) != dict(meld.laid_off):
            raise Disagreement(f"{who}'s view of meld {meld.id}'s lay-offs: {shown.laid_off}")


def near_moves(rng: random.Random, oracle: OracleHand, size: int) -> list[Move]:
    """``size`` well-formed moves close to the legal ones, most of them illegal: every action,
    cards of the seat's hand (and a card from elsewhere), meld ids that exist or not."""
    hand = sorted(oracle.hands[oracle.to_act])
    cards = [*hand, rng.choice(DECK)]
    melds = range(len(oracle.melds) + 1)
    made: list[Move] = [Move(a) for a in (Action.DRAW, Action.CALL, Action.CHALLENGE,
                                          Action.FOLD)]
    while len(made) < size:
        action = rng.choice([Action.PICK, Action.MELD, Action.SECRET, Action.SAPAW,
                             Action.DISCARD])
        if action is Action.PICK and oracle.options.pick_to_sapaw and rng.random() < 0.3:
            made.append(Move(action, meld=rng.choice(melds)))
        elif action in (Action.PICK, Action.MELD, Action.SECRET):
            low = {Action.PICK: 2, Action.MELD: 3, Action.SECRET: 4}[action]
            if len(cards) >= low:
                made.append(Move(action, cards=tuple(rng.sample(cards, rng.randint(low, low + 1)
                                                                if len(cards) > low else low))))
        elif action is Action.SAPAW:
            made.append(Move(action, card=rng.choice(cards), meld=rng.choice(melds)))
        else:
            made.append(Move(action, card=rng.choice(cards)))
    return made


def compare_refusals(rng: random.Random, hand: Hand, oracle: OracleHand, size: int) -> None:
    """What ``apply`` accepts (``why_illegal``) is what the rules allow, for the seat to act
    and for the others, on the legal moves and on moves near them."""
    seat = oracle.to_act
    legal = oracle.legal()
    for move in [*legal, *near_moves(rng, oracle, size)]:
        accepted = hand.why_illegal(seat, move) is None
        if accepted != (move in legal):
            raise Disagreement(f"seat {seat} {move}: the engine "
                               f"{'accepts' if accepted else 'refuses'} it, the rules "
                               f"{'allow' if move in legal else 'forbid'} it")
        other = (seat + rng.randrange(1, 3)) % 3
        if hand.why_illegal(other, move) is None:
            raise Disagreement(f"seat {other} {move} accepted while seat {seat} is to act")


def replay(record: Mapping[str, Any]) -> dict[str, Any]:
    """A hand record replayed by the oracle, in the shape of ``tongits replay --json``: the
    result (``burned`` and ``challengers`` in seat order), or the index of the first action
    the rules refuse."""
    oracle = OracleHand(parse_cards(record["deck"]), record["dealer"],
                        Options.from_dict(record["options"]))
    for index, action in enumerate(record["actions"]):
        try:
            oracle.apply(action["seat"], Move.from_dict(action))
        except (OracleError, InvalidMove):
            return {"error": {"index": index}}
    result = oracle.result
    if result is None:
        return {"result": None, "to_act": oracle.to_act, "phase": oracle.phase}
    return {"result": {"end": result.end, "winner": result.winner,
                       "counts": list(result.counts), "burned": sorted(result.burned),
                       "challengers": sorted(result.challengers), "chips": list(result.chips)}}


def broken(rng: random.Random, record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a hand record with one action dropped, repeated, moved, given to another seat,
    or given another card or meld id (as the public conformance's broken cases are made)."""
    actions = [dict(a) for a in record["actions"]]
    i = rng.randrange(len(actions))
    how = rng.randrange(5)
    if how == 0:
        del actions[i]
    elif how == 1:
        actions.insert(i, dict(actions[i]))
    elif how == 2 and i + 1 < len(actions):
        actions[i], actions[i + 1] = actions[i + 1], actions[i]
    elif how == 3:
        actions[i]["seat"] = (actions[i]["seat"] + rng.randrange(1, 3)) % 3
    elif "card" in actions[i]:
        actions[i]["card"] = str(rng.choice(DECK))
    elif "meld" in actions[i]:
        actions[i]["meld"] += rng.choice((-1, 1))
    else:
        actions.append({"seat": rng.randrange(3), "action": "draw"})
    return {**record, "actions": actions}


def engine_replay(record: Mapping[str, Any]) -> dict[str, Any]:
    """``replay``'s shape, from the engine's own replay of a record."""
    try:
        hand = HandRecord.from_dict(dict(record)).replay()
    except ReplayError as e:
        return {"error": {"index": e.index}}
    if hand.result is None:
        return {"result": None, "to_act": hand.to_act, "phase": hand.phase.value}
    result = hand.result.to_dict()
    return {"result": {**result, "burned": sorted(result["burned"]),
                       "challengers": sorted(result["challengers"])}}


def note_move(seen: Counter[str], oracle: OracleHand, seat: int, move: Move) -> None:
    """Which rules a move exercised (read from the oracle), for the coverage lines of the bench."""
    seen[move.action.value] += 1
    hand = oracle.hands[seat]
    if move.meld is not None:
        whose = "own" if oracle.melds[move.meld].owner == seat else "another's"
        seen[f"{move.action.value} onto {whose} meld"] += 1
    if oracle.phase == "start" and oracle.opened[seat] and oracle.blocked(seat):
        seen["start of a turn blocked from calling (§5)"] += 1
    if (move.action is Action.SAPAW and move.meld is not None and oracle.blocked(seat)
            and oracle.melds[move.meld].owner == seat and oracle.options.self_sapaw_blocks_call):
        seen["lay-off onto one's own meld while blocked (§5, §13)"] += 1
    if oracle.phase == "play" and oracle.options.tongits_needs_discard and any(
            m == frozenset(hand) for m in melds_within(frozenset(hand))):
        seen["tongits_needs_discard kept an emptying meld back"] += 1
    if (move.action is Action.DISCARD and oracle.options.no_sapawable_discard
            and all(any(m.takes(c) for m in oracle.melds) for c in hand)):
        seen["no_sapawable_discard with every card layable (§13)"] += 1


def note_tongits(seen: Counter[str], oracle: OracleHand) -> None:
    seat, move, _ = oracle.history[-1]
    seen[f"tongits by {move.action.value}"] += 1
    if oracle.turn == 0:
        seen["tongits on the dealer's first turn"] += 1
    if not oracle.opened[seat]:
        seen["tongits by a seat that never opened (lay-offs only)"] += 1


def note_end(seen: Counter[str], oracle: OracleHand) -> None:
    result = oracle.result
    assert result is not None
    seen[f"end {result.end}"] += 1
    if result.end == "tongits":
        note_tongits(seen, oracle)
    if result.end == "call" and result.challengers:
        seen[f"call challenged by {len(result.challengers)}"] += 1
        if result.winner != oracle.caller:
            seen["challenged call lost by the caller"] += 1
    if result.end in ("call", "stock"):
        contenders = sorted(result.counts[s] for s in range(3) if s not in result.burned)
        if len(contenders) > 1 and contenders[0] == contenders[1]:
            seen[f"tie for the lowest count at a {result.end} end"] += 1
    if result.end == "stock" and not any(oracle.opened):
        seen["stock-out with nobody opened (compare_all)"] += 1
    if result.burned and result.end != "void":
        seen["burned seat"] += 1
    if result.winner is not None and oracle.secrets(result.winner):
        seen["winner owns a secret meld"] += 1


#: A seat that never melds, picks or calls (it draws, discards and folds): with it, hands reach
#: stock-outs where few or no seats opened, and burned seats.
PASSIVE = "passive"
QUIET = (Action.DRAW, Action.DISCARD, Action.FOLD)
#: A seat that melds, picks and lays off whenever it can (a random one of those moves): with
#: it, hands reach Tongits by every kind of move, and lay-offs onto one's own melds.
EAGER = "eager"
PLAYS = (Action.PICK, Action.MELD, Action.SECRET, Action.SAPAW)


def choose(rng: random.Random, player: Policy | str | None, hand: Hand, moves: Sequence[Move]
           ) -> Move:
    """A bot's choice (to reach the ends a bot aims at), a passive one, or a random one; calls
    are made rarely at random, so that random hands reach stock-outs too."""
    if player == PASSIVE:
        quiet = [m for m in moves if m.action in QUIET]
        return rng.choice(quiet or list(moves))
    if player == EAGER:
        plays = [m for m in moves if m.action in PLAYS]
        return rng.choice(plays or [m for m in moves if m.action is not Action.CALL] or moves)
    if player is not None and not isinstance(player, str) and rng.random() < 0.8:
        return player(seat_view(hand, hand.to_act))
    quiet = [m for m in moves if m.action is not Action.CALL]
    if quiet and rng.random() < 0.9:
        return rng.choice(quiet)
    return rng.choice(list(moves))


#: The players a seat may be: a random legal mover, ``PASSIVE``, ``EAGER``, or a bot of
#: ``tongits.engine.policies`` by name (its search plays on copies of the hand: a copy that
#: shared state with the hand would show as a disagreement).
PLAYERS = ("random", PASSIVE, EAGER, "greedy", "strong")


def player(name: str, seed: int) -> Policy | str | None:
    if name == "random":
        return None
    return name if name in (PASSIVE, EAGER) else get_policy(name, seed)


def check_match(seed: int, hands: int = 3, combination: int | None = None,
                players: Sequence[str] = PLAYERS) -> Tally:
    """Play one match of ``hands`` hands with the engine and the oracle side by side, at the
    table of ``combination`` (``options_for``; by default one drawn from the seed) and an ante
    drawn from the seed, each seat one of ``players``. Stops at the first disagreement."""
    rng = random.Random(seed)
    drawn = rng.randrange(COMBINATIONS)
    options = options_for(drawn if combination is None else combination, rng.choice(ANTES))
    tally = Tally(matches=1)
    tally.seen.update(f"{k}={v}" for k, v in options.to_dict().items())
    seat_players = [player(rng.choice(players), seed) for _ in range(3)]
    match = Match(options, seed)
    ledger = OracleLedger(options.ante)
    dealer = match.dealer
    for number in range(hands):
        if match.dealer != dealer:
            tally.disagreements.append(f"seed {seed} hand {number}: dealer {match.dealer}, "
                                       f"rules {dealer} (§3)")
            return tally
        hand = match.deal()
        ledger.deal()
        if rng.random() < 0.5:
            hand = Hand(meldy_deck(rng), hand.dealer, options)
        oracle = OracleHand(hand.deck, hand.dealer, options)
        tally.hands += 1
        try:
            play(rng, hand, oracle, seat_players, tally)
        except Disagreement as e:
            steps = [f"{s.seat}:{s.move}" for s in hand.steps]
            tally.disagreements.append(
                f"seed {seed} hand {number} ({options.to_dict()}, dealer {hand.dealer}, deck "
                f"{' '.join(map(str, hand.deck))}) after {steps}: {e}")
            return tally
        assert hand.result is not None and oracle.result is not None
        record = hand_record(hand)
        for replayed in (record, broken(rng, record)):  # as written, then one action broken
            if engine_replay(replayed) != replay(replayed):
                tally.disagreements.append(
                    f"seed {seed} hand {number}: the record {json.dumps(replayed)} replays "
                    f"as {engine_replay(replayed)}, by the rules {replay(replayed)}")
                return tally
        note_end(tally.seen, oracle)
        taken = match.settle(hand.result)
        want = ledger.settle(oracle.result)
        if (taken, match.ledger, match.pot) != (want, ledger.chips, ledger.pot):
            tally.disagreements.append(
                f"seed {seed} hand {number}: ledger {match.ledger} pot {match.pot} took "
                f"{taken}, rules {ledger.chips} pot {ledger.pot} took {want} (§9, §13)")
            return tally
        if taken:
            tally.seen["pot taken"] += 1
        winner = oracle.result.winner
        dealer = hand.dealer if winner is None else winner  # §3: the winner deals next
    return tally


def play(rng: random.Random, hand: Hand, oracle: OracleHand,
         seat_players: list[Policy | str | None], tally: Tally) -> None:
    """One hand to its end, compared before every decision and at the end."""
    while True:
        compare_state(hand, oracle)
        if hand.over:
            return
        tally.decisions += 1
        compare_refusals(rng, hand, oracle, size=8)
        seat = hand.to_act
        move = choose(rng, seat_players[seat], hand, hand.legal_moves())
        note_move(tally.seen, oracle, seat, move)
        hand.apply(seat, move)
        oracle.apply(seat, move)
