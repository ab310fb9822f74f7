// ai2048 web page: plain JavaScript, no dependencies. Talks to the JSON API in ai2048/ui/server.py.
"use strict";

const $ = (id) => document.getElementById(id);
const KEYS = {
  ArrowUp: "up", ArrowRight: "right", ArrowDown: "down", ArrowLeft: "left",
  w: "up", d: "right", s: "down", a: "left",
  k: "up", l: "right", j: "down", h: "left",
};
let game = null;       // last state from the server
let agents = {};       // name -> {description, config}
let autoplay = false;
let busy = false;

// the message line: a notice in the text colour, or an error (kind "error") in red
function say(text, kind) {
  const m = $("message");
  m.textContent = text || "";
  m.classList.toggle("error", kind === "error");
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = { error: `server answered ${res.status}` }; }
  if (!res.ok) throw new Error(data.error || `server answered ${res.status}`);
  return data;
}

function parseValue(text) {
  const t = text.trim();
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === "true";
  if (/^(none|null)$/i.test(t)) return null;
  try { return JSON.parse(t); } catch (e) { return t; }
}

// "depth=2, p_two=0.9" -> {depth: 2, p_two: 0.9}
function parseConfig(text) {
  const out = {};
  for (const item of text.split(",")) {
    if (!item.trim()) continue;
    const eq = item.indexOf("=");
    if (eq <= 0) throw new Error(`settings: expected key=value, got "${item.trim()}"`);
    out[item.slice(0, eq).trim()] = parseValue(item.slice(eq + 1));
  }
  return out;
}

function agentChoice() {
  return { agent: $("agent").value, config: parseConfig($("config").value) };
}

function draw(state) {
  game = state;
  const board = $("board");
  board.innerHTML = "";
  state.board.flat().forEach((v) => {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.dataset.e = v ? String(Math.log2(v)) : "0";
    cell.textContent = v ? String(v) : "";
    board.appendChild(cell);
  });
  $("score").textContent = String(state.score);
  $("best").textContent = String(state.max_tile);
  $("moves").textContent = String(state.moves);
  $("undo").disabled = !state.can_undo;
  $("status").textContent = state.over ? `Game over: score ${state.score}, best tile ${state.max_tile}` : "";
  if (state.hint) drawHint(state.hint);
}

function drawHint(hint) {
  $("values-agent").textContent = hint.action ? `(${hint.agent} plays ${hint.action})` : `(${hint.agent})`;
  const body = $("values").querySelector("tbody");
  body.innerHTML = "";
  const rows = Object.entries(hint.values).sort((a, b) => (b[1] ?? -Infinity) - (a[1] ?? -Infinity));
  for (const [name, value] of rows) {
    const tr = document.createElement("tr");
    if (name === hint.action) tr.className = "chosen";
    const a = document.createElement("td");
    a.textContent = name;
    const b = document.createElement("td");
    b.textContent = value === null ? "-" : Number(value).toPrecision(6).replace(/\.?0+$/, "");
    tr.append(a, b);
    body.appendChild(tr);
  }
}

async function run(fn) {
  if (busy) return;
  busy = true;
  try { await fn(); } catch (e) { say(e.message, "error"); stopAutoplay(); } finally { busy = false; }
}

function newGame() {
  return run(async () => {
    stopAutoplay();
    const seed = $("seed").value.trim();
    const body = seed ? { seed } : {};
    draw(await api("/api/games", body));
    $("values").querySelector("tbody").innerHTML = "";
    $("values-agent").textContent = "";
    say(`new game, seed ${game.seed}`);
  });
}

function move(action) {
  return run(async () => {
    if (!game) return;
    if (!game.legal.includes(action)) {
      say(game.over ? "the game is over" : `${action} does not move any tile`, "error");
      return;
    }
    draw(await api(`/api/games/${game.id}/move`, { action }));
    say("");
  });
}

const undo = () => run(async () => { if (!game) return; draw(await api(`/api/games/${game.id}/undo`, {})); say(""); });
const hint = () => run(async () => { if (!game) return; draw(await api(`/api/games/${game.id}/hint`, agentChoice())); say(""); });
const aiMove = () => run(async () => { if (!game) return; draw(await api(`/api/games/${game.id}/ai`, { ...agentChoice(), steps: 1 })); say(""); });

function stopAutoplay() {
  autoplay = false;
  $("autoplay").classList.remove("on");
  $("autoplay").textContent = "Autoplay";
}

async function autoplayLoop() {
  while (autoplay && game && !game.over) {
    await run(async () => draw(await api(`/api/games/${game.id}/ai`, { ...agentChoice(), steps: 1 })));
    await new Promise((r) => setTimeout(r, Number($("delay").value)));
  }
  stopAutoplay();
}

function toggleAutoplay() {
  if (autoplay) { stopAutoplay(); return; }
  if (!game) return;
  autoplay = true;
  $("autoplay").classList.add("on");
  $("autoplay").textContent = "Stop";
  autoplayLoop();
}

// the agent's description, then each setting: its default, what it may be, and what it does
// (the same help lines as `ai2048 agents NAME`); a default of null reads as "none"
function showAgentHelp() {
  const a = agents[$("agent").value];
  const box = $("agent-help");
  box.textContent = "";
  if (!a) return;
  const head = document.createElement("div");
  head.textContent = a.description;
  box.appendChild(head);
  const keys = Object.keys(a.ranges);
  if (!keys.length) return;
  const list = document.createElement("dl");
  for (const k of keys) {
    const dt = document.createElement("dt");
    const v = a.config[k];
    dt.textContent = k in a.config ? `${k} = ${v === null ? "none" : JSON.stringify(v)}  (${a.ranges[k]})` : `${k}  (${a.ranges[k]})`;
    const dd = document.createElement("dd");
    dd.textContent = (a.help && a.help[k]) || "";
    list.append(dt, dd);
  }
  box.appendChild(list);
}

// agents by name, then trained models ("model:NAME", from the server's --models folder)
async function loadAgents() {
  const data = await api("/api/agents");
  const select = $("agent");
  const groups = {};
  for (const a of data.agents) {
    agents[a.name] = a;
    const label = a.model ? "trained models" : "agents";
    if (!groups[label]) {
      groups[label] = document.createElement("optgroup");
      groups[label].label = label;
      select.appendChild(groups[label]);
    }
    const opt = document.createElement("option");
    opt.value = a.name;
    opt.textContent = a.model ? a.name.slice("model:".length) : a.name;
    groups[label].appendChild(opt);
  }
  if (agents[data.default]) select.value = data.default;
  showAgentHelp();
}

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
  const action = KEYS[e.key];
  if (action) { e.preventDefault(); move(action); return; }
  if (e.key === "u") undo();
  else if (e.key === "i" || e.key === "?") hint();
  else if (e.key === " ") { e.preventDefault(); aiMove(); }
  else if (e.key === "n") newGame();
});

let touch = null;
$("board").addEventListener("touchstart", (e) => { const t = e.touches[0]; touch = [t.clientX, t.clientY]; }, { passive: true });
$("board").addEventListener("touchend", (e) => {
  if (!touch) return;
  const t = e.changedTouches[0];
  const dx = t.clientX - touch[0], dy = t.clientY - touch[1];
  touch = null;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < 24) return;
  move(Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? "right" : "left") : (dy > 0 ? "down" : "up"));
});

$("new").addEventListener("click", newGame);
$("undo").addEventListener("click", undo);
$("hint").addEventListener("click", hint);
$("ai").addEventListener("click", aiMove);
$("autoplay").addEventListener("click", toggleAutoplay);
$("agent").addEventListener("change", showAgentHelp);
$("delay").addEventListener("input", () => { $("delay-ms").textContent = $("delay").value; });

// the loading state (index.html: "Loading…", buttons off) ends with the first board; the time it
// took from opening the page is kept for the browser test (window.firstBoardMs)
function ready() {
  if (!game) return;
  document.body.classList.remove("loading");
  $("board").removeAttribute("aria-busy");
  for (const id of ["new", "hint", "ai", "autoplay"]) $(id).disabled = false;
  window.firstBoardMs = performance.now();
}

loadAgents().then(newGame).then(ready).catch((e) => say(`${e.message}; reload the page to try again`, "error"));
