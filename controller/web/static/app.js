// tablectl web: the dealer's touch screen and the export check. No inline script anywhere
// (Content-Security-Policy script-src 'self'); text goes in with textContent only, so nothing
// the table or the journal says can become markup.
//
// The screen renders the view the server builds (controller/web/dealer.py) and sends what the
// dealer taps as control-socket verbs to POST /dealer/command; every button it shows comes from
// the view (the table's own "waits"), so it offers nothing the table would refuse in that state.
// A supervisor's button asks a supervisor to log in at the table first (name + PIN).
"use strict";

const SUITS = { C: ["\u2663", "black"], D: ["\u2666", "red"], H: ["\u2665", "red"], S: ["\u2660", "black"] };
const REASONS = ["Card exposed", "Deck count wrong", "Device fault", "Dealing error", "Player dispute"];
// A reason chosen with one tap, per verb (any reason can still be typed on the screen's keys)
const PRESETS = {
  "supervisor.clock-override": ["Clock checked against the pit clock", "Time server unreachable", "After a power cut"],
  "journal.acknowledge": ["Damage seen and reported", "Disk replaced"],
};
// The screen's own keyboard (the kiosk has none): one-shot shift, backspace, space
const KEY_ROWS = ["1234567890\u232b", "qwertyuiop-", "asdfghjkl.,", "\u21e7zxcvbnm "];

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function cardNode(code) {
  const span = el("span");
  if (code === null || code === undefined) {
    span.className = "card back";
    span.title = "face down";
    return span;
  }
  const m = /^([2-9TJQKA])([CDHS])$/.exec(String(code));
  if (!m) {
    span.className = "card odd";
    span.textContent = String(code);
    return span;
  }
  span.className = "card " + SUITS[m[2]][1];
  span.title = code;
  span.textContent = (m[1] === "T" ? "10" : m[1]) + SUITS[m[2]][0];
  return span;
}

function money(v) {
  if (typeof v !== "number") return v === null || v === undefined ? "" : String(v);
  const sign = v < 0 ? "-" : "";
  const a = Math.abs(v);
  return sign + Math.floor(a / 100).toLocaleString("en") + "." + String(a % 100).padStart(2, "0");
}

function byId(id) { return document.getElementById(id); }

function keyboard(container, input) {
  let upper = false;
  const draw = () => container.replaceChildren(...KEY_ROWS.map((row) => {
    const line = el("div", "key-row");
    for (const ch of row) {
      const typed = upper ? ch.toUpperCase() : ch;
      const label = ch === " " ? "space" : ch === "\u21e7" ? "\u21e7" : typed;
      const b = el("button", "key" + (ch === " " ? " space" : "") + (ch === "\u21e7" && upper ? " chosen" : ""), label);
      b.type = "button";
      b.dataset.key = label;
      b.addEventListener("click", () => {
        if (ch === "\u21e7") { upper = !upper; draw(); return; }
        input.value = ch === "\u232b" ? input.value.slice(0, -1) : input.value + typed;
        if (upper && ch !== "\u232b") { upper = false; draw(); }
      });
      line.append(b);
    }
    return line;
  }));
  draw();
}

function show(id, text) {
  const node = byId(id);
  node.textContent = text || "";
  node.hidden = !text;
}

// -- talking to the server ---------------------------------------------------------------------

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute("content") : "";
}

async function post(url, body) {
  let reply;
  try {
    reply = await fetch(url, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "content-type": "application/json", "x-csrf-token": csrfToken() },
    });
  } catch (error) {
    return { ok: false, error: { code: "network", message: "The screen's server does not answer" } };
  }
  let answer = null;
  try { answer = await reply.json(); } catch (error) { answer = null; }
  if (answer && typeof answer.ok === "boolean") return answer;
  const words = { 401: "Log in again", 403: "Not allowed from this screen", 404: "This screen cannot send commands" };
  return { ok: false, error: { code: String(reply.status), message: words[reply.status] || ("Server answered " + reply.status) } };
}

const state = { view: null, box: null, player: null, bet: null, pending: 0, sending: false, standing: {} };

function say(text, good) {
  const node = byId("answer");
  node.textContent = text || "";
  node.hidden = !text;
  node.className = "answer " + (good ? "good" : "bad");
}

// Commands leave one at a time, in the order tapped: a tap while another command is on its
// way waits its turn instead of being lost (a dealer taps Play on box 1, then at once on box 3;
// dropping the second left the round waiting for a decision the dealer had given). The same
// command tapped again while it waits or is sent is one command, not two.
let commandChain = Promise.resolve();
const commandsWaiting = new Set();

function command(verb, args, button) {
  const key = verb + " " + JSON.stringify(args || {});
  if (commandsWaiting.has(key)) return Promise.resolve(false);
  commandsWaiting.add(key);
  const run = commandChain.then(() => sendCommand(verb, args, button));
  commandChain = run.catch(() => false);
  return run.finally(() => commandsWaiting.delete(key));
}

// An accepted command is done for the screen when the table's view after it is drawn: until
// then the page stays busy, so nobody acts on the view from before it (the shift by taps read
// the old hold between the answer and the new view, and answered it twice). The view may come
// before the answer; a command that changes nothing on the screen waits VIEW_WAIT_MS at most.
const VIEW_WAIT_MS = 2000;
let viewsDrawn = 0;
let viewWaiters = [];

function viewDrawn() {
  viewsDrawn += 1;
  const waiting = viewWaiters;
  viewWaiters = [];
  for (const resolve of waiting) resolve();
}

function viewAfter(drawnBefore) {
  if (viewsDrawn > drawnBefore) return Promise.resolve();
  return new Promise((resolve) => { viewWaiters.push(resolve); setTimeout(resolve, VIEW_WAIT_MS); });
}

async function sendCommand(verb, args, button) {
  state.sending = true;
  document.body.classList.add("sending");
  const drawnBefore = viewsDrawn;
  try {
    const answer = await post(byId("dealer").dataset.command, { verb, args: args || {} });
    if (answer.ok) {
      const result = answer.result || {};
      if (result.accepted === false || result.refused) {
        say("Refused: " + (result.reason || result.refused || "the table said no"), false);
        return false;
      }
      say("", true);
      await viewAfter(drawnBefore);
      return true;
    }
    if (button && button.supervisor && answer.error && answer.error.code === "role") {
      // the supervisor's presence ended (idle, or logged out elsewhere): ask again, then send
      if (state.view) { state.view.supervisor = null; renderSupervisor(state.view); }
      askSupervisor("\u201c" + button.label + "\u201d needs a supervisor", () => command(verb, args));
      return false;
    }
    say("Refused: " + ((answer.error && answer.error.message) || "the table said no"), false);
    return false;
  } finally {
    state.sending = false;
    document.body.classList.remove("sending");
  }
}

// -- supervisor at the table -------------------------------------------------------------------

let afterLogin = null;

function askSupervisor(why, then) {
  afterLogin = then;
  byId("supervisor-why").textContent = why;
  byId("supervisor-name").value = "";
  byId("supervisor-pin").value = "";
  show("supervisor-problem", "");
  // the accounts that may supervise, when the server names them: a tap, no typing
  const names = (state.supervisors || []).map((name) => {
    const b = el("button", "choose", name);
    b.type = "button";
    b.dataset.name = name;
    b.addEventListener("click", () => {
      byId("supervisor-name").value = name;
      for (const other of byId("supervisor-names").children) other.classList.toggle("chosen", other === b);
      padFor("pin");
    });
    return b;
  });
  byId("supervisor-names").replaceChildren(...names);
  byId("supervisor-names").hidden = !names.length;
  byId("supervisor-login").showModal();
  padFor("pin");
}

// one pad at a time fits the 800x480 screen: the PIN's digits, or the name's keys while the
// name field is tapped (where the server names no supervisors to choose from)
function padFor(which) {
  byId("name-keys").hidden = which !== "name";
  byId("pin-pad").hidden = which !== "pin";
  byId(which === "name" ? "supervisor-name" : "supervisor-pin").focus();
}

async function supervisorLogin(event) {
  event.preventDefault();
  const name = byId("supervisor-name").value.trim();
  const pin = byId("supervisor-pin").value;
  if (!name || !pin) { show("supervisor-problem", "Name and PIN, please"); return; }
  const answer = await post(byId("dealer").dataset.supervisor, { name, pin });
  if (!answer.ok) {
    show("supervisor-problem", (answer.error && answer.error.message) || "Wrong name or PIN");
    return;
  }
  await supervisorArrived(answer, name);
}

// The kiosk's badge reader (state.badge from /dealer/state; null on a screen it does not
// answer): the badge stands in for the name; the PIN too when the house asks for both. The
// server waits (bounded) for the next read; the id itself never reaches this page.
async function supervisorBadge() {
  const pin = byId("supervisor-pin").value;
  if (state.badge && state.badge.needs_pin && !pin) { show("supervisor-problem", "Your PIN, then your badge, please"); return; }
  const button = byId("supervisor-badge");
  button.disabled = true;
  show("supervisor-problem", "Present your badge to the reader\u2026");
  try {
    const answer = await post(byId("dealer").dataset.supervisor + "/badge", state.badge && state.badge.needs_pin ? { pin } : {});
    if (!answer.ok) {
      show("supervisor-problem", (answer.error && answer.error.message) || "Badge not accepted");
      return;
    }
    await supervisorArrived(answer, answer.supervisor);
  } finally {
    button.disabled = false;
  }
}

async function supervisorArrived(answer, name) {
  byId("supervisor-login").close();
  if (state.view) { state.view.supervisor = { name: answer.supervisor || name, expires_in: answer.expires_in }; renderSupervisor(state.view); }
  const then = afterLogin;
  afterLogin = null;
  if (then) await then();
}

function withSupervisor(button, run) {
  if (!button.supervisor || (state.view && state.view.supervisor)) return run();
  return askSupervisor("\u201c" + button.label + "\u201d needs a supervisor", run);
}

// -- prompts for what a command needs ----------------------------------------------------------

let askThen = null;

function ask(title, what, presets, value, then) {
  askThen = then;
  byId("ask-title").textContent = title;
  byId("ask-what").textContent = what;
  byId("ask-input").value = value || "";
  show("ask-problem", "");
  byId("ask-presets").replaceChildren(...presets.map((text) => {
    const b = el("button", "preset", text);
    b.type = "button";
    b.addEventListener("click", () => { byId("ask-input").value = text; });
    return b;
  }));
  byId("ask").showModal();
  byId("ask-input").focus();
}

async function askSubmit(event) {
  event.preventDefault();
  const value = byId("ask-input").value.trim();
  if (!value) { show("ask-problem", "Please fill this in"); return; }
  byId("ask").close();
  const then = askThen;
  askThen = null;
  if (then) await then(value);
}

function argsFor(button, value) {
  const args = Object.assign({}, button.args);
  if (button.needs.includes("reason")) args.reason = value;
  return args;
}

// -- pickers: the card pad of an order, a reconstruction from the cards seen -------------------
// Both check what they send as the table will (the table judges it again): an order gives the
// number of cards due; a reconstruction leaves every box it touches three cards, each card once,
// only cards seen this round (RWS-NC3P 5.9, 5.5.4).

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const SUIT_ROWS = ["S", "H", "D", "C"];
let pickThen = null;

function openPick(title, what, draw, then) {
  pickThen = then;
  byId("pick-title").textContent = title;
  byId("pick-what").textContent = what;
  show("pick-problem", "");
  byId("pick").dataset.kind = draw.kind;
  byId("pick-undo").onclick = () => { draw.undo(); draw.render(); };
  draw.render();
  byId("pick").showModal();
}

function seenCards(view) {
  const seen = [];
  for (const box of view.boxes) for (const c of box.cards) if (c) seen.push(c);
  for (const c of view.burn || []) if (c) seen.push(c);
  if (view.dealer) for (const c of view.dealer.cards) if (c) seen.push(c);
  return seen;
}

function cardPad(view, due) {
  const chosen = [];
  const seen = new Set(seenCards(view));
  const draw = {
    kind: "cards",
    undo: () => chosen.pop(),
    render: () => {
      byId("pick-chosen").replaceChildren(...chosen.map(cardNode));
      byId("pick-body").replaceChildren(...SUIT_ROWS.map((suit) => {
        const row = el("div", "card-row");
        for (const rank of RANKS) {
          const code = rank + suit;
          const b = el("button", "card-key " + SUITS[suit][1], (rank === "T" ? "10" : rank) + SUITS[suit][0]);
          b.type = "button";
          b.dataset.card = code;
          b.disabled = seen.has(code) || chosen.includes(code) || (due && due.count !== null && chosen.length >= due.count);
          b.addEventListener("click", () => { chosen.push(code); draw.render(); });
          row.append(b);
        }
        return row;
      }));
      byId("pick-submit").disabled = !chosen.length || (due && due.count !== null && chosen.length !== due.count);
    },
    value: () => {
      if (!chosen.length) return [null, "Tap the cards in the order drawn"];
      if (due && due.count !== null && chosen.length !== due.count) return [null, due.label + " is due " + due.count + " card(s)"];
      return [{ cards: chosen.slice() }, null];
    },
  };
  return draw;
}

function reconstruction(view) {
  // the boxes' recorded hands, the cards seen this round; a card tapped, then where it goes
  const rows = view.boxes.filter((b) => !b.empty).map((b) => ({ position: b.position, label: b.label, cards: b.cards.filter(Boolean), was: b.cards.filter(Boolean).join(" ") }));
  const aside = [];
  for (const c of seenCards(view)) if (!rows.some((r) => r.cards.includes(c))) aside.push(c);
  let picked = null;
  const history = [];
  const where = (code) => rows.find((r) => r.cards.includes(code)) || null;
  const moveTo = (target) => {
    if (!picked) return;
    const from = where(picked);
    history.push(rows.map((r) => r.cards.slice()).concat([aside.slice()]));
    if (from) from.cards.splice(from.cards.indexOf(picked), 1); else aside.splice(aside.indexOf(picked), 1);
    (target ? target.cards : aside).push(picked);
    picked = null;
    draw.render();
  };
  const cardButton = (code) => {
    const b = el("button", "held-card" + (picked === code ? " chosen" : ""));
    b.type = "button";
    b.dataset.card = code;
    b.append(cardNode(code));
    b.addEventListener("click", (event) => { event.stopPropagation(); picked = picked === code ? null : code; draw.render(); });
    return b;
  };
  const draw = {
    kind: "hands",
    undo: () => {
      const last = history.pop();
      if (!last) return;
      rows.forEach((r, i) => { r.cards = last[i]; });
      aside.splice(0, aside.length, ...last[rows.length]);
      picked = null;
    },
    render: () => {
      byId("pick-chosen").replaceChildren();
      const lines = rows.map((r) => {
        const line = el("div", "hand-row" + (r.cards.length === 3 ? " full" : ""));
        line.dataset.position = r.position;
        const to = el("button", "to", r.label + " (" + r.cards.length + ")");
        to.type = "button";
        to.dataset.box = r.position;
        to.addEventListener("click", () => moveTo(r));
        line.append(to, ...r.cards.map(cardButton));
        return line;
      });
      const tray = el("div", "hand-row aside");
      const put = el("button", "to", "Set aside");
      put.type = "button";
      put.dataset.box = "aside";
      put.addEventListener("click", () => moveTo(null));
      tray.append(put, ...aside.map(cardButton));
      byId("pick-body").replaceChildren(...lines, tray);
      byId("pick-submit").disabled = false;
    },
    value: () => {
      const short = rows.filter((r) => r.cards.length && r.cards.length !== 3);
      if (short.length) return [null, short.map((r) => r.label + " has " + r.cards.length + " card(s)").join(", ") + ": a hand is three cards" + (seenCards(view).length < 3 * rows.filter((r) => r.cards.length || r.was).length ? " (too few cards seen this round: the hands cannot be reconstructed)" : "")];
      const emptied = rows.filter((r) => !r.cards.length && r.was);
      if (emptied.length) return [null, emptied.map((r) => r.label).join(", ") + " would have no hand"];
      const hands = {};
      for (const r of rows) if (r.cards.join(" ") !== r.was) hands[r.position] = r.cards.slice();
      return [Object.keys(hands).length ? { hands } : {}, null];
    },
  };
  return draw;
}

// the dealer's reports the table offers now (view.reports, from waits): what, then which box
function reportPicker(view) {
  let kind = null;
  let box = null;
  const draw = {
    kind: "report",
    undo: () => { if (box !== null) box = null; else kind = null; },
    render: () => {
      byId("pick-chosen").replaceChildren();
      const kinds = el("div", "buttons report-kinds");
      kinds.append(...view.reports.map((r) => {
        const b = el("button", "choose" + (kind === r ? " chosen" : ""), r.words);
        b.type = "button";
        b.dataset.kind = r.kind;
        b.addEventListener("click", () => { kind = r; box = r.position; draw.render(); });
        return b;
      }));
      const boxes = el("div", "buttons report-boxes");
      if (kind && kind.boxes.length) {
        boxes.append(el("span", "label", "Which box?"), ...kind.boxes.map((x) => {
          const b = el("button", "choose" + (box === x.position ? " chosen" : ""), x.label);
          b.type = "button";
          b.dataset.box = x.position;
          b.addEventListener("click", () => { box = x.position; draw.render(); });
          return b;
        }));
      }
      byId("pick-body").replaceChildren(kinds, boxes);
      byId("pick-submit").disabled = !kind || (kind.pick_box && box === null);
    },
    value: () => {
      if (!kind) return [null, "What happened?"];
      if (kind.pick_box && box === null) return [null, "Which box?"];
      const args = { kind: kind.kind };
      if (box !== null && box !== undefined) args.position = box;
      if (kind.source) args.source = kind.source;
      return [args, null];
    },
  };
  return draw;
}

function openReport() {
  const view = state.view;
  if (!view || !view.reports || !view.reports.length) return;
  const draw = reportPicker(view);
  openPick("Report an irregularity", "What the dealer saw: the table rules it by the game's clause", draw, async () => {
    const [args, problem] = draw.value();
    if (problem) { show("pick-problem", problem); return false; }
    byId("pick").close();
    return command("irregularity.report", args);
  });
}

// a swap of two boxes' complete hands (hands dealt to the wrong boxes): two taps, no typing
function swapPicker(view) {
  const chosen = [];
  const boxes = view.boxes.filter((b) => b.cards.length);
  const draw = {
    kind: "positions",
    undo: () => chosen.pop(),
    render: () => {
      byId("pick-chosen").replaceChildren(el("span", "swap-line", chosen.length ? chosen.map((p) => boxes.find((b) => b.position === p).label).join(" \u21c4 ") : ""));
      byId("pick-body").replaceChildren(...boxes.map((box) => {
        const line = el("div", "hand-row" + (chosen.includes(box.position) ? " full" : ""));
        const b = el("button", "to choose" + (chosen.includes(box.position) ? " chosen" : ""), box.label);
        b.type = "button";
        b.dataset.box = box.position;
        b.disabled = chosen.includes(box.position) || chosen.length >= 2;
        b.addEventListener("click", () => { chosen.push(box.position); draw.render(); });
        line.append(b, ...box.cards.map(cardNode));
        return line;
      }));
      byId("pick-submit").disabled = chosen.length !== 2;
    },
    value: () => chosen.length === 2 ? [{ positions: chosen.slice() }, null] : [null, "Tap the two boxes whose hands change places"],
  };
  return draw;
}

function choose(button) {
  const view = state.view;
  const due = view && view.hold ? view.hold.due || null : null;
  const draw = button.needs.includes("hands") ? reconstruction(view)
    : button.needs.includes("positions") ? swapPicker(view) : cardPad(view, due);
  const what = draw.kind === "hands"
    ? "Tap a card, then the box it belongs to. The dealer's hand stays as dealt."
    : draw.kind === "positions" ? "Tap the two boxes whose hands change places (complete hands only)"
    : due ? due.label + ": " + (due.count !== null ? due.count + " card" + (due.count === 1 ? "" : "s") : "the cards drawn together") + ", in the order drawn"
      : "The cards in the order drawn";
  openPick(button.label, what, draw, async () => {
    const [args, problem] = draw.value();
    if (problem) { show("pick-problem", problem); return false; }
    byId("pick").close();
    return command(button.verb, Object.assign({}, button.args, args), button);
  });
}

async function pickSubmit(event) {
  event.preventDefault();
  if (pickThen) await pickThen();
}

function press(button) {
  const send = async () => {
    if (["hands", "cards", "positions"].some((need) => button.needs.includes(need))) return choose(button);
    if (!button.needs.length) return command(button.verb, button.args, button);
    const need = button.needs[0];
    const words = { reason: ["Reason", PRESETS[button.verb] || REASONS] }[need] || [need, []];
    return ask(button.label, words[0], words[1], "", (value) => command(button.verb, argsFor(button, value), button));
  };
  return withSupervisor(button, send);
}

// The table's own buttons take no tap for a moment after they are drawn: the next one comes
// where the last one was, so a dealer's double tap on "Open the round" landed on "No more
// bets" and closed betting before anyone bet (issue 36, seen in the shift by taps). A person
// reads the new button before tapping it; a finger still on the way is not a decision.
const SETTLE_MS = 400;

function settling(buttons) {
  for (const b of buttons) { b.disabled = true; b.classList.add("settling"); }
  setTimeout(() => { for (const b of buttons) { b.disabled = false; b.classList.remove("settling"); } }, SETTLE_MS);
  return buttons;
}

function buttonNode(button, extra) {
  const b = el("button", (extra || "") + (button.supervisor ? " supervisor" : ""), button.label);
  b.type = "button";
  b.dataset.verb = button.verb;
  if (button.args && button.args.answer) b.dataset.answer = button.args.answer;
  if (button.supervisor) b.title = "a supervisor logs in at the table";
  b.addEventListener("click", () => press(button));
  return b;
}

// -- rendering ---------------------------------------------------------------------------------

function renderSupervisor(view) {
  const sup = view.supervisor;
  show("supervisor", sup ? "Supervisor " + sup.name : "");
  byId("supervisor-logout").hidden = !sup;
}

function renderHold(view) {
  const hold = view.hold;
  byId("hold").hidden = !hold;
  if (!hold) return;
  byId("hold-title").textContent = hold.title;
  byId("hold-detail").textContent = hold.detail || "";
  byId("hold-clause").textContent = hold.clause ? "Rule: " + hold.clause : "";
  byId("hold-buttons").replaceChildren(...hold.buttons.map((b) => buttonNode(b, "big")));
}

function boxTotal(box) {
  let total = 0;
  for (const p of box.players) for (const w of p.wagers) total += w.amount;
  return total;
}

function playerName(player, seated) {
  if (player === null || player === undefined || player === "") return "Player";
  const m = /^box[^-]*-(seated|standing-(\d+))$/.exec(String(player));
  if (m) return m[1] === "seated" ? "Seated" : "Standing " + m[2];
  return String(player) + (seated === false ? " (standing)" : seated ? " (seated)" : "");
}

// "taken 5.00": the amount at the amounts' size (4 mm at 800x480), the words at the labels';
// ``amount``: this sum is also the wager's own amount (shown once, here)
function resultNode(result, amount) {
  const r = el("span", "result " + result.outcome);
  const words = String(result.words);
  const sum = money(result.moved);
  const at = words.lastIndexOf(sum);
  if (at < 0) { r.textContent = words; return r; }
  if (at) r.append(el("span", "words", words.slice(0, at)));
  r.append(el("span", amount ? "sum amount" : "sum", sum));
  if (at + sum.length < words.length) r.append(el("span", "words", words.slice(at + sum.length)));
  return r;
}

function wagerNode(w, withdrawable) {
  const li = el("li", "wager" + (w.result ? " " + w.result.outcome : ""));
  li.dataset.wager = w.id;
  li.append(el("span", "bet", w.bet_words));
  // a result that moves the wager's own amount (taken, returned, push) shows it once, in the
  // result ("Ante taken 5.00"): one line less a wager, so 7 boxes fit at 800x480
  const once = !!w.result && w.result.outcome !== "win" && w.result.moved === w.amount;
  if (!once) li.append(el("span", "amount", money(w.amount)));
  if (w.option) li.append(el("span", "option", w.option === "withdraw" ? "withdrawn" : "continues"));
  if (w.result) {
    const r = resultNode(w.result, once);
    if (w.result.rule) r.title = w.result.rule;
    li.append(r);
  }
  if (withdrawable) {
    const x = el("button", "withdraw", "\u2715");
    x.type = "button";
    x.title = "withdraw this wager";
    x.setAttribute("aria-label", "withdraw " + w.bet_words + " " + money(w.amount));
    x.addEventListener("click", (event) => { event.stopPropagation(); command("wager.withdraw", { wager_id: w.id }); });
    li.append(x);
  }
  return li;
}

function choiceButtons(box, view, player) {
  const out = [];
  if (box.decision_due) {
    for (const choice of box.choices.decide) {
      const b = el("button", "choice " + choice, choice === "play" ? "Play" : choice === "fold" ? "Fold" : choice);
      b.type = "button";
      b.dataset.choice = choice;
      b.addEventListener("click", (event) => { event.stopPropagation(); command("decide", { position: box.position, choice }); });
      out.push(b);
    }
  }
  if (player && player.option_due) {
    for (const choice of box.choices.option) {
      const b = el("button", "choice " + choice, choice === "continue" ? "Continue" : choice === "withdraw" ? "Withdraw" : choice);
      b.type = "button";
      b.dataset.choice = choice;
      const args = { position: box.position, choice };
      if (player.player !== null && player.player !== undefined) args.player = player.player;
      b.addEventListener("click", (event) => { event.stopPropagation(); command("option", args); });
      out.push(b);
    }
  }
  return out;
}

function boxNode(box, view) {
  const node = el("div", "box");
  node.dataset.position = box.position;
  node.id = "box-" + box.position;
  if (box.folded) node.classList.add("folded");
  if (box.removed) node.classList.add("removed");
  if (box.decision_due || box.option_due) node.classList.add("due");
  if (view.betting) node.classList.add("open");
  if (state.box === box.position && view.betting) node.classList.add("selected");
  const head = el("div", "box-head");
  head.append(el("span", "pos", box.label));
  if (box.folded) head.append(el("span", "mark fold", "FOLDED"));
  else if (box.decision === "play") head.append(el("span", "mark play", "PLAYS"));
  if (box.removed) head.append(el("span", "mark removed", "REMOVED (" + box.removed + ")"));
  const total = boxTotal(box);
  if (total) head.append(el("span", "total", money(total)));
  node.append(head);
  if (box.cards.length) {
    const hand = el("div", "cards");
    hand.append(...box.cards.map(cardNode));
    node.append(hand);
  }
  for (const p of box.players) {
    const who = el("div", "player");
    // who bets: named when the box has several players, or its only player stands (RWS-NC3P 1.15)
    if (box.players.length > 1 || (p.player !== null && p.seated !== true)) who.append(el("span", "who", playerName(p.player, p.seated)));
    const list = el("ul", "wagers");
    list.append(...p.wagers.map((w) => wagerNode(w, false)));
    who.append(list);
    const option = choiceButtons({ ...box, decision_due: false }, view, p);
    if (option.length) { const row = el("div", "buttons choices"); row.append(...option); who.append(row); }
    node.append(who);
  }
  const decide = choiceButtons({ ...box, option_due: false }, view, null);
  if (box.option_due && !box.players.some((p) => p.option_due)) {
    decide.push(...choiceButtons({ ...box, decision_due: false }, view, { player: null, option_due: true }));
  }
  if (decide.length) { const row = el("div", "buttons choices"); row.append(...decide); node.append(row); }
  if (view.betting) {
    if (!total) node.append(el("div", "hint", "Tap to bet"));
    node.addEventListener("click", () => openWager(box.position));
  }
  return node;
}

function renderTable(view) {
  const dealerHand = byId("dealer-hand");
  dealerHand.replaceChildren();
  if (view.dealer && view.dealer.cards.length) {
    dealerHand.append(el("span", "pos", "Dealer"), ...view.dealer.cards.map(cardNode));
  }
  dealerHand.hidden = !(view.dealer && view.dealer.cards.length);
  const shown = view.boxes.filter((b) => view.betting || !b.empty);
  byId("boxes").replaceChildren(...shown.map((b) => boxNode(b, view)));
  byId("boxes").dataset.count = String(shown.length);
}

function renderDevice(view) {
  const dev = view.device;
  byId("device").textContent = dev ? dev.name + ": " + (dev.online ? "online" : "OFFLINE") +
    (dev.faults && dev.faults.length ? ", FAULT (" + dev.fault_words + ")" : "") +
    (dev.cards_left !== null && dev.cards_left !== undefined ? ", " + dev.cards_left + " cards left" : "") : "";
  byId("device").classList.toggle("bad", !!(dev && (!dev.online || (dev.faults && dev.faults.length))));
}

// Each part of the screen is drawn again only when what it shows changed: a new view that
// leaves the boxes as they were keeps their buttons (a tap on one is not lost to a redraw).
const drawn = {};

function redraw(part, data, draw) {
  const key = JSON.stringify(data === undefined ? null : data);
  if (drawn[part] === key) return;
  drawn[part] = key;
  draw();
}

function render(view) {
  // a view without the key (a server before supervisors at the table) keeps the login we saw
  if (!("supervisor" in view) && state.view && state.view.supervisor) view.supervisor = state.view.supervisor;
  state.view = view;
  byId("round").textContent = "Round " + (view.round ?? "-");
  byId("state").textContent = view.words;
  byId("next").textContent = view.next;
  renderDevice(view);
  renderSupervisor(view);
  redraw("hold", view.hold, () => renderHold(view));
  show("problem", view.problem);
  show("round-note", view.void_clause ? "Void under " + view.void_clause + ": every wager is returned" : "");
  redraw("actions", view.actions, () => byId("actions").replaceChildren(...settling(view.actions.map((b) => buttonNode(b, "big primary")))));
  redraw("corner", [view.reports, view.void, !!view.hold], () => {
    const report = el("button", "small report", "Report");
    report.type = "button";
    report.id = "report";
    report.addEventListener("click", openReport);
    byId("void-row").replaceChildren(...(view.reports && view.reports.length && !view.hold ? [report] : []),
      ...(view.void && !view.hold ? [buttonNode(view.void, "small")] : []));
  });
  redraw("table", [view.boxes, view.dealer, view.betting, state.box], () => renderTable(view));
  if (view.betting && state.box !== null) renderWager(view); else closeWager(false);
  document.body.dataset.state = view.state;
}

// -- placing wagers ----------------------------------------------------------------------------

function boxOf(view, position) { return view.boxes.find((b) => b.position === position); }

function openWager(position) {
  if (state.box !== position) { state.player = null; state.pending = 0; }
  state.box = position;
  byId("wager-panel").hidden = false;
  renderWager(state.view);
  for (const node of document.querySelectorAll("#boxes .box")) node.classList.toggle("selected", node.dataset.position === position);
}

function closeWager(clear) {
  byId("wager-panel").hidden = true;
  if (clear !== false) { state.box = null; state.pending = 0; }
  for (const node of document.querySelectorAll("#boxes .box.selected")) node.classList.remove("selected");
}

function playersAt(box) {
  // the seated player, every standing player already betting here, and one more standing place
  const seated = "box" + box.position + "-seated";
  const known = box.players.map((p) => p.player).filter((p) => p !== null && p !== undefined);
  let standing = known.filter((p) => /-standing-\d+$/.test(p)).map((p) => Number(/(\d+)$/.exec(p)[1]));
  const extra = state.standing[box.position] || 0;
  const next = Math.max(0, extra, ...standing) + 1;
  const list = [{ id: seated, seated: true, label: "Seated" }];
  for (let i = 1; i <= next; i++) list.push({ id: "box" + box.position + "-standing-" + i, seated: false, label: "Standing " + i });
  for (const p of known) if (!list.some((q) => q.id === p)) list.push({ id: p, seated: null, label: playerName(p) });
  return list;
}

// the sheet starts just under the row of the table's main button ("No more bets"), so it never
// covers it, whatever the screen's size (issue 36: at 800x480 it did)
function placeSheet() {
  const row = document.querySelector("#dealer .step-row");
  const top = row ? Math.ceil(row.getBoundingClientRect().bottom) + 4 : 0;
  byId("wager-panel").style.setProperty("--sheet-top", top + "px");
}

function renderWager(view) {
  const box = boxOf(view, state.box);
  if (!box) { closeWager(); return; }
  byId("wager-panel").hidden = false;
  placeSheet();
  byId("wager-boxes").replaceChildren(...view.boxes.map((b) => {
    const node = el("button", "choose" + (b.position === box.position ? " chosen" : ""), b.position);
    node.setAttribute("aria-label", b.label);
    node.type = "button";
    node.dataset.box = b.position;
    node.addEventListener("click", () => openWager(b.position));
    return node;
  }));
  byId("wager-box").textContent = boxTotal(box) ? box.label + ": " + money(boxTotal(box)) : "";
  const list = byId("wager-list");
  list.replaceChildren();
  for (const p of box.players) for (const w of p.wagers) {
    const li = wagerNode(w, true);
    li.prepend(el("span", "who", playerName(p.player, p.seated)));
    list.append(li);
  }
  const players = playersAt(box);
  if (!state.player || !players.some((p) => p.id === state.player)) state.player = players[0].id;
  byId("players").replaceChildren(...players.map((p) => {
    const b = el("button", "choose" + (p.id === state.player ? " chosen" : ""), p.label);
    b.type = "button";
    b.dataset.player = p.id;
    b.addEventListener("click", () => { state.player = p.id; renderWager(state.view); });
    return b;
  }));
  if (!state.bet || !view.bets.some((b) => b.bet === state.bet)) state.bet = view.bets.length ? view.bets[0].bet : null;
  byId("bets").replaceChildren(...view.bets.map((bet) => {
    const b = el("button", "choose" + (bet.bet === state.bet ? " chosen" : ""));
    b.type = "button";
    b.dataset.bet = bet.bet;
    b.append(el("span", "name", bet.words));
    if (bet.min !== null || bet.max !== null) b.append(el("span", "limits", money(bet.min ?? 0) + "\u2013" + money(bet.max ?? 0)));
    b.addEventListener("click", () => { state.bet = bet.bet; renderWager(state.view); });
    return b;
  }));
  byId("chips").replaceChildren(...view.chips.map((value) => {
    const b = el("button", "chip", money(value).replace(/\.00$/, ""));
    b.type = "button";
    b.dataset.chip = String(value);
    b.addEventListener("click", () => { state.pending += value; renderPending(state.view); });
    return b;
  }));
  renderPending(view);
}

function renderPending(view) {
  byId("pending").textContent = money(state.pending);
  byId("wager-place").disabled = !state.pending || !state.bet;
  const bet = view.bets.find((b) => b.bet === state.bet);
  let limit = "";
  if (bet && (bet.min !== null || bet.max !== null)) {
    limit = bet.words + " limits " + money(bet.min ?? 0) + " to " + money(bet.max ?? 0);
    if (state.pending && ((bet.min !== null && state.pending < bet.min) || (bet.max !== null && state.pending > bet.max))) limit += ": outside the limits";
  }
  if (bet && bet.requires) limit += (limit ? "; " : "") + "needs " + (view.bets.find((b) => b.bet === bet.requires) || { words: bet.requires }).words + " on the box";
  byId("wager-limit").textContent = limit;
}

let wagerCount = 0;

async function placeWager() {
  const view = state.view;
  if (!state.pending || !state.bet || state.box === null) return;
  const player = playersAt(boxOf(view, state.box)).find((p) => p.id === state.player);
  wagerCount += 1;
  const id = "r" + view.round + "-b" + state.box + "-" + state.bet + "-" + Date.now().toString(36) + wagerCount;
  const args = { wager_id: id, position: state.box, bet: state.bet, amount: state.pending };
  if (player) { args.player = player.id; if (player.seated !== null) args.seated = player.seated; }
  if (await command("wager.place", args)) {
    state.pending = 0;
    if (player && player.seated === false) {
      const n = Number(/(\d+)$/.exec(player.id)[1]);
      state.standing[state.box] = Math.max(state.standing[state.box] || 0, n);
    }
    renderPending(state.view);
  }
}

// A view the screen already shows is not drawn again, and one that changes only the device's
// line (its status, the cards left: several a second while a shuffler deals) redraws that line
// alone: redrawing replaces every button, and a tap landing on the one being replaced is lost,
// or lands on its replacement after the tap was taken for lost (issue 36's shift by taps).
let lastView = null;

function follow(url) {
  const source = new EventSource(url);
  source.onmessage = (message) => {
    const view = JSON.parse(message.data);
    const key = JSON.stringify(Object.assign({}, view, { device: null }));
    if (key === lastView && state.view) {
      state.view.device = view.device;
      renderDevice(state.view);
      return;
    }
    lastView = key;
    render(view);
    viewDrawn();
  };
  source.onerror = () => { lastView = null; show("problem", "Reconnecting to the screen's server\u2026"); };
}

// the digits and a backspace, typing into a PIN field: the supervisor's at the table, the
// dealer's at the kiosk's login (no keyboard in the shift)
function pinPad(container, input) {
  container.replaceChildren(...["1", "2", "3", "4", "5", "6", "7", "8", "9", "\u232b", "0"].map((key) => {
    const b = el("button", "key", key);
    b.type = "button";
    b.addEventListener("click", () => {
      input.value = key === "\u232b" ? input.value.slice(0, -1) : input.value + key;
    });
    return b;
  }));
}

function setUpDealer(dealer) {
  const initial = byId("initial-view");
  if (initial) { try { render(JSON.parse(initial.textContent)); } catch (error) { /* the stream brings it */ } }
  byId("wager-done").addEventListener("click", () => closeWager());
  byId("wager-clear").addEventListener("click", () => { state.pending = 0; renderPending(state.view); });
  byId("wager-place").addEventListener("click", placeWager);
  byId("supervisor-form").addEventListener("submit", supervisorLogin);
  keyboard(byId("name-keys"), byId("supervisor-name"));
  keyboard(byId("ask-keys"), byId("ask-input"));
  byId("supervisor-name").addEventListener("click", () => padFor("name"));
  byId("supervisor-pin").addEventListener("click", () => padFor("pin"));
  byId("supervisor-badge").addEventListener("click", supervisorBadge);
  byId("supervisor-cancel").addEventListener("click", () => { afterLogin = null; byId("supervisor-login").close(); });
  byId("supervisor-logout").addEventListener("click", async () => {
    await post(byId("dealer").dataset.supervisor + "/logout", {});
    if (state.view) { state.view.supervisor = null; renderSupervisor(state.view); }
  });
  pinPad(byId("pin-pad"), byId("supervisor-pin"));
  byId("ask-form").addEventListener("submit", askSubmit);
  byId("pick-form").addEventListener("submit", pickSubmit);
  byId("pick-cancel").addEventListener("click", () => { pickThen = null; byId("pick").close(); });
  byId("ask-cancel").addEventListener("click", () => { askThen = null; byId("ask").close(); });
  follow(dealer.dataset.live);
  // who is logged in as supervisor at this screen: the state carries it, the stream may not
  fetch("/dealer/state", { credentials: "same-origin" }).then((r) => r.ok ? r.json() : null).then((view) => {
    if (view && state.view && "supervisor" in view) { state.view.supervisor = view.supervisor; renderSupervisor(state.view); }
    state.badge = (view && view.badge) || null;
    state.supervisors = (view && Array.isArray(view.supervisors)) ? view.supervisors : null;
    byId("supervisor-badge").hidden = !state.badge;
  }).catch(() => {});
}

async function verifyExport() {
  const input = document.getElementById("export-file");
  const out = document.getElementById("verify-result");
  if (!input.files.length) { out.textContent = "Choose an export file first."; return; }
  out.textContent = "Checking\u2026";
  const body = await input.files[0].arrayBuffer();
  const reply = await fetch("/console/verify", { method: "POST", body, headers: { "content-type": "application/json", "x-csrf-token": csrfToken() } });
  const answer = await reply.json();
  out.textContent = answer.text;
  out.className = "result " + (answer.ok ? "good" : "bad");
}

document.addEventListener("DOMContentLoaded", () => {
  const dealer = document.getElementById("dealer");
  if (dealer) setUpDealer(dealer);
  const loginPad = document.getElementById("login-pad");
  if (loginPad) pinPad(loginPad, document.getElementById("login-pin"));
  const button = document.getElementById("verify-export");
  if (button) button.addEventListener("click", verifyExport);
});
