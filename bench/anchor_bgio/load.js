// The anchor's clients: `node load.js PORT paced|flat TABLES SECONDS`. Each table is a match of
// three socket.io clients over WebSocket, one per player, as bench/server_load.py seats three
// connections per table. paced: each table acts once a second on a fixed schedule spread over
// the second (the player to move draws or discards), timed from the move sent until the mover
// hears the new state; flat: every table's player to move acts the moment it hears its turn.
// Prints one JSON line: {actions, elapsed, samples (paced, seconds)} once the window is over.
// Before the window, "ready" once every table is seated and has warmed up (untimed moves).
const { io } = require('socket.io-client');

const [port, mode, tablesArg, secondsArg] = process.argv.slice(2);
const tables = Number(tablesArg);
const seconds = Number(secondsArg);
const url = `http://127.0.0.1:${port}/tongits`;

class Seat {
  constructor(table, playerID) {
    this.table = table;
    this.playerID = playerID;
    this.socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false });
    this.state = null;
    this.waiters = [];
    this.socket.on('connect_error', (error) => {
      console.error(`cannot connect to ${url}: ${error.message}`);
      process.exit(1);
    });
    this.socket.on('sync', (matchID, info) => this.take(info.state));
    this.socket.on('update', (matchID, state) => this.take(state));
  }
  take(state) {
    if (this.state && state._stateID <= this.state._stateID) return;
    this.state = state;
    this.table.heard(this, state);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
  newer(stateID) {
    if (this.state && this.state._stateID > stateID) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve)).then(() => this.newer(stateID));
  }
  sync(matchID) {
    this.socket.emit('sync', matchID, this.playerID, undefined, 3);
    return this.newer(-1);
  }
  move(state) {
    const type = state.G.drawn ? 'discard' : 'draw';
    const args = state.G.drawn ? [state.G.hand.length - 1] : [];
    const action = { type: 'MAKE_MOVE', payload: { type, args, playerID: this.playerID } };
    this.socket.emit('update', action, state._stateID, this.table.matchID, this.playerID);
  }
}

class Table {
  constructor(index) {
    this.matchID = `m${index}`;
    this.flat = false;
    this.seats = ['0', '1', '2'].map((p) => new Seat(this, p));
    this.actions = 0;
  }
  async seat() {
    for (const seat of this.seats) await seat.sync(this.matchID);
  }
  newest() {
    return this.seats.reduce((a, b) => (b.state._stateID > a.state._stateID ? b : a)).state;
  }
  heard(seat, state) {
    if (seat.playerID === '0') this.actions += 1; // every seat hears every state
    if (this.flat && state.ctx.currentPlayer === seat.playerID) seat.move(state);
  }
  async step() {
    const state = this.newest();
    const actor = this.seats[Number(state.ctx.currentPlayer)];
    await actor.newer(state._stateID - 1);
    const start = process.hrtime.bigint();
    actor.move(actor.state);
    await actor.newer(state._stateID);
    return Number(process.hrtime.bigint() - start) / 1e9;
  }
}

async function main() {
  const all = [];
  for (let t = 0; t < tables; t += 1) {
    const table = new Table(t);
    await table.seat();
    all.push(table);
  }
  // untimed warm-up: each table plays 0-59 moves, as server_load.py's (b) does
  await Promise.all(all.map(async (table, index) => {
    for (let i = 0; i < index % 60; i += 1) await table.step();
  }));
  console.log('ready');
  const samples = [];
  const begin = performance.now();
  const before = all.reduce((n, t) => n + t.actions, 0);
  if (mode === 'flat') {
    for (const table of all) {
      table.flat = true;
      const state = table.newest();
      table.seats[Number(state.ctx.currentPlayer)].move(state);
    }
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    for (const table of all) table.flat = false;
  } else {
    await Promise.all(all.map(async (table, index) => {
      let tick = begin + (1000 * index) / tables;
      while (tick < begin + seconds * 1000) {
        const wait = tick - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        samples.push(await table.step());
        tick += 1000;
      }
    }));
  }
  const elapsed = (performance.now() - begin) / 1000;
  const actions = all.reduce((n, t) => n + t.actions, 0) - before;
  // exit once the line is written: a pipe takes it in parts, and exit would cut it short
  process.stdout.write(`${JSON.stringify({ actions, elapsed, samples })}\n`, () => process.exit(0));
}

main();
