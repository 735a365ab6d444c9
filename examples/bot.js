#!/usr/bin/env node
// A Tongits bot in plain Node.js: the text mode of the protocol (one JSON object per line,
// docs/PROTOCOL.md) over a TCP socket, with no npm packages.
//
//   node examples/bot.js [HOST:PORT] [--table ID_OR_NAME] [--hands N] [--name NAME]
//
// It joins the table given with --table, or else the first public table with a free seat, or
// else creates a table with two server bots and a match of N hands (default 1; protocol 1.1).
// Then, whenever the newest `state` it has read lists legal moves for its seat (an older one,
// read in the same chunk, may offer moves that are gone), it plays the first one that is not
// `call`; after each `hand_result` it asks for the next hand. It exits with status 0 when the
// match is over (`match_over`), or, at a table whose match is open-ended, after N hands (it
// leaves first).
//
// A host that seats it (`tongits arena --bots "cmd:node examples/bot.js"`) says where in the
// environment, which wins over the command line: TONGITS_SERVER (HOST:PORT), TONGITS_TABLE,
// TONGITS_CODE and TONGITS_SEAT. Then it joins that seat and plays until the server closes.
'use strict';
const net = require('net');

const args = process.argv.slice(2);
const option = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const env = process.env;
const hosted = Boolean(env.TONGITS_SERVER);
const address = hosted ? env.TONGITS_SERVER
  : args[0] && !args[0].startsWith('--') ? args[0] : '127.0.0.1:7777';
const colon = address.lastIndexOf(':');
const host = colon > 0 ? address.slice(0, colon) : address;
const port = colon > 0 ? Number(address.slice(colon + 1)) : 7777;
const table = hosted ? env.TONGITS_TABLE : option('--table', null);
const hands = hosted ? Infinity : Number(option('--hands', '1'));
const name = option('--name', 'nodebot');

const socket = net.createConnection({ host, port });
socket.setEncoding('utf8');
let buffer = '';
let nextId = 1;
const pending = new Map(); // request id -> {resolve, reject}
let handsOver = 0;
let done = false;
let declared = false; // the table's match has a declared length: wait for match_over

// Every request carries an id; its reply echoes it as `id`, an error as `ref`.
function request(msg) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    socket.write(JSON.stringify({ ...msg, id }) + '\n');
  });
}

socket.on('data', (chunk) => {
  buffer += chunk;
  let newest = null; // the chunk's last state: only it is answered (an older one's moves may be gone)
  let newline;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, newline).trim();
    buffer = buffer.slice(newline + 1);
    if (!line) continue;
    const msg = JSON.parse(line);
    if (msg.type === 'state' && !pending.has(msg.id)) { newest = msg; continue; }
    if (msg.type === 'hand_result' || msg.type === 'match_over') newest = null; // its hand is over
    receive(msg);
  }
  if (newest) receive(newest);
});

function receive(msg) {
  const ref = msg.type === 'error' ? msg.ref : msg.id;
  if (ref !== undefined && pending.has(ref)) {
    const { resolve, reject } = pending.get(ref);
    pending.delete(ref);
    if (msg.type === 'error') reject(new Error(`${msg.code}: ${msg.message}`));
    else resolve(msg);
  } else if (msg.type === 'state' && msg.legal) {
    play(msg.legal);
  } else if (msg.type === 'hand_result') {
    handOver(msg.result, msg.last === true);
  } else if (msg.type === 'match_over') {
    const { hands: played, chips } = msg.standings;
    console.log(`match over (${msg.reason}) after ${played} hands: chips ${chips.join(' ')}`);
    done = true;
    socket.end();
  } else if (msg.type === 'error') {
    console.error(`server error ${msg.code}: ${msg.message}`);
  }
}

function play(legal) {
  const move = legal.find((m) => m.action !== 'call') || legal[0];
  request({ type: 'move', move }).catch((err) => console.error(`move refused: ${err.message}`));
}

// `last`: the match's last hand (protocol 1.1): the server closes the table with
// `match_over` and deals no more, so `next_hand` would be refused with `not_seated`.
async function handOver(result, last) {
  handsOver += 1;
  const winner = result.winner === undefined || result.winner === null ? 'none' : `seat ${result.winner}`;
  console.log(`hand ${handsOver} over: ${result.end}, winner ${winner}, chips ${result.chips.join(' ')}`);
  if (last) return;
  if (declared) {
    await request({ type: 'next_hand' }).catch(() => {});
  } else if (handsOver >= hands) {
    done = true;
    await request({ type: 'leave' });
    socket.end();
  } else {
    await request({ type: 'next_hand' }).catch(() => {}); // a turn timer may have dealt already
  }
}

async function main() {
  const welcome = await request({ type: 'hello', version: 1, name, kind: 'bot' });
  console.log(`connected to ${welcome.server}`);
  if (hosted) {
    const seat = Number(env.TONGITS_SEAT);
    const joined = await request({ type: 'join', table, seat, code: env.TONGITS_CODE });
    console.log(`seated at table ${joined.table}, seat ${joined.seat}`);
    done = true; // the host's server closing the connection is the normal end
    return;
  }
  const { tables } = await request({ type: 'list_tables' });
  const free = tables.filter((t) => !t.started && t.players < 3 && !t.private
    && (table === null || t.table === table || t.name === table));
  let joined;
  if (free.length > 0) {
    joined = await request({ type: 'join', table: free[0].table });
    declared = Object.keys(free[0].match_length || {}).length > 0;
  } else {
    joined = await request({ type: 'create_table', name: table || `${name}'s table`, bots: 2, hands });
    declared = true;
  }
  console.log(`seated at table ${joined.table}, seat ${joined.seat}`);
}

socket.on('close', () => process.exit(done ? 0 : 1));
socket.on('error', (err) => console.error(`connection: ${err.message}`));
main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
