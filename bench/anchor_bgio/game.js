// A tongits-sized game for boardgame.io: three players, a 52-card deck, thirteen cards each
// (twelve for the others), a stock and a discard pile; a turn is two moves, draw then discard.
// Each player sees its own hand and the others' card counts (playerView), as in tongits.
// No rule of tongits is played here: this is the anchor's traffic, not the game.
const { INVALID_MOVE } = require('boardgame.io/core');

const Tongits = {
  name: 'tongits',
  minPlayers: 3,
  maxPlayers: 3,
  setup: ({ random }) => {
    const deck = random.Shuffle(Array.from({ length: 52 }, (_, i) => i));
    return {
      hands: { 0: deck.slice(0, 13), 1: deck.slice(13, 25), 2: deck.slice(25, 37) },
      stock: deck.slice(37),
      discards: [],
      drawn: false,
    };
  },
  moves: {
    draw: ({ G, playerID }) => {
      if (G.drawn) return INVALID_MOVE;
      if (G.stock.length === 0) {
        // the pile, but its top card, becomes the stock: the game never ends
        G.stock = G.discards.splice(0, G.discards.length - 1).reverse();
      }
      G.hands[playerID].push(G.stock.pop());
      G.drawn = true;
    },
    discard: ({ G, playerID, events }, index) => {
      const hand = G.hands[playerID];
      if (!G.drawn || !Number.isInteger(index) || index < 0 || index >= hand.length) {
        return INVALID_MOVE;
      }
      G.discards.push(hand.splice(index, 1)[0]);
      G.drawn = false;
      events.endTurn();
    },
  },
  playerView: ({ G, playerID }) => ({
    hand: G.hands[playerID] || [],
    counts: Object.fromEntries(Object.entries(G.hands).map(([p, h]) => [p, h.length])),
    stock: G.stock.length,
    discards: G.discards,
    drawn: G.drawn,
  }),
};

module.exports = { Tongits };
