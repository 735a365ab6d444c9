// Tongits in the browser: the documented protocol's text mode over a WebSocket on the page's own
// origin (docs/PROTOCOL.md). The page decides no rule: the moves it offers are the server's
// `legal` list (a discard is a tap on its card, every other move a button), the count shown is
// the view's `count`, the hand's story is told from `view.history` and the hand's `result`, in
// the words of the phrasebook the terminal uses too (/phrases.json). The seat token lives in
// localStorage only (never in an address), so a reload or a dropped connection resumes the seat.
"use strict";

const SUITS = { c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"] };
const RANKS = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const SEAT_KEY = "tongits.seat";
const NAME_KEY = "tongits.name";
const PASSWORD_KEY = "tongits.password"; // sessionStorage: this tab only
const ACCOUNT_KEY = "tongits.account"; // localStorage: the ladder account's name and secret key
const HEARTBEAT = 20; // seconds, said in hello; a ping goes every HEARTBEAT / 2
const CONNECT_WAIT = 10; // seconds a new connection may take to open before another is begun
const WAKE_WINDOW = 5; // seconds after the page wakes in which a loss is counted from its sleep (awake)
const REMATCH_KEY = "tongits.rematch"; // localStorage: the match just over, for "Again" after a reload
const LOG_KEY = "tongits.log"; // sessionStorage: the table's log, kept across a reload
const ALERT_KEY = "tongits.alert"; // localStorage: sound and vibration on your turn
const TITLE = "Tongits";
// The key of each kind of move: the same key always means the same kind (a letter, so that
// no number means "draw" on one turn and "call" on the next).
const MOVE_KEYS = { draw: "d", pick: "p", meld: "m", secret: "s", sapaw: "l", call: "c", challenge: "x", fold: "f" };
// What a refused invite link means to the friend who tapped it, by error code.
const INVITE_REFUSED = {
  no_such_table: "This invite's table is closed: its match is over, or everyone left. Open a new table below, or ask for a new link.",
  bad_join_code: "This invite link's code is wrong: ask for the link again, whole.",
};
// The order of the moves' buttons, by kind.
const MOVE_ORDER = ["draw", "pick", "meld", "secret", "sapaw", "call", "challenge", "fold"];

const $ = (id) => document.getElementById(id);

const S = {
  ws: null, open: false, welcomed: false, nextId: 1, pending: new Map(),
  name: localStorage.getItem(NAME_KEY) || "",
  password: sessionStorage.getItem(PASSWORD_KEY) || "",
  needPassword: false,
  table: null, tableName: "", seat: null, spectator: false, code: null,
  seq: null, hand: null, view: null, legal: [], deadline: null, seats: [],
  standings: null, result: null, nextDeal: null, matchOver: null,
  log: [], heard: [], invite: null, askedNext: false, reconnects: 0, lobbyTimer: null, pingedAt: null,
  lostAt: null, // Date.now() when the connection was lost, until it is back (link.back)
  asleepAt: null, // Date.now() when the page was hidden or frozen, until it wakes
  slept: null, // once it wakes, for WAKE_WINDOW seconds: { since } the page went to sleep
  optionChoices: [], // welcome.options: the table options the server accepts, and their values
  phrases: {}, // the phrasebook (/phrases.json)
  told: { hand: null, steps: 0 }, // the steps of the hand already in the log
  timedOut: null, // the turn the server played for this seat, said until its next turn (timedOut)
  entry: null, // the table's entry in the lobby (its name, length): list_tables with `table`
  rematch: null, // after match_over: the old table and this seat's token there, for "again"
  drawn: null, // the card this seat just drew from the stock, until its turn ends
  confirming: null, // the move or leave that waits for its confirmation
  turnWords: "", // the turn line's words, so that the live region changes only with them
  alerted: false, // whether this turn was already signalled (title, sound, notification)
  focusAfter: false, // a move was just sent: put the focus back once the next state is shown
  ladder: false, // the server keeps a ladder (capability `ladder`)
  queued: false, // waiting for a rated match
};

// ----- small helpers -----------------------------------------------------------------------

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function cardName(card) {
  const rank = RANKS[card[0]] || card[0];
  return `${rank} of ${SUITS[card[1]][1]}`;
}

function cardFace(card) {
  return [card[0] === "T" ? "10" : card[0], SUITS[card[1]][0]];
}

function cardEl(card, options = {}) {
  const [rank, suit] = cardFace(card);
  const red = card[1] === "d" || card[1] === "h";
  const cls = `card${red ? " red" : ""}${options.small ? " small" : ""}${options.extra ? " " + options.extra : ""}`;
  const label = cardName(card) + (options.note ? `, ${options.note}` : "");
  if (options.button) {
    return el("button", { type: "button", class: cls, "aria-label": label, "data-card": card,
      onclick: options.onclick },
    el("span", { text: rank }), el("span", { class: "suit", text: suit, "aria-hidden": "true" }));
  }
  return el("span", { class: cls, role: "img", "aria-label": label, "data-card": card },
    el("span", { text: rank, "aria-hidden": "true" }),
    el("span", { class: "suit", text: suit, "aria-hidden": "true" }));
}

function seatName(seat) {
  const entry = S.seats.find((s) => s.seat === seat);
  if (seat === S.seat && !S.spectator) return "You";
  return (entry && entry.name) || `seat ${seat}`;
}

/** `Ana's`, and `your` for the reader's own seat. */
function possessive(seat) {
  return seat === S.seat && !S.spectator ? "your" : `${seatName(seat)}'s`;
}

/** The phrasebook's `key` with its `{field}`s filled. */
function say(key, fields = {}) {
  const template = S.phrases[key];
  if (template === undefined) return key;
  return template.replace(/\{(\w+)\}/g, (_, name) => String(fields[name]));
}

/** A card in a line of text as its face shows it: `10♥` (RULES.md §1 writes `Th`; a phone's
 * reader sees the cards' faces, not the notation). */
function pretty(card) { return cardFace(card).join(""); }

/** The notice over the page: an error's colour unless it is only `news` (you are watching,
 * the seat went to another window): nothing went wrong, and it does not look so. */
function notice(text, news = false) {
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
  box.classList.toggle("news", news);
  box.setAttribute("role", news ? "status" : "alert");
}

function status(text) { $("status").textContent = text; }

function show(section) {
  for (const id of ["login", "lobby", "table"]) $(id).hidden = id !== section;
  if (section === "lobby") { startLobbyRefresh(); renderAgainOffer(); } else stopLobbyRefresh();
}

// ----- the seat kept across reloads (token in localStorage only) ---------------------------

function savedSeat() {
  try { return JSON.parse(localStorage.getItem(SEAT_KEY) || "null"); } catch { return null; }
}

function saveSeat(token) {
  const kept = savedSeat() || {};
  localStorage.setItem(SEAT_KEY, JSON.stringify({
    token: token || kept.token, table: S.table, seq: S.seq, name: S.tableName || kept.name,
    invite: S.invite || kept.invite,
  }));
}

function forgetSeat() { localStorage.removeItem(SEAT_KEY); }

// ----- the connection ------------------------------------------------------------------------

function send(msg, onReply) {
  if (!S.ws || S.ws.readyState !== WebSocket.OPEN) return;
  msg.id = S.nextId++;
  if (onReply) S.pending.set(msg.id, onReply);
  S.ws.send(JSON.stringify(msg));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/ws");
  S.ws = ws;
  S.welcomed = false;
  S.pingedAt = null;
  status("connecting…");
  ws.addEventListener("open", () => {
    if (S.ws !== ws) return;
    S.open = true; S.reconnects = 0; hello();
  });
  ws.addEventListener("message", (event) => {
    if (S.ws !== ws) return; // one given up for lost, heard again when the network came back
    S.pingedAt = null; // anything heard answers the ping
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    handle(msg);
  });
  ws.addEventListener("close", () => {
    if (S.ws === ws) lost();
    else if (S.ws === null) { S.open = false; clearInterval(S.pinger); } // given up on purpose
  });
  // A connection begun while the network is gone waits for it as long as the browser lets
  // it (minutes): begin another instead, so the page is back within seconds of the network.
  setTimeout(() => { if (S.ws === ws && ws.readyState === WebSocket.CONNECTING) giveUp(ws); },
    CONNECT_WAIT * 1000);
}

/** The connection is gone: say so, and connect again (the seat's token resumes the seat).
 * `since`: when it went, if before now (a link that died without a word: see giveUp). */
function lost(since = null) {
  S.open = false;
  clearInterval(S.pinger);
  if (S.needPassword) return;
  S.reconnects += 1;
  if (S.lostAt === null) S.lostAt = since ?? (S.slept ? S.slept.since : Date.now());
  status("connection lost, reconnecting…");
  if (S.view) render();
  setTimeout(connect, Math.min(8000, 500 * 2 ** Math.min(S.reconnects, 4)));
}

/** A connection the network dropped without a word (Wi-Fi out of reach, a phone between
 * networks): the browser would say so only when the network came back, or after minutes of
 * retries, and the page showed "connected" all along. */
function giveUp(ws) {
  const since = S.pingedAt; // the ping left unanswered: the link was gone by then
  S.ws = null;
  try { ws.close(); } catch { /* closing a socket that never opened */ }
  lost(since);
}

/** Every half heartbeat: a ping, unless the last one is still unanswered after two periods
 * (PROTOCOL.md, Heartbeat): the connection is then lost. Counted from the ping, not from the
 * last message heard, so that a tab whose timers the browser slows in the background (once a
 * minute) is not taken for lost. */
function beat() {
  const ws = S.ws;
  if (!ws || !S.open) return;
  if (S.pingedAt !== null && Date.now() - S.pingedAt > HEARTBEAT * 1000) { giveUp(ws); return; }
  if (S.pingedAt === null) S.pingedAt = Date.now();
  send({ type: "ping" });
}

/** A phone's locked screen (or a tab in the background) stops the page: what its socket heard
 * meanwhile, and its close, are delivered only once it wakes, so a loss noticed then was
 * counted from the wake ("connection back after 1 s" after 90 s locked). A loss noticed within
 * WAKE_WINDOW of waking is counted from when the page went to sleep. */
function asleep() { if (S.asleepAt === null) S.asleepAt = Date.now(); }

function awake() {
  if (S.asleepAt === null) return;
  const slept = { since: S.asleepAt };
  S.slept = slept;
  S.asleepAt = null;
  setTimeout(() => { if (S.slept === slept) S.slept = null; }, WAKE_WINDOW * 1000);
}

function hello() {
  const msg = { type: "hello", version: 1, name: S.name, kind: "human", heartbeat: HEARTBEAT };
  const kept = savedSeat();
  if (kept && kept.token) {
    msg.token = kept.token;
    if (Number.isInteger(kept.seq)) msg.seq = kept.seq;
  }
  if (S.password) msg.password = S.password;
  const account = savedAccount();
  if (account) msg.account = account.key;
  send(msg);
  clearInterval(S.pinger);
  S.pinger = setInterval(beat, HEARTBEAT * 500);
}

const HANDLERS = {
  welcome(msg) {
    S.welcomed = true;
    S.needPassword = false;
    $("server").textContent = msg.server;
    S.optionChoices = msg.options || [];
    S.ladder = (msg.capabilities || []).includes("ladder");
    S.queued = false;
    renderOptionForm();
    renderLadder();
    status("connected");
    notice("");
    // the log says the connection was lost once it is back, as the terminal's does: the status
    // that said so is gone by then (a blip of less than a second is no news)
    const away = S.lostAt !== null ? Math.round((Date.now() - S.lostAt) / 1000) : 0;
    if (away >= 1 && S.table) logLine(say("link.back", { count: away }), "seat-line");
    S.lostAt = null;
    const kept = savedSeat();
    if (kept && kept.token) return; // the resumed seat's joined and state follow
    enterLobbyOrInvite();
  },
  joined(msg) {
    const kept = savedSeat();
    if (kept && kept.table === msg.table) {
      S.tableName = S.tableName || kept.name || "";
      S.invite = S.invite || kept.invite || null;
    }
    if (S.table !== msg.table) { S.entry = null; restoreLog(msg.table); }
    S.table = msg.table;
    S.seat = msg.spectator ? null : msg.seat;
    S.spectator = msg.spectator;
    S.matchOver = null;
    S.result = null;
    S.rematch = null;
    S.queued = false;
    // the table's link to share: with the join code a private table's creator was given, or
    // the one this page was opened by
    const link = invitePath();
    const code = msg.code || (link && link.table === msg.table ? link.code : null);
    if (code || !S.invite) {
      S.invite = `${location.origin}/t/${encodeURIComponent(msg.table)}` + (code ? `?code=${encodeURIComponent(code)}` : "");
      // the server password, when the host puts it in invite links (--invite-password): in
      // the fragment, as a browser link carries it (never sent in a request)
      const secret = msg.invite ? new URL(msg.invite).searchParams.get("password") : null;
      if (code && secret) S.invite += `#password=${encodeURIComponent(secret)}`;
    }
    if (msg.token) saveSeat(msg.token);
    askTableEntry();
    show("table");
    render();
  },
  state(msg) {
    if (S.table !== msg.table) restoreLog(msg.table);
    S.table = msg.table;
    S.seq = msg.seq;
    if (msg.hand !== undefined) S.hand = msg.hand;
    S.drawn = justDrawn(S.view, msg.view);
    S.view = msg.view;
    S.seats = msg.seats || S.seats;
    S.legal = msg.legal || [];
    S.deadline = msg.deadline !== undefined ? Date.now() + msg.deadline * 1000 : null;
    const missed = missedHands(S.standings, msg);
    if (missed) logLine(missed, "seat-line");
    if (msg.standings) S.standings = msg.standings;
    if (msg.view.phase !== "over") { S.result = null; S.askedNext = false; }
    else if (!S.result && msg.view.result) {
      // back between hands (a reload, a dropped connection): the hand_result is not sent
      // again when this page had it, but the view holds the same result and the final hands
      S.result = { result: { ...msg.view.result, hands: msg.view.revealed || [] }, standings: msg.standings || S.standings };
    }
    if (S.entry === null) askTableEntry();
    tellHistory();
    if (!S.spectator) saveSeat();
    if (msg.view.phase === "over" && msg.missed !== undefined && !S.spectator) askNextHand();
    show("table");
    render();
  },
  hand_result(msg) {
    S.seq = msg.seq;
    S.result = msg;
    S.nextDeal = msg.next_deal !== undefined ? Date.now() + msg.next_deal * 1000 : null;
    S.standings = msg.standings;
    if (!S.spectator) saveSeat();
    logLine(handStory(msg.result).title, "story");
    render();
    $("result").scrollIntoView({ block: "start" }); // below the hand on a phone: bring it up
  },
  match_over(msg) {
    S.matchOver = msg;
    S.standings = msg.standings;
    const kept = savedSeat();
    if (kept && kept.token && !S.spectator) {
      S.rematch = { table: S.table, token: kept.token, name: S.tableName };
      localStorage.setItem(REMATCH_KEY, JSON.stringify(S.rematch));
    }
    forgetSeat();
    render();
    $("match-over").scrollIntoView({ block: "start" });
  },
  seat_update(msg) {
    S.seats = msg.seats;
    // a player back from a stand-in on its own turn has a whole turn again (no state comes)
    if (msg.deadline !== undefined) S.deadline = Date.now() + msg.deadline * 1000;
    const change = msg.change;
    if (!change) {
      if (S.entry && S.entry.table) askTableEntry(); // a spectator came or went: who counts them
    } else if (change.seat !== S.seat || S.spectator) {
      // another seat's coming or going; this seat's own show in the connection status, as in
      // the terminal (the phrasebook's lines name a seat: "You is back")
      logLine(say(`seat.${change.change}`, { name: seatName(change.seat) }), "seat-line");
    }
    render();
  },
  chat(msg) {
    if (msg.n !== undefined) {
      // the table tells its recent talk again to who comes back (`earlier`): a line this
      // tab shows already (kept over a reload too) is not shown twice
      const key = JSON.stringify([msg.n, msg.name, msg.text]);
      if (msg.earlier && S.heard.includes(key)) return;
      S.heard.push(key);
      if (S.heard.length > 100) S.heard.shift();
    }
    // a spectator's line says so: the players would look for the name among the seats
    const name = msg.seat === undefined ? say("chat.watching", { name: msg.name }) : msg.name;
    logLine(`${name}: ${msg.text}`, "chat-line");
  },
  tables(msg) { renderTables(msg.tables); },
  error(msg) {
    if (msg.code === "bad_password") {
      S.needPassword = true;
      const wrong = Boolean(S.password);
      S.password = "";
      sessionStorage.removeItem(PASSWORD_KEY);
      status("password needed");
      // asked for the first time, it is news (the form asks for it); a wrong one is an error
      askLogin(wrong ? "Wrong password: try again." : "This server needs a password.", !wrong);
      return;
    }
    if (msg.code === "bad_token") {
      forgetSeat();
      S.table = null;
      // refused before the welcome: the connection stays open without a session, so say
      // hello again without the token; refused after it (the table just closed): the lobby
      if (S.welcomed) enterLobbyOrInvite(); else hello();
      return;
    }
    if (msg.code === "bad_account") {
      localStorage.removeItem(ACCOUNT_KEY); // this server does not know the key: play without
      hello();
      return;
    }
    // the server closing a connection it heard nothing from (a phone whose screen was locked):
    // the status says the connection was lost and the page is reconnecting, the log how long
    // it took once it is back; "nothing heard for 60 s (heartbeat 20 s)" in red said nothing
    // more to a friend on a phone
    if (msg.code === "idle_timeout") return;
    if (msg.code === "replaced") {
      S.ws = null; // another tab took the seat: do not fight it
      notice("This seat was opened in another window.", true);
      return;
    }
    notice(msg.message || msg.code);
  },
};

function handle(msg) {
  const replyTo = msg.id !== undefined ? msg.id : msg.ref;
  const callback = replyTo !== undefined ? S.pending.get(replyTo) : undefined;
  if (callback) S.pending.delete(replyTo);
  const handler = HANDLERS[msg.type];
  if (callback && callback(msg) === true) return;
  if (handler) handler(msg);
}

// ----- login and lobby ---------------------------------------------------------------------

function askLogin(message, news = false) {
  show("login");
  // a friend who tapped an invite link learns that the link worked, which table it opens (its
  // name, which the server puts in the page for a link it may name; else the link's id), and
  // what Enter does
  const invite = invitePath();
  const invited = invite !== null;
  const named = document.querySelector('meta[name="invited-to"]').content;
  $("login-title").textContent = !invited ? "Sit down"
    : named ? `You are invited to a table: ${named}` : `You are invited to table ${invite.table}`;
  $("login-enter").textContent = invited ? "Join the table" : "Enter";
  $("password-row").hidden = !S.needPassword;
  $("login-name").value = S.name;
  notice(message || "", news);
  (S.name && S.needPassword ? $("login-password") : $("login-name")).focus();
}

function invitePath() {
  const match = /^\/t\/([^/]+)$/.exec(location.pathname);
  if (!match) return null;
  const code = new URLSearchParams(location.search).get("code");
  return { table: decodeURIComponent(match[1]), code };
}

function enterLobbyOrInvite() {
  const invite = invitePath();
  const over = keptRematch();
  if (invite && over && over.table === invite.table) {
    // the invite's match is over and this page played it: the lobby offers "Again"
    history.replaceState(null, "", "/");
    show("lobby");
    return;
  }
  if (invite && !S.table) {
    const msg = { type: "join", table: invite.table };
    if (invite.code) msg.code = invite.code;
    send(msg, (reply) => {
      if (reply.type !== "error") return false;
      if (reply.code === "table_full" || reply.code === "table_started") {
        const watch = { type: "spectate", table: invite.table };
        if (invite.code) watch.code = invite.code;
        send(watch);
        notice("The table is full: you are watching. If a seat here was yours on another phone, open the link again and give that seat's name.", true);
        return true;
      }
      history.replaceState(null, "", "/");
      show("lobby");
      // a link tapped again after its match ended (the table closes then), or mistyped: say
      // what the link was for instead of the server's words for a table id
      const said = INVITE_REFUSED[reply.code];
      if (said) notice(said);
      return Boolean(said);
    });
    return;
  }
  show("lobby");
}

function startLobbyRefresh() {
  if (S.lobbyTimer) return;
  send({ type: "list_tables" });
  S.lobbyTimer = setInterval(() => send({ type: "list_tables" }), 4000);
}

function stopLobbyRefresh() {
  clearInterval(S.lobbyTimer);
  S.lobbyTimer = null;
}

// ----- the ladder: register, queue, standings (as `tongits ladder`) -------------------------

function savedAccount() {
  try { return JSON.parse(localStorage.getItem(ACCOUNT_KEY) || "null"); } catch { return null; }
}

function renderLadder() {
  $("ladder").hidden = !S.ladder;
  if (!S.ladder) return;
  const account = savedAccount();
  $("register-form").hidden = Boolean(account);
  $("queue").hidden = !account || S.queued;
  $("unqueue").hidden = !account || !S.queued;
  $("ladder-state").textContent = !account ? "Register a name to play rated matches against people and the server's bots."
    : S.queued ? `Waiting for a rated match as ${account.name}…` : `Your account: ${account.name}.`;
}

function showStandings() {
  send({ type: "standings", limit: 20 }, (reply) => {
    if (reply.type !== "standings") return false;
    const list = $("standings");
    list.hidden = false;
    list.replaceChildren(...(reply.players || []).map((p) => el("li", {
      text: `${p.name}: ${p.rating.toFixed(1)} (${plural(p.matches, "match", "matches")})${p.anchor ? ", server bot" : ""}` })));
    if (!reply.players || !reply.players.length) list.append(el("li", { text: "Nobody is rated yet." }));
    return true;
  });
}

// ----- table options: offered as the server lists them (welcome.options) -------------------

function optionLabel(name) { return name.replace(/_/g, " "); }

function optionValueText(value) {
  if (value === true) return "yes";
  if (value === false) return "no";
  return optionLabel(String(value));
}

function renderOptionForm() {
  const box = $("create-options");
  box.replaceChildren();
  $("create-rules").hidden = S.optionChoices.length === 0;
  for (const choice of S.optionChoices) {
    let field;
    if (choice.values) {
      field = el("select", { id: `option-${choice.name}`, "data-option": choice.name },
        ...choice.values.map((value, i) => el("option", { value: String(i), text: optionValueText(value) })));
    } else {
      field = el("input", { id: `option-${choice.name}`, "data-option": choice.name, type: "number",
        min: String(choice.min), max: String(choice.max), value: String(choice.default) });
    }
    box.append(el("label", {}, optionLabel(choice.name), field,
      el("span", { class: "muted about", text: choice.about || "" })));
  }
}

function chosenOptions() {
  const options = {};
  for (const choice of S.optionChoices) {
    const field = $(`option-${choice.name}`);
    if (!field) continue;
    const value = choice.values ? choice.values[Number(field.value)] : Number(field.value);
    if (value !== choice.default && field.value !== "") options[choice.name] = value;
  }
  return options;
}

function renderOptions() {
  const list = $("options");
  list.replaceChildren();
  const options = S.view ? S.view.options : null;
  $("options-box").hidden = !options;
  if (!options) return;
  const defaults = Object.fromEntries(S.optionChoices.map((c) => [c.name, c.default]));
  let changed = 0;
  for (const [name, value] of Object.entries(options)) {
    const house = name in defaults && defaults[name] !== value;
    if (house) changed += 1;
    list.append(el("dt", { class: house ? "changed" : null, text: optionLabel(name) }),
      el("dd", { class: house ? "changed" : null, "data-option": name, text: optionValueText(value) }));
  }
  $("options-title").textContent = changed ? `Options: ${changed} house rule${changed === 1 ? "" : "s"}` : "Options";
}

function renderTables(tables) {
  const list = $("tables");
  list.replaceChildren();
  $("no-tables").hidden = tables.length > 0;
  for (const table of tables) {
    const length = table.match_length && table.match_length.hands ? `, ${table.match_length.hands} hands` : "";
    const facts = `${table.players}/3 seated, ${table.bots} bot${table.bots === 1 ? "" : "s"}` +
      `${table.timer ? `, ${table.timer} s a turn` : ", no timer"}${length}` +
      `${table.started ? ", playing" : ""}${table.private ? ", private" : ""}`;
    const actions = el("span", { class: "actions" });
    if (!table.started && table.players < 3 && !table.private) {
      actions.append(el("button", { type: "button", onclick: () => fromLobby(table.name, { type: "join", table: table.table }) }, "Join"));
    }
    if (!table.private) {
      actions.append(el("button", { type: "button", class: "quiet", onclick: () => fromLobby(table.name, { type: "spectate", table: table.table }) }, "Watch"));
    }
    list.append(el("li", { "data-table": table.table },
      el("span", { class: "name", text: table.name }), el("span", { class: "muted", text: facts }), actions));
  }
}

// ----- the table ---------------------------------------------------------------------------

/** Asks the lobby for this table's entry (its name, declared length and spectators), which a
 * link joiner or a reloaded page has not seen; a change of its spectators goes in the log. */
function askTableEntry() {
  if (!S.table) return;
  const table = S.table;
  S.entry = S.entry || {};
  send({ type: "list_tables", table }, (reply) => {
    if (reply.type !== "tables") return false;
    const entry = (reply.tables || []).find((t) => t.table === table);
    if (entry && S.table === table) {
      const before = S.entry && S.entry.spectators;
      if (Number.isInteger(before) && entry.spectators !== before) {
        logLine(entry.spectators > before ? `Someone is watching (${plural(entry.spectators, "spectator")})`
          : `A spectator left (${plural(entry.spectators, "spectator")})`, "seat-line");
      }
      S.entry = entry;
      S.tableName = entry.name;
      saveSeat();
      render();
    }
    return true;
  });
}

/** One line per step of the hand's history, in the phrasebook's words (as the terminal tells
 * it): the pile and the meld numbers are followed from the start of the hand. */
function narrate(history) {
  const pile = [];
  let melds = 0;
  return history.map((step) => {
    const who = seatName(step.seat);
    const cards = (step.cards || []).map(pretty).join(" ");
    let text;
    switch (step.action) {
      case "pick": {
        const top = pile.length ? pile.pop() : "?";
        text = step.meld !== undefined ? say("event.pick_onto", { who, top, meld: step.meld })
          : say("event.pick", { who, top, cards, meld: melds++ });
        break;
      }
      case "meld": text = say("event.meld", { who, cards, meld: melds++ }); break;
      case "secret": text = say(cards ? "event.secret_shown" : "event.secret", { who, cards, meld: melds++ }); break;
      case "sapaw": text = say("event.sapaw", { who, card: pretty(step.card), meld: step.meld }); break;
      case "discard": pile.push(pretty(step.card)); text = say("event.discard", { who, card: pile[pile.length - 1] }); break;
      default: text = say(`event.${step.action}`, { who }) + (step.auto ? S.phrases["event.not_opened"] : "");
    }
    return step.timeout ? text + S.phrases["event.timeout"] : text;
  });
}

/** The card this seat drew from the stock this turn, kept while the turn lasts: the history
 * says only that a card was drawn, so it is the one card new in the hand when the draw is the
 * step this view adds to the one before (as the terminal finds it). */
function justDrawn(before, view) {
  if (S.spectator || view.to_act !== S.seat || view.phase === "over") return null;
  const history = view.history || [];
  const last = history[history.length - 1];
  if (before && last && last.seat === S.seat && last.action === "draw"
      && (before.history || []).length === history.length - 1) {
    const added = view.hand.filter((card) => !before.hand.includes(card));
    return added.length === 1 ? added[0] : null;
  }
  return S.drawn && view.hand.includes(S.drawn) ? S.drawn : null;
}

/** Why a seat that has opened has no Call now: the lay-off onto its meld that blocks it
 * (RULES.md §5, decided by the server: ``view.blocked``), told with who laid off. */
function blockedWords(view) {
  const ownMelds = new Set(view.melds.filter((m) => m.owner === S.seat).map((m) => m.id));
  const sapaw = (view.history || []).filter((s) => s.action === "sapaw" && ownMelds.has(s.meld)).pop();
  const who = sapaw ? seatName(sapaw.seat) : "Someone";
  return `${who} laid off onto your meld: you cannot call now.`;
}

/** Adds the steps of the view's history not yet in the log; a new hand starts with a mark. */
function tellHistory() {
  const history = S.view.history || [];
  const hand = S.hand || 1;
  if (S.told.hand !== hand || history.length < S.told.steps) {
    S.told = { hand, steps: 0 };
    S.timedOut = null;
    logLine(say("hand.new", { count: hand }), "hand-mark");
  }
  const lines = narrate(history);
  for (const line of lines.slice(S.told.steps)) logLine(line);
  S.timedOut = timedOut(history, lines, S.told.steps) || (S.legal.length ? null : S.timedOut);
  S.told.steps = lines.length;
  saveLog();
}

/** The turn the server played for this seat when its time ran out (or while it was away),
 * among the steps from `from` on, in the terminal's words ("your time ran out: the server
 * played for you (drew, discarded J♣)"): said under the hand until the seat's next turn, where
 * a friend on a phone looks, not only in the log far below it. */
function timedOut(history, lines, from) {
  if (S.spectator) return null;
  const mine = (i) => history[i].seat === S.seat && history[i].timeout;
  let last = history.length - 1;
  while (last >= from && !mine(last)) last--;
  if (last < from) return null;
  let first = last;
  while (first > 0 && mine(first - 1)) first--;
  const moves = lines.slice(first, last + 1)
    .map((line) => line.replace(/^You /, "").replace(S.phrases["event.timeout"], "")).join(", ");
  return say("turn.timed_out", { moves }).replace(/^./, (c) => c.toUpperCase()) + ".";
}

/** A resume after hands were settled without this seat (a phone locked past the grace
 * period: a bot stood in and the table dealt on; their results are not sent again) says who
 * won the one hand, or how many there were, and the seat's chips in them: the chips moved
 * without a word. As protocol/phrases.py `missed_hands` (the terminal's). `before`: the
 * standings this page had; `msg`: the resuming state. */
function missedHands(before, msg) {
  const after = msg.standings;
  if (!before || !after || S.spectator || msg.missed === undefined) return null;
  // the resumed hand, when over, is counted in `after`, and its result is on screen or follows
  const shown = msg.view.phase === "over" && msg.view.result && after.hands > before.hands ? msg.view.result : null;
  const hands = after.hands - before.hands - (shown ? 1 : 0);
  if (hands < 1) return null;
  const chips = signed(after.chips[S.seat] - before.chips[S.seat] - (shown ? shown.chips[S.seat] : 0));
  const winners = [0, 1, 2].filter((s) => after.wins[s] - before.wins[s] - (shown && shown.winner === s ? 1 : 0) > 0);
  if (hands === 1 && winners.length === 1) return say("link.missed_won", { who: seatName(winners[0]), count: before.hands + 1, chips });
  return say("link.missed_hands", { count: plural(hands, "hand"), chips });
}

function logLine(text, cls) {
  S.log.push({ text, cls });
  if (S.log.length > 300) S.log.shift();
  const log = $("log");
  log.append(el("li", { class: cls || null, text }));
  while (log.children.length > 300) log.firstChild.remove();
  log.scrollTop = log.scrollHeight;
  saveLog();
}

function saveLog() {
  try {
    sessionStorage.setItem(LOG_KEY, JSON.stringify({ table: S.table, told: S.told, log: S.log,
                                                     heard: S.heard }));
  } catch { /* storage full or refused: the log lives on the page only */ }
}

/** The log of `table` kept by this tab before a reload (or none: a new log). */
function restoreLog(table) {
  let kept = null;
  try { kept = JSON.parse(sessionStorage.getItem(LOG_KEY) || "null"); } catch { kept = null; }
  const same = kept && kept.table === table;
  S.log = same ? kept.log : [];
  S.told = same ? kept.told : { hand: null, steps: 0 };
  S.heard = (same && kept.heard) || [];
  $("log").replaceChildren(...S.log.map((line) => el("li", { class: line.cls || null, text: line.text })));
}

function moveCards(move) {
  if (move.cards) return move.cards;
  return move.card ? [move.card] : [];
}

function meldText(id) {
  const meld = S.view && S.view.melds.find((m) => m.id === id);
  if (!meld) return `meld ${id}`;
  return `${possessive(meld.owner)} ${meld.cards ? meld.cards.map(pretty).join(" ") : "secret meld"}`;
}

function moveLabel(move) {
  const top = S.view.discards.length ? pretty(S.view.discards[S.view.discards.length - 1]) : "";
  const cards = (move.cards || []).map(pretty).join(" ");
  switch (move.action) {
    case "draw": return "Draw from the stock";
    case "pick": return move.meld !== undefined ? `Pick ${top} onto ${meldText(move.meld)}` : `Pick ${top} with ${cards}`;
    case "meld": return `Meld ${cards}`;
    case "secret": return `Secret meld ${cards}`;
    case "sapaw": return `Lay off ${pretty(move.card)} on ${meldText(move.meld)}`;
    case "call": return "Call";
    case "challenge": return "Challenge";
    case "fold": return "Fold";
    default: return move.action;
  }
}

/** The moves offered as buttons: every legal move but the discards (a tap on the card), in
 * a fixed order of kinds. */
function buttonMoves() {
  const moves = S.legal.filter((m) => m.action !== "discard");
  return moves.sort((a, b) => MOVE_ORDER.indexOf(a.action) - MOVE_ORDER.indexOf(b.action));
}

function discardOf(card) {
  return S.legal.find((m) => m.action === "discard" && m.card === card) || null;
}

function play(move) {
  if (!S.open) { render(); return; } // nothing can be sent: renderMoves says why
  const sent = { ...move };
  send({ type: "move", move: sent }, (reply) => {
    if (reply.type === "error") notice(reply.message);
    return reply.type === "error";
  });
  S.confirming = null;
  S.legal = [];
  S.focusAfter = true;
  render();
}

/** A move that asks first (a call), or play it. */
function choose(move) {
  if (move.action === "call") {
    const count = S.view.count;
    // who wins a tie is the table's option (RULES.md §10 call_tie): the words are the phrasebook's
    ask(say(`call.confirm.${S.view.options.call_tie}`, { count }), "Yes, call", () => play(move));
    return;
  }
  play(move);
}

function ask(text, yes, onYes) {
  S.confirming = { text, yes, onYes };
  renderConfirm();
  $("confirm-yes").focus();
}

function renderConfirm() {
  const box = $("confirm");
  box.hidden = !S.confirming;
  if (!S.confirming) return;
  $("confirm-text").textContent = S.confirming.text;
  $("confirm-yes").textContent = S.confirming.yes;
}

function askNextHand() {
  if (S.askedNext) return;
  S.askedNext = true;
  send({ type: "next_hand" }, (reply) => reply.type === "error" && reply.code === "not_ready");
}

function handOfMatch() {
  if (!S.hand) return "";
  const length = S.entry && S.entry.match_length;
  return length && length.hands ? `hand ${S.hand} of ${length.hands}` : `hand ${S.hand}`;
}

function render() {
  if (!S.table) return;
  $("table-title").textContent = S.tableName || `Table ${S.table}`;
  $("alerts-box").hidden = S.spectator; // a spectator has no turn to be called to
  renderWaiting();
  $("hand-no").textContent = handOfMatch();
  // a private table's link always (friends may watch by it), a public one's while seats are free
  $("invite").hidden = !S.invite || (!S.invite.includes("?code=") && $("waiting").hidden);
  if (S.invite) { $("invite-link").textContent = S.invite; $("invite-link").href = S.invite; }
  renderSeats();
  renderAnnounce();
  renderBoard();
  $("dock").hidden = Boolean(S.view && S.view.phase === "over");
  renderHand();
  renderMoves();
  renderResult();
  renderOptions();
  renderConfirm();
  tick();
  // after a move (whose button is gone), or when the turn comes and nothing has the focus:
  // the first move, else the first card to discard (never the page's body). An element just
  // hidden (the lobby's Create button) still holds the focus until the browser moves it away.
  const active = document.activeElement;
  const lost = !active || active === document.body || !active.getClientRects().length;
  if (S.legal.length && (S.focusAfter || lost) && !S.confirming) {
    S.focusAfter = false;
    const first = $("moves").querySelector("button") || $("hand").querySelector("button.discardable");
    if (first) first.focus({ preventScroll: true });
  }
}

function renderWaiting() {
  const empty = [0, 1, 2].filter((seat) => {
    const entry = S.seats.find((s) => s.seat === seat);
    return !entry || entry.player === null;
  }).length;
  const waiting = !S.view && empty > 0 && !S.matchOver;
  $("waiting").hidden = !waiting;
  if (waiting) {
    $("waiting").textContent = `Waiting for ${plural(empty, "player")}` + (S.invite ? ": share this link" : ": friends join from the lobby");
  }
}

function renderSeats() {
  const list = $("seats");
  list.replaceChildren();
  const view = S.view;
  for (let seat = 0; seat < 3; seat++) {
    const entry = S.seats.find((s) => s.seat === seat) || { seat, player: null };
    const toAct = view && view.to_act === seat;
    const me = seat === S.seat && !S.spectator;
    const cls = `seat${toAct ? " to-act" : ""}${me ? " me" : ""}${entry.away ? " away" : ""}`;
    const facts = [];
    if (entry.player === null) facts.push("empty");
    else if (entry.stand_in) facts.push(entry.away ? "away: a bot plays" : "a bot plays");
    else if (entry.player === "bot") facts.push("bot");
    else if (entry.away) facts.push("away");
    if (view) {
      facts.push(plural(view.hand_sizes[seat], "card"));
      if (view.opened[seat]) facts.push("opened");
      if (view.blocked[seat] && view.phase !== "over") facts.push(me ? "you cannot call now" : "cannot call now");
      if (view.dealer === seat) facts.push("dealer");
      if (view.caller === seat && view.phase === "answer") facts.push("called");
    }
    if (S.standings) facts.push(chipsHeld(S.standings.chips[seat]));
    list.append(el("li", { class: cls, "data-seat": seat, "aria-current": toAct ? "true" : null },
      el("div", { class: "who", text: entry.player === null ? "—" : (me ? `You (${entry.name || S.name})` : seatName(seat)) }),
      el("div", { class: "facts", text: facts.join(" · ") }),
      el("div", { class: "clock", "data-clock": seat })));
  }
}

/** The seats' answers to the latest call of the history: who challenged, who folded. */
function answers(history) {
  let at = -1;
  history.forEach((step, i) => { if (step.action === "call") at = i; });
  if (at < 0) return null;
  const after = history.slice(at + 1);
  return {
    caller: history[at].seat,
    challengers: after.filter((s) => s.action === "challenge").map((s) => s.seat),
    folders: after.filter((s) => s.action === "fold").map((s) => s.seat),
  };
}

/** A call on the table, told where the table is: who called and how many cards they hold;
 * the seat that must answer is asked, with its own count; who challenged and who folded. */
function renderAnnounce() {
  const box = $("announce");
  const view = S.view;
  const call = view && (view.phase === "answer" || view.phase === "over") ? answers(view.history || []) : null;
  box.hidden = !call;
  box.replaceChildren();
  if (!call) return;
  const who = seatName(call.caller);
  const asked = view.to_act === S.seat && !S.spectator && S.legal.length > 0;
  box.append(el("p", { class: "called", text: asked ? say("call.ask", { who }) : say("call.made", { who, count: view.hand_sizes[call.caller] }) }));
  if (asked) box.append(el("p", { text: `${say("call.made", { who, count: view.hand_sizes[call.caller] })}. Your count: ${view.count}` }));
  // what each answer does, by the table's tie rule (call_tie): the buttons alone said nothing
  if (asked) box.append(el("p", { text: say(`call.answer.${view.options.call_tie}`, { who }) }));
  if (call.challengers.length) box.append(el("p", { text: say("call.challengers", { who: call.challengers.map(seatName).join(", ") }) }));
  if (call.folders.length) box.append(el("p", { text: say("call.folders", { who: call.folders.map(seatName).join(", ") }) }));
}

function renderBoard() {
  const view = S.view;
  const stock = $("stock");
  const discards = $("discards");
  const melds = $("melds");
  melds.replaceChildren();
  discards.replaceChildren();
  if (!view) { stock.textContent = ""; return; }
  stock.replaceChildren(el("span", { text: String(view.stock) }), el("small", { text: "stock" }));
  stock.setAttribute("aria-label", `Stock: ${view.stock} cards`);
  const shown = view.discards.slice(-3);
  if (shown.length === 0) discards.append(el("span", { class: "muted", text: "no discard" }));
  shown.forEach((card, i) => discards.append(cardEl(card, { small: i < shown.length - 1, note: i === shown.length - 1 ? "top of the discard pile" : "discarded" })));
  discards.setAttribute("aria-label", `Discard pile: ${view.discards.length} cards`);
  for (const meld of view.melds) {
    const cards = el("div", { class: "cards" });
    if (meld.cards) {
      for (const card of meld.cards) {
        const by = meld.laid_off && meld.laid_off[card];
        cards.append(cardEl(card, { small: true, extra: by !== undefined ? "laid-off" : "", note: by !== undefined ? `laid off by ${seatName(by)}` : null }));
      }
    } else {
      // another seat's secret meld: four cards of one rank face down (RULES.md §4); three
      // backs were drawn, and a friend counted three cards
      for (let i = 0; i < 4; i++) cards.append(el("span", { class: "card small back", role: "img", "aria-label": "hidden card" }));
    }
    // what "secret" means, for whoever sees one laid: its rank is hidden, not its kind
    const secret = meld.secret ? (meld.cards ? " (secret)" : " (secret: four of a kind)") : "";
    melds.append(el("div", { class: "meld", "data-meld": meld.id, role: "group", "aria-label": `meld ${meld.id}: ${possessive(meld.owner)}` },
      el("div", { class: "owner", text: `#${meld.id} ${seatName(meld.owner)}${secret}` }), cards));
  }
}

/** Your hand: a tap on a card discards it when a discard of it is legal; the cards some
 * other legal move uses are marked. */
function renderHand() {
  const hand = $("hand");
  const view = S.view;
  hand.hidden = S.spectator;
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.card : null;
  hand.replaceChildren();
  $("my-count").textContent = view && !S.spectator && view.count !== null && view.count !== undefined ? `Your count: ${view.count}` : "";
  if (!view || S.spectator) return;
  const used = new Set(buttonMoves().flatMap(moveCards));
  for (const card of view.hand) {
    const discard = discardOf(card);
    const marks = [discard ? "discardable" : "", used.has(card) ? "playable" : "", card === S.drawn ? "drawn" : ""]
      .filter(Boolean).join(" ");
    const note = [card === S.drawn ? "just drawn" : "",
      discard ? "tap to discard" : used.has(card) ? "used by a move below" : ""].filter(Boolean).join(", ") || null;
    const button = cardEl(card, { button: true, extra: marks, note, onclick: () => { if (discard) play(discard); else notADiscard(); } });
    button.setAttribute("aria-disabled", discard ? "false" : "true");
    hand.append(button);
  }
  if (focused) {
    const again = hand.querySelector(`[data-card="${focused}"]`);
    if (again) again.focus();
  }
}

/** A tap on a card that is no discard now: say what the table waits for, in the moves the
 * server offers (a tap that did nothing at all left a friend tapping again and again). */
function notADiscard() {
  const offered = S.view ? buttonMoves() : [];
  $("hint").textContent = S.legal.some((m) => m.action === "discard") ? "That card cannot be discarded now."
    : offered.length ? `Not a discard now: first ${offered.map((m) => moveLabel(m).replace(/^./, (c) => c.toLowerCase())).join(", or ")}.`
    : "Not your turn yet.";
}

function highlight(cards, on) {
  for (const card of cards) {
    const node = $("hand").querySelector(`[data-card="${card}"]`);
    if (node) node.classList.toggle("in-move", on);
  }
}

function renderMoves() {
  const moves = $("moves");
  moves.replaceChildren();
  moves.dataset.legal = String(S.legal.length);
  const offered = S.view ? buttonMoves() : [];
  const keyed = new Set();
  for (const move of offered) {
    const key = MOVE_KEYS[move.action];
    const first = !keyed.has(key);
    keyed.add(key);
    const cards = moveCards(move);
    moves.append(el("button", {
      type: "button", "data-action": move.action, "data-key": first ? key : null, disabled: !S.open,
      "aria-keyshortcuts": first ? key : null, class: `move move-${move.action}`,
      onclick: () => choose(move),
      onmouseenter: () => highlight(cards, true), onmouseleave: () => highlight(cards, false),
      onfocus: () => highlight(cards, true), onblur: () => highlight(cards, false),
    }, first ? el("kbd", { text: key.toUpperCase(), "aria-hidden": "true" }) : null, moveLabel(move)));
  }
  const discards = S.legal.some((m) => m.action === "discard");
  const view = S.view;
  const said = [];
  if (!S.open && (offered.length || discards)) {
    // the server plays for the seat when its timer runs out, as for anyone who does not move
    $("hint").textContent = "No connection: reconnecting… Your move waits until it is back.";
    return;
  }
  if (S.timedOut) said.push(S.timedOut);
  if (S.drawn) said.push(`You drew ${pretty(S.drawn)}.`);
  if (discards) said.push("Tap a card to discard it" + (offered.length ? ", or play a move." : "."));
  else if (myTurn() && view.blocked[S.seat] && S.legal.some((m) => m.action === "draw")) said.push(blockedWords(view));
  $("hint").textContent = said.join(" ");
}

// ----- the hand's story --------------------------------------------------------------------

function plural(count, noun, many) { return `${count} ${count === 1 ? noun : many || noun + "s"}`; }

function names(seats) { return seats.map(seatName).join(", "); }

/** Who won the hand and how, in the phrasebook's words put together as the terminal puts them
 * (client/tui/render.py `result_head`; tests/test_phrases_page.py compares the two). */
function handHeadline(result, call) {
  const mine = (seat) => seat === S.seat && !S.spectator;
  if (result.winner === null || result.winner === undefined) return say("hand.void");
  const won = mine(result.winner) ? say("hand.you_won") : say("hand.won", { who: seatName(result.winner) });
  if (result.end !== "call") return `${won} ${S.phrases[`end.${result.end}`] || ""}`.trimEnd();
  if (call && call.caller !== result.winner) {
    const whose = mine(call.caller) ? say("whose.yours") : say("whose.theirs", { who: seatName(call.caller) });
    return `${won}, ${say("hand.call_lost", { whose })}`;
  }
  const answer = result.challengers.length ? say("hand.challenged") : say("hand.unchallenged");
  return `${won} ${S.phrases["end.call"]} ${answer}`;
}

/** How the hand ended, in the phrasebook's words, from its result and the history. */
function handStory(result) {
  const winner = result.winner === null || result.winner === undefined ? null : seatName(result.winner);
  const lines = [];
  const call = result.end === "call" && S.view ? answers(S.view.history || []) : null;
  const title = handHeadline(result, call);
  if (call) {
    const caller = seatName(call.caller);
    lines.push(`${caller} called with a count of ${result.counts[call.caller]}.`);
    lines.push(result.challengers.length ? say("call.challengers", { who: names(result.challengers) }) : say("call.nobody"));
    if (call.folders.length) lines.push(say("call.folders", { who: names(call.folders) }));
  }
  // "by Tongits" names the game itself to a newcomer: say what happened
  if (result.end === "tongits") lines.push(`${possessive(result.winner).replace(/^./, (c) => c.toUpperCase())} hand is empty: that is a Tongits.`);
  if (result.end === "stock") {
    // a seat that had not opened does not compete (RULES.md §6.3): said when one counted less
    // than the winner, or the table showed a lower count losing
    const under = (result.burned || []).filter((seat) => result.counts[seat] < result.counts[result.winner]);
    lines.push(under.length ? `The stock ran out: the lowest count among the seats that had opened wins (not ${names(under)}: no meld on the table).`
      : "The stock ran out: the lowest count wins.");
  }
  if (result.burned && result.burned.length) lines.push(`Burned (no meld on the table): ${names(result.burned)}.`);
  if (result.pot_taken) lines.push(`${winner} took the pot: ${plural(result.pot_taken, "chip")}.`);
  // the Total column moves by the ante too, which no hand's Chips show
  const ante = S.view && S.view.options ? S.view.options.ante : 0;
  if (ante && S.standings) lines.push(`Ante: each seat puts ${plural(ante, "chip")} in the pot before each deal (Total counts it)${S.standings.pot ? `; the pot holds ${plural(S.standings.pot, "chip")}` : ""}.`);
  return { title, lines };
}

/** Why a seat won or paid its chips (`result.why`, protocol 1.4), as the terminal writes it
 * (protocol/phrases.py `chip_words`; tests/test_phrases_page.py compares the two). */
function chipWords(items) {
  return items.map((item) => `${S.phrases[`why.${item.why}`] || item.why}${item.n > 1 ? ` ×${item.n}` : ""} ${signed(item.chips)}`).join(" · ");
}

/** Chips as the terminal writes them: `+8`, `-4`, `0`. */
function signed(chips) { return (chips > 0 ? "+" : "") + chips; }

/** A seat's chips in the match, signed as its hands' chips are: `+1 chip`, `-7 chips` (a seat's
 * box said "1 chips" beside "-7 chips"). */
function chipsHeld(chips) { return `${signed(chips)} ${Math.abs(chips) === 1 ? "chip" : "chips"}`; }

function resultTable(result) {
  const standings = S.standings;
  const why = (seat) => {
    const items = result.why && result.why[seat];
    if (!items || !items.length) return [];
    const to = [...new Set(items.filter((i) => i.to !== undefined).map((i) => i.to))];
    const lead = to.length === 1 ? `to ${seatName(to[0])}: ` : "";
    return [el("tr", { class: "why" }, el("td", { colspan: "4", text: lead + chipWords(items) }))];
  };
  // each seat's final hand on a row of its own under its figures: it fits a phone's width
  const rows = [0, 1, 2].flatMap((seat) => [
    el("tr", { class: seat === result.winner ? "winner" : null, "data-seat": seat },
      el("td", { text: seatName(seat) + (result.burned && result.burned.includes(seat) ? " (burned)" : "") }),
      el("td", { class: "count", text: String(result.counts[seat]) }),
      el("td", { text: signed(result.chips[seat]) }),
      // signed as the hand's Chips and the match's standings are: a bare "21" beside "+8"
      el("td", { text: standings ? signed(standings.chips[seat]) : "" })),
    ...why(seat),
    el("tr", { class: "final-hand" },
      el("td", { colspan: "4", "aria-label": `${possessive(seat)} last hand` },
        el("div", { class: "cards" }, ...(result.hands[seat] || []).map((c) => cardEl(c, { small: true }))))),
  ]);
  return el("table", {},
    el("thead", {}, el("tr", {}, ...["Seat", "Count", "Chips", "Total"].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows));
}

function renderResult() {
  const box = $("result");
  const result = S.result && S.result.result;
  const over = S.matchOver;
  box.replaceChildren();
  box.hidden = !result && !over;
  if (!result && !over) return;
  if (over) {
    const chips = over.standings.chips;
    const best = Math.max(...chips);
    const leaders = [0, 1, 2].filter((s) => chips[s] === best);
    const winners = leaders.map(seatName).join(" and ");
    const verb = leaders.length > 1 ? "share the lead" : leaders[0] === S.seat && !S.spectator ? "win" : "wins";
    const hands = over.standings.hands;
    box.append(el("h3", { id: "match-over", text: `Match over after ${plural(hands, "hand")}: ${winners} ${verb}` }));
    // ranked by chips, most first (seat order breaks a tie)
    const ranked = [0, 1, 2].sort((a, b) => chips[b] - chips[a] || a - b);
    // seats with the same chips share their place (the terminal's match_lines): told apart by
    // seat order, a tied friend read itself third
    box.append(el("ol", { class: "standings", "aria-label": "Final standings" }, ...ranked.map((s) => el("li", {
      class: chips[s] === best ? "winner" : null, value: 1 + ranked.filter((o) => chips[o] > chips[s]).length,
      text: `${seatName(s)}: ${chipsHeld(chips[s])}, ${plural(over.standings.wins[s], "hand")} won` }))));
    const actions = el("p", { class: "actions" });
    if (S.rematch) {
      actions.append(el("button", { type: "button", id: "again", onclick: again }, "Again: another match, same players"));
    }
    actions.append(el("button", { type: "button", id: "to-lobby", class: "quiet", onclick: backToLobby }, "Back to the lobby"));
    box.append(actions);
  }
  if (result) {
    const story = handStory(result);
    box.append(el(over ? "h4" : "h3", { id: "hand-over", text: over ? `The last hand: ${story.title.replace(/^Hand over: /, "")}` : story.title }));
    for (const line of story.lines) box.append(el("p", { class: "story", text: line }));
    box.append(resultTable(result));
  }
  if (over) return;
  if (S.result && S.result.last) {
    box.append(el("p", { class: "muted", text: "That was the match's last hand." }));
  } else {
    if (!S.spectator) {
      box.append(el("button", { type: "button", id: "next-hand", disabled: S.askedNext, onclick: () => { askNextHand(); render(); } },
        S.askedNext ? "Waiting for the others…" : "Next hand"));
    }
    if (S.nextDeal) box.append(el("p", { id: "next-deal", class: "muted" }));
  }
}

/** Another match with the same players (the terminal's `again`): `create_table` with
 * `rematch`; the first to ask opens the table, the others are seated at it. */
function again() {
  const { table, token } = S.rematch;
  localStorage.removeItem(REMATCH_KEY);
  const msg = { type: "create_table", name: S.tableName || "Again", rematch: table, token };
  const name = S.tableName;
  resetTable();
  S.tableName = name;
  send(msg, (reply) => {
    if (reply.type !== "error") return false;
    notice(reply.message);
    show("lobby");
    return true;
  });
}

/** The finished match this page may ask "Again" of (``REMATCH_KEY``), if any. */
function keptRematch() {
  let kept = null;
  try { kept = JSON.parse(localStorage.getItem(REMATCH_KEY) || "null"); } catch { kept = null; }
  return kept && kept.table && kept.token ? kept : null;
}

/** The match this page played last, over before a reload or a way back to the lobby: the
 * lobby still offers "Again" (the server keeps a finished match's seats for a rematch until it
 * restarts); a phone reloaded on the match-over screen lost it. */
function renderAgainOffer() {
  const kept = keptRematch();
  const box = $("again-offer");
  box.hidden = !kept || Boolean(S.table);
  if (box.hidden) return;
  const forget = () => { localStorage.removeItem(REMATCH_KEY); renderAgainOffer(); };
  const play = () => { S.rematch = kept; S.tableName = kept.name || ""; notice(""); again(); };
  box.replaceChildren(
    el("span", { text: `Your match at ${kept.name || kept.table} is over.` }),
    el("button", { type: "button", id: "again-lobby", onclick: play }, "Again: another match, same players"),
    el("button", { type: "button", class: "quiet", onclick: forget }, "Dismiss"));
}

// ----- your turn, said where you look ------------------------------------------------------

function myTurn() {
  const view = S.view;
  return Boolean(view && view.phase !== "over" && view.to_act === S.seat && !S.spectator && S.legal.length);
}

/** On your turn: the tab's title, and (if chosen) a sound, a vibration, a notification when
 * the page is not in view. Once per turn. */
function alertTurn() {
  const mine = myTurn();
  document.title = mine ? `● Your turn — ${TITLE}` : TITLE;
  if (!mine) { S.alerted = false; return; }
  if (S.alerted) return;
  S.alerted = true;
  if (localStorage.getItem(ALERT_KEY) === "on") {
    beep();
    if (navigator.vibrate) navigator.vibrate(120);
  }
  if (document.hidden && window.Notification && Notification.permission === "granted") {
    try { new Notification(TITLE, { body: "Your turn", tag: "tongits-turn", icon: "/icon.svg" }); } catch { /* not here */ }
  }
}

function beep() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    S.audio = S.audio || new Context();
    const tone = S.audio.createOscillator();
    const gain = S.audio.createGain();
    tone.frequency.value = 660;
    gain.gain.value = 0.08;
    tone.connect(gain).connect(S.audio.destination);
    tone.start();
    tone.stop(S.audio.currentTime + 0.15);
  } catch { /* no sound here */ }
}

function tick() {
  for (const clock of document.querySelectorAll("[data-clock]")) clock.textContent = "";
  const view = S.view;
  let words = "";
  let clockText = "";
  if (view && view.phase !== "over" && view.to_act !== null) {
    const left = S.deadline ? Math.max(0, Math.ceil((S.deadline - Date.now()) / 1000)) : null;
    const clock = document.querySelector(`[data-clock="${view.to_act}"]`);
    if (clock && left !== null) clock.textContent = `${left} s`;
    if (left !== null) clockText = `${left} s`;
    if (view.to_act === S.seat && !S.spectator) {
      words = !S.legal.length ? "Your turn…" : view.phase === "answer" ? "Your turn: challenge or fold" : "Your turn";
    } else {
      words = `${seatName(view.to_act)} to play`;
    }
  }
  // a spectator is told so: the hands it does not see are not missing, they are hidden
  if (S.spectator) words = words ? `You are watching · ${words}` : "You are watching";
  // the live region is told only when its words change, not each second of the clock
  if (words !== S.turnWords) { S.turnWords = words; $("turn").textContent = words; }
  $("turn-clock").textContent = clockText;
  alertTurn();
  const nextDeal = $("next-deal");
  if (nextDeal && S.nextDeal) {
    const left = Math.max(0, Math.ceil((S.nextDeal - Date.now()) / 1000));
    nextDeal.textContent = `The next hand is dealt in ${left} s`;
  }
}

function resetTable() {
  S.table = null; S.view = null; S.result = null; S.matchOver = null; S.standings = null;
  S.tableName = ""; S.entry = null; S.rematch = null; S.confirming = null;
  S.seats = []; S.invite = null; S.legal = []; S.log = []; S.heard = []; S.hand = null;
  S.told = { hand: null, steps: 0 };
  $("log").replaceChildren();
  document.title = TITLE;
  forgetSeat();
  try { sessionStorage.removeItem(LOG_KEY); } catch { /* nothing kept */ }
}

/** A table chosen in the lobby (join, watch, open): what the lobby said before (a closed
 * invite's table, a refusal) is answered, so it does not follow the player to the table. */
function fromLobby(name, msg) {
  S.tableName = name;
  notice("");
  send(msg);
}

function backToLobby() {
  resetTable();
  history.replaceState(null, "", "/");
  notice("");
  show("lobby");
}

/** What leaving does to the seat, said before it is done. */
function leaveWords() {
  if (S.spectator) return "Stop watching this table?";
  if (!S.view) return "Leave the table? Your seat is freed for someone else.";
  return "Leave the table? A bot plays your seat for the rest of the match (it keeps your chips), and you cannot come back to it.";
}

// ----- wiring ------------------------------------------------------------------------------

function wire() {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    S.name = $("login-name").value.trim();
    if (!S.name) return;
    localStorage.setItem(NAME_KEY, S.name);
    if ($("create-name").value === "Friday") $("create-name").value = `${S.name}'s table`;
    if (S.needPassword) {
      S.password = $("login-password").value;
      sessionStorage.setItem(PASSWORD_KEY, S.password);
      $("login-password").value = "";
    }
    S.needPassword = false;
    notice("");
    if (S.ws && S.ws.readyState === WebSocket.OPEN && !S.welcomed) hello();
    else connect();
  });
  $("create-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const msg = { type: "create_table", name: $("create-name").value.trim(), bots: Number($("create-bots").value) };
    const timer = $("create-timer").value;
    if (timer !== "") msg.timer = Number(timer);
    const hands = $("create-hands").value;
    if (hands !== "") msg.hands = Number(hands);
    if ($("create-private").checked) msg.private = true;
    const options = chosenOptions();
    if (Object.keys(options).length) msg.options = options;
    fromLobby(msg.name, msg);
  });
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("chat-text").value.trim();
    if (!text) return;
    send({ type: "chat", text }, (reply) => { if (reply.type === "error") notice(reply.message); return reply.type === "error"; });
    $("chat-text").value = "";
  });
  $("leave").addEventListener("click", () => {
    if (S.matchOver) { backToLobby(); return; }
    ask(leaveWords(), S.spectator ? "Stop watching" : "Leave", () => {
      S.confirming = null;
      send({ type: "leave" }, () => { backToLobby(); return true; });
    });
  });
  $("confirm-yes").addEventListener("click", () => { if (S.confirming) S.confirming.onYes(); });
  $("confirm-no").addEventListener("click", () => {
    S.confirming = null;
    renderConfirm();
    const back = $("moves").querySelector("button") || $("leave");
    back.focus();
  });
  $("invite-copy").addEventListener("click", () => {
    const said = (text) => { $("copied").textContent = text; setTimeout(() => { $("copied").textContent = ""; }, 3000); };
    if (navigator.clipboard) navigator.clipboard.writeText(S.invite).then(() => said("Copied"), () => said("Copy failed: select the link"));
    else said("Select the link to copy it");
  });
  $("register-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("register-name").value.trim();
    if (!name) return;
    send({ type: "register", name }, (reply) => {
      if (reply.type === "error") { notice(reply.message); return true; }
      localStorage.setItem(ACCOUNT_KEY, JSON.stringify({ name: reply.name, key: reply.key }));
      notice("");
      S.ws.close(); // a session takes its account in hello: open a new one with it
      return true;
    });
  });
  $("queue").addEventListener("click", () => {
    send({ type: "queue" }, (reply) => {
      if (reply.type === "error") { notice(reply.message); return true; }
      S.queued = true;
      renderLadder();
      return true;
    });
  });
  $("unqueue").addEventListener("click", () => {
    send({ type: "unqueue" }, () => { S.queued = false; renderLadder(); return true; });
  });
  $("standings-show").addEventListener("click", showStandings);
  $("alert-sound").checked = localStorage.getItem(ALERT_KEY) === "on";
  $("alert-sound").addEventListener("change", () => {
    localStorage.setItem(ALERT_KEY, $("alert-sound").checked ? "on" : "off");
    if ($("alert-sound").checked) beep(); // a tap allows the page to sound later
  });
  $("alert-notify").hidden = !window.Notification;
  $("alert-notify").addEventListener("click", () => {
    Notification.requestPermission().then((answer) => {
      $("notify-state").textContent = answer === "granted" ? "You will be notified." : "The browser does not allow it here (it needs HTTPS or this machine).";
    });
  });
  document.addEventListener("visibilitychange", () => { if (document.hidden) asleep(); else awake(); });
  document.addEventListener("freeze", asleep);
  document.addEventListener("resume", awake);
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && S.confirming) {
      $("confirm-no").click();
      return;
    }
    const button = $("moves").querySelector(`[data-key="${event.key.toLowerCase()}"]`);
    if (button) { event.preventDefault(); button.click(); }
  });
  setInterval(tick, 250);
}

/** The server password an invite link carries in its fragment (`#password=…`, the host's
 * --invite-password): kept for this tab as a typed one is, and taken out of the address at
 * once, so that neither the address bar nor the history keeps it. */
function passwordFromLink() {
  const given = new URLSearchParams(location.hash.slice(1)).get("password");
  if (given === null) return;
  S.password = given;
  sessionStorage.setItem(PASSWORD_KEY, given);
  history.replaceState(null, "", location.pathname + location.search);
}

/** The phrasebook first (the page tells everything in its words), then the connection. */
function start() {
  passwordFromLink();
  wire();
  $("create-name").value = S.name ? `${S.name}'s table` : "Friday";
  fetch("/phrases.json").then((reply) => reply.json()).then((phrases) => { S.phrases = phrases; })
    .catch(() => { /* the keys stand in for the words */ })
    .finally(() => {
      if (!S.name) { askLogin(); return; }
      connect();
    });
}

start();
