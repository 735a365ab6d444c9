// Tongits in the browser: the documented protocol's text mode over a WebSocket on the page's own
// origin (docs/PROTOCOL.md). The page decides no rule: the moves it offers are the server's
// `legal` list, matched against the cards the person selected. The seat token lives in
// localStorage only (never in an address), so a reload or a dropped connection resumes the seat.
"use strict";

const SUITS = { c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"] };
const RANKS = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const SEAT_KEY = "tongits.seat";
const NAME_KEY = "tongits.name";
const PASSWORD_KEY = "tongits.password"; // sessionStorage: this tab only
const HEARTBEAT = 20; // seconds, said in hello; a ping goes every HEARTBEAT / 2

const $ = (id) => document.getElementById(id);

const S = {
  ws: null, open: false, welcomed: false, nextId: 1, pending: new Map(),
  name: localStorage.getItem(NAME_KEY) || "",
  password: sessionStorage.getItem(PASSWORD_KEY) || "",
  needPassword: false,
  table: null, tableName: "", seat: null, spectator: false, code: null,
  seq: null, hand: null, view: null, legal: [], deadline: null, seats: [],
  standings: null, result: null, matchOver: null, selected: new Set(),
  log: [], invite: null, askedNext: false, reconnects: 0, lobbyTimer: null,
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
      "aria-pressed": options.pressed ? "true" : "false", onclick: options.onclick },
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

function notice(text) {
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

function status(text) { $("status").textContent = text; }

function show(section) {
  for (const id of ["login", "lobby", "table"]) $(id).hidden = id !== section;
  if (section === "lobby") startLobbyRefresh(); else stopLobbyRefresh();
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
  status("connecting…");
  ws.addEventListener("open", () => { S.open = true; S.reconnects = 0; hello(); });
  ws.addEventListener("message", (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    handle(msg);
  });
  ws.addEventListener("close", () => {
    S.open = false;
    clearInterval(S.pinger);
    if (S.ws !== ws || S.needPassword) return;
    S.reconnects += 1;
    status("connection lost, reconnecting…");
    setTimeout(connect, Math.min(8000, 500 * 2 ** Math.min(S.reconnects, 4)));
  });
}

function hello() {
  const msg = { type: "hello", version: 1, name: S.name, kind: "human", heartbeat: HEARTBEAT };
  const kept = savedSeat();
  if (kept && kept.token) {
    msg.token = kept.token;
    if (Number.isInteger(kept.seq)) msg.seq = kept.seq;
  }
  if (S.password) msg.password = S.password;
  send(msg);
  clearInterval(S.pinger);
  S.pinger = setInterval(() => send({ type: "ping" }), HEARTBEAT * 500);
}

const HANDLERS = {
  welcome(msg) {
    S.welcomed = true;
    S.needPassword = false;
    $("server").textContent = msg.server;
    status("connected");
    notice("");
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
    S.table = msg.table;
    S.seat = msg.spectator ? null : msg.seat;
    S.spectator = msg.spectator;
    S.matchOver = null;
    S.result = null;
    if (msg.code) S.invite = `${location.origin}/t/${encodeURIComponent(msg.table)}?code=${encodeURIComponent(msg.code)}`;
    if (msg.token) saveSeat(msg.token);
    show("table");
    render();
  },
  state(msg) {
    S.table = msg.table;
    S.seq = msg.seq;
    if (msg.hand !== undefined) S.hand = msg.hand;
    S.view = msg.view;
    S.seats = msg.seats || S.seats;
    S.legal = msg.legal || [];
    S.deadline = msg.deadline !== undefined ? Date.now() + msg.deadline * 1000 : null;
    if (msg.standings) S.standings = msg.standings;
    if (msg.view.phase !== "over") { S.result = null; S.askedNext = false; }
    const hand = new Set(msg.view.hand);
    for (const card of [...S.selected]) if (!hand.has(card)) S.selected.delete(card);
    if (msg.event) logLine(describe(msg.event));
    for (const event of msg.missed || []) logLine(describe(event));
    if (!S.spectator) saveSeat();
    if (msg.view.phase === "over" && msg.missed !== undefined && !S.spectator) askNextHand();
    show("table");
    render();
  },
  hand_result(msg) {
    S.seq = msg.seq;
    S.result = msg;
    S.standings = msg.standings;
    if (!S.spectator) saveSeat();
    render();
  },
  match_over(msg) {
    S.matchOver = msg;
    S.standings = msg.standings;
    forgetSeat();
    render();
  },
  seat_update(msg) {
    S.seats = msg.seats;
    if (msg.change) logLine(`${seatName(msg.change.seat)}: ${msg.change.change.replace("_", " ")}`);
    render();
  },
  chat(msg) {
    logLine(`${msg.name}: ${msg.text}`, "chat-line");
  },
  tables(msg) { renderTables(msg.tables); },
  error(msg) {
    if (msg.code === "bad_password") {
      S.needPassword = true;
      const wrong = Boolean(S.password);
      S.password = "";
      sessionStorage.removeItem(PASSWORD_KEY);
      askLogin(wrong ? "Wrong password: try again." : "This server needs a password.");
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
    if (msg.code === "replaced") {
      S.ws = null; // another tab took the seat: do not fight it
      notice("This seat was opened in another window.");
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

function askLogin(message) {
  show("login");
  $("password-row").hidden = !S.needPassword;
  $("login-name").value = S.name;
  notice(message || "");
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
  if (invite && !S.table) {
    const msg = { type: "join", table: invite.table };
    if (invite.code) msg.code = invite.code;
    send(msg, (reply) => {
      if (reply.type !== "error") return false;
      if (reply.code === "table_full" || reply.code === "table_started") {
        const watch = { type: "spectate", table: invite.table };
        if (invite.code) watch.code = invite.code;
        send(watch);
        notice("The table is full: you are watching.");
        return true;
      }
      history.replaceState(null, "", "/");
      show("lobby");
      return false;
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
      actions.append(el("button", { type: "button", onclick: () => { S.tableName = table.name; send({ type: "join", table: table.table }); } }, "Join"));
    }
    if (!table.private) {
      actions.append(el("button", { type: "button", class: "quiet", onclick: () => { S.tableName = table.name; send({ type: "spectate", table: table.table }); } }, "Watch"));
    }
    list.append(el("li", { "data-table": table.table },
      el("span", { class: "name", text: table.name }), el("span", { class: "muted", text: facts }), actions));
  }
}

// ----- the table ---------------------------------------------------------------------------

function describe(event) {
  const who = seatName(event.seat);
  const cards = (event.cards || []).join(" ");
  const auto = event.timeout ? " (time ran out)" : event.auto ? " (automatic)" : "";
  switch (event.action) {
    case "draw": return `${who} drew from the stock${auto}`;
    case "pick": return event.meld !== undefined ? `${who} picked the discard onto meld ${event.meld}` : `${who} picked the discard with ${cards}`;
    case "meld": return `${who} melded ${cards}`;
    case "secret": return `${who} laid a secret meld${cards ? " " + cards : ""}`;
    case "sapaw": return `${who} laid off ${event.card} on meld ${event.meld}`;
    case "discard": return `${who} discarded ${event.card}${auto}`;
    case "call": return `${who} called`;
    case "challenge": return `${who} challenged`;
    case "fold": return `${who} folded${auto}`;
    default: return `${who}: ${event.action}`;
  }
}

function logLine(text, cls) {
  S.log.push({ text, cls });
  if (S.log.length > 200) S.log.shift();
  const log = $("log");
  log.append(el("li", { class: cls || null, text }));
  while (log.children.length > 200) log.firstChild.remove();
  log.scrollTop = log.scrollHeight;
}

function moveCards(move) {
  if (move.cards) return move.cards;
  return move.card ? [move.card] : [];
}

/** The legal moves the selection names: those without cards of the hand always, the others
 * when the selected cards are exactly theirs. */
function offeredMoves() {
  return S.legal.filter((move) => {
    const cards = moveCards(move);
    if (cards.length === 0) return true;
    return cards.length === S.selected.size && cards.every((card) => S.selected.has(card));
  });
}

function meldText(id) {
  const meld = S.view && S.view.melds.find((m) => m.id === id);
  if (!meld) return `meld ${id}`;
  return `${seatName(meld.owner)}'s ${meld.cards ? meld.cards.join(" ") : "secret meld"}`;
}

function moveLabel(move) {
  const top = S.view.discards[S.view.discards.length - 1];
  switch (move.action) {
    case "draw": return "Draw from stock";
    case "pick": return move.meld !== undefined ? `Pick ${top} onto ${meldText(move.meld)}` : `Pick ${top} with ${move.cards.join(" ")}`;
    case "meld": return `Meld ${move.cards.join(" ")}`;
    case "secret": return `Secret meld ${move.cards.join(" ")}`;
    case "sapaw": return `Lay off ${move.card} on ${meldText(move.meld)}`;
    case "discard": return `Discard ${move.card}`;
    case "call": return "Call";
    case "challenge": return "Challenge";
    case "fold": return "Fold";
    default: return move.action;
  }
}

function play(move) {
  const sent = { ...move };
  send({ type: "move", move: sent }, (reply) => {
    if (reply.type === "error") notice(reply.message);
    return reply.type === "error";
  });
  S.selected.clear();
  S.legal = [];
  render();
}

function askNextHand() {
  if (S.askedNext) return;
  S.askedNext = true;
  send({ type: "next_hand" }, (reply) => reply.type === "error" && reply.code === "not_ready");
}

function render() {
  if (!S.table) return;
  const view = S.view;
  $("table-title").textContent = S.tableName || `Table ${S.table}`;
  $("hand-no").textContent = S.hand ? `hand ${S.hand}` : "";
  $("invite").hidden = !S.invite;
  if (S.invite) { $("invite-link").textContent = S.invite; $("invite-link").href = S.invite; }
  renderSeats();
  renderBoard();
  renderHand();
  renderMoves();
  renderResult();
  tick();
}

function renderSeats() {
  const list = $("seats");
  list.replaceChildren();
  const view = S.view;
  for (let seat = 0; seat < 3; seat++) {
    const entry = S.seats.find((s) => s.seat === seat) || { seat, player: null };
    const toAct = view && view.to_act === seat;
    const cls = `seat${toAct ? " to-act" : ""}${seat === S.seat && !S.spectator ? " me" : ""}${entry.away ? " away" : ""}`;
    const facts = [];
    if (entry.player === null) facts.push("empty");
    else if (entry.player === "bot") facts.push(entry.stand_in ? "bot standing in" : "bot");
    if (entry.away) facts.push("away");
    if (view) {
      facts.push(`${view.hand_sizes[seat]} cards`);
      if (view.opened[seat]) facts.push("opened");
      if (view.dealer === seat) facts.push("dealer");
    }
    if (S.standings) facts.push(`${S.standings.chips[seat]} chips`);
    list.append(el("li", { class: cls, "data-seat": seat, "aria-current": toAct ? "true" : null },
      el("div", { class: "who", text: entry.player === null ? "—" : seatName(seat) }),
      el("div", { class: "muted", text: facts.join(" · ") }),
      el("div", { class: "clock", "data-clock": seat })));
  }
}

function renderBoard() {
  const view = S.view;
  const stock = $("stock");
  const discards = $("discards");
  const melds = $("melds");
  melds.replaceChildren();
  discards.replaceChildren();
  if (!view) { stock.textContent = ""; return; }
  stock.textContent = String(view.stock);
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
      for (let i = 0; i < 3; i++) cards.append(el("span", { class: "card small back", role: "img", "aria-label": "hidden card" }));
    }
    melds.append(el("div", { class: "meld", "data-meld": meld.id, role: "group", "aria-label": `meld ${meld.id} of ${seatName(meld.owner)}` },
      el("div", { class: "owner", text: `${meld.id}: ${seatName(meld.owner)}${meld.secret ? " (secret)" : ""}` }), cards));
  }
}

function renderHand() {
  const hand = $("hand");
  hand.replaceChildren();
  const view = S.view;
  hand.hidden = S.spectator;
  if (!view || S.spectator) return;
  const playable = new Set(S.legal.flatMap(moveCards));
  for (const card of view.hand) {
    hand.append(cardEl(card, {
      button: true, pressed: S.selected.has(card), extra: playable.has(card) ? "playable" : "",
      onclick: () => { toggle(card); },
    }));
  }
}

function toggle(card) {
  if (S.selected.has(card)) S.selected.delete(card); else S.selected.add(card);
  renderHand();
  renderMoves();
  const again = $("hand").querySelector(`[data-card="${card}"]`);
  if (again) again.focus();
}

function renderMoves() {
  const moves = $("moves");
  moves.replaceChildren();
  moves.dataset.legal = String(S.legal.length);
  const offered = S.view ? offeredMoves() : [];
  offered.forEach((move, i) => {
    const key = i < 9 ? el("kbd", { text: String(i + 1), "aria-hidden": "true" }) : null;
    moves.append(el("button", { type: "button", "data-action": move.action, onclick: () => play(move) }, key, moveLabel(move)));
  });
  const handMoves = S.legal.filter((m) => moveCards(m).length > 0).length;
  const matched = offered.filter((m) => moveCards(m).length > 0).length;
  let hint = "";
  if (handMoves && !matched) {
    hint = S.selected.size ? "No move uses exactly these cards." : "Select cards to see the moves that use them.";
  }
  $("hint").textContent = hint;
}

function renderResult() {
  const box = $("result");
  const result = S.result && S.result.result;
  const over = S.matchOver;
  box.replaceChildren();
  box.hidden = !result && !over;
  if (!result && !over) return;
  const standings = S.standings;
  if (result) {
    const winner = result.winner === null || result.winner === undefined ? "nobody (void hand)" : seatName(result.winner);
    box.append(el("h3", { text: `Hand over: ${winner} won${result.end ? ` (${result.end})` : ""}` }));
    // each seat's final hand on a row of its own under its figures: it fits a phone's width
    const rows = [0, 1, 2].flatMap((seat) => [
      el("tr", { class: seat === result.winner ? "winner" : null },
        el("td", { text: seatName(seat) }),
        el("td", { text: String(result.counts[seat]) }),
        el("td", { text: (result.chips[seat] > 0 ? "+" : "") + result.chips[seat] }),
        el("td", { text: standings ? String(standings.chips[seat]) : "" })),
      el("tr", { class: "final-hand" },
        el("td", { colspan: "4", "aria-label": `${seatName(seat)}'s last hand` },
          el("div", { class: "cards" }, ...(result.hands[seat] || []).map((c) => cardEl(c, { small: true }))))),
    ]);
    box.append(el("table", {},
      el("thead", {}, el("tr", {}, ...["Seat", "Count", "Chips", "Total"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows)));
  }
  if (over) {
    const chips = over.standings.chips;
    const best = Math.max(...chips);
    const winners = [0, 1, 2].filter((s) => chips[s] === best).map(seatName).join(" and ");
    const hands = over.standings.hands;
    box.append(el("h3", { text: `Match over after ${hands} hand${hands === 1 ? "" : "s"}: ${winners} ${winners.includes(" and ") ? "share the lead" : "wins"}` }));
    box.append(el("ol", {}, ...[0, 1, 2].map((s) => el("li", { text: `${over.standings.names[s]}: ${chips[s]} chips, ${over.standings.wins[s]} hands won` }))));
    box.append(el("button", { type: "button", id: "to-lobby", onclick: backToLobby }, "Back to the lobby"));
  } else if (!S.spectator) {
    box.append(el("button", { type: "button", id: "next-hand", disabled: S.askedNext, onclick: () => { askNextHand(); render(); } },
      S.askedNext ? "Waiting for the others…" : "Next hand"));
  }
}

function tick() {
  for (const clock of document.querySelectorAll("[data-clock]")) clock.textContent = "";
  const view = S.view;
  let turn = "";
  if (view && view.phase !== "over" && view.to_act !== null) {
    const left = S.deadline ? Math.max(0, Math.ceil((S.deadline - Date.now()) / 1000)) : null;
    const clock = document.querySelector(`[data-clock="${view.to_act}"]`);
    if (clock && left !== null) clock.textContent = `${left} s`;
    if (view.to_act === S.seat && !S.spectator) {
      turn = S.legal.length ? "Your turn" + (left !== null ? ` (${left} s)` : "") : "Your turn…";
    } else {
      turn = `${seatName(view.to_act)} to play`;
    }
  }
  $("turn").textContent = turn;
}

function backToLobby() {
  S.table = null; S.view = null; S.result = null; S.matchOver = null; S.standings = null;
  S.tableName = "";
  S.seats = []; S.invite = null; S.legal = []; S.log = []; S.hand = null;
  $("log").replaceChildren();
  forgetSeat();
  history.replaceState(null, "", "/");
  notice("");
  show("lobby");
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
    S.tableName = msg.name;
    send(msg);
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
    send({ type: "leave" }, () => { backToLobby(); return true; });
  });
  $("invite-copy").addEventListener("click", () => {
    if (navigator.clipboard) navigator.clipboard.writeText(S.invite).catch(() => {});
  });
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-9]$/.test(event.key)) {
      const button = $("moves").children[Number(event.key) - 1];
      if (button) { event.preventDefault(); button.click(); }
    } else if (event.key === "Escape") {
      S.selected.clear();
      render();
    }
  });
  setInterval(tick, 250);
}

function start() {
  wire();
  $("create-name").value = S.name ? `${S.name}'s table` : "Friday";
  if (!S.name) { askLogin(); return; }
  connect();
}

start();
