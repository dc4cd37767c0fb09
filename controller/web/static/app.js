// tablectl web: the dealer screen's live updates and the export check. No inline script
// anywhere (Content-Security-Policy script-src 'self'); text goes in with textContent only,
// so nothing the table or the journal says can become markup.
"use strict";

const SUITS = { C: ["\u2663", "black"], D: ["\u2666", "red"], H: ["\u2665", "red"], S: ["\u2660", "black"] };

function cardNode(code) {
  const span = document.createElement("span");
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

function show(id, text) {
  const el = document.getElementById(id);
  el.textContent = text || "";
  el.hidden = !text;
}

function render(view) {
  document.getElementById("round").textContent = "Round " + (view.round ?? "-");
  document.getElementById("state").textContent = view.words;
  document.getElementById("next").textContent = view.next;
  const dev = view.device;
  document.getElementById("device").textContent = dev ? dev.name + ": " + (dev.online ? "online" : "OFFLINE") +
    (dev.faults && dev.faults.length ? ", FAULT (" + dev.faults.join(", ") + ")" : "") +
    (dev.cards_left !== null && dev.cards_left !== undefined ? ", " + dev.cards_left + " cards left" : "") : "";
  show("hold", view.hold ? "HOLD: " + view.hold.what + " \u2014 " + view.hold.verb + " (" + view.hold.role + ")" : "");
  show("problem", view.problem);
  const hands = document.getElementById("hands");
  hands.replaceChildren(...view.hands.map((h) => {
    const div = document.createElement("div");
    div.className = "hand";
    const pos = document.createElement("span");
    pos.className = "pos";
    pos.textContent = h.position === "dealer" ? "Dealer" : "Box " + h.position;
    div.append(pos, ...h.cards.map(cardNode));
    return div;
  }));
  const results = document.getElementById("results");
  results.replaceChildren(...view.results.map((r) => {
    const li = document.createElement("li");
    li.textContent = r.wager + ": " + r.outcome + " " + money(r.net) + " (" + r.rule + ")";
    return li;
  }));
  document.body.dataset.state = view.state;
}

function follow(url) {
  const source = new EventSource(url);
  source.onmessage = (message) => render(JSON.parse(message.data));
  source.onerror = () => show("problem", "Reconnecting to the screen's server\u2026");
}

async function verifyExport() {
  const input = document.getElementById("export-file");
  const out = document.getElementById("verify-result");
  if (!input.files.length) { out.textContent = "Choose an export file first."; return; }
  out.textContent = "Checking\u2026";
  const body = await input.files[0].arrayBuffer();
  const reply = await fetch("/console/verify", { method: "POST", body, headers: { "content-type": "application/json" } });
  const answer = await reply.json();
  out.textContent = answer.text;
  out.className = "result " + (answer.ok ? "good" : "bad");
}

document.addEventListener("DOMContentLoaded", () => {
  const dealer = document.getElementById("dealer");
  if (dealer) follow(dealer.dataset.live);
  const button = document.getElementById("verify-export");
  if (button) button.addEventListener("click", verifyExport);
});
