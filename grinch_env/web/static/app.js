// The page: forms start a game through the JSON API, then every view the server returns is drawn here.
"use strict";

const $ = (id) => document.getElementById(id);
let catalogue = {};
let current = null;       // the latest view from the server (with its id)
let liveTimer = null;

async function api(method, url, data) {
  const init = { method, headers: {} };
  if (data !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(data); }
  const res = await fetch(url, init);
  let body;
  try { body = await res.json(); } catch (e) { body = { error: `the server answered ${res.status} ${res.statusText}` }; }
  if (!res.ok || body.error) throw new Error(body.error || `the server answered ${res.status}`);
  return body;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.classList.toggle("hidden", !message);
}

async function run(action) {
  try {
    showError("");
    await action();
  } catch (e) {
    stopLive();
    showError(e.message);
  }
}

// ---------------------------------------------------------------- forms
function setTab(tab) {
  document.querySelectorAll(".tab").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
  document.querySelectorAll(".panel").forEach((p) => p.classList.toggle("hidden", p.dataset.tab !== tab));
}

function fillGames() {
  for (const select of document.querySelectorAll(".game-select")) {
    select.innerHTML = "";
    for (const [name, g] of Object.entries(catalogue.games)) select.add(new Option(g.title, name));
    select.value = catalogue.default;
    select.addEventListener("change", () => gameChanged(select));
    gameChanged(select);
  }
}

function gameChanged(select) {
  const g = catalogue.games[select.value];
  const form = select.closest("form");
  const players = form.querySelector("input[id$=players]");
  if (players) {
    players.min = g.min_players; players.max = g.max_players;
    if (+players.value < g.min_players || +players.value > g.max_players) players.value = g.min_players;
  }
  const options = form.querySelector(".options");
  if (options) options.placeholder = select.value === "grinch" ? "num_rounds=2, bonus_layout=none" : "max_turns_per_player=10";
  const input = form.querySelector("input[list]");
  if (!input) return;
  const list = $(input.getAttribute("list"));
  list.innerHTML = "";
  for (const a of g.agents) list.appendChild(new Option(a));
  if (g.champion) list.appendChild(new Option("champion"));  // the game's shipped learned agent (make_agent("champion"))
  for (const c of catalogue.checkpoints) if (c.game === select.value) list.appendChild(new Option(c.path));
}

// The game logs under the server's --log-dir (a tournament's, listed by its index.json): choosing one fills in its path.
function fillLogs() {
  const select = $("replay-list");
  for (const log of catalogue.logs || []) select.appendChild(new Option(log.label, log.path));
  $("replay-list-label").classList.toggle("hidden", !(catalogue.logs || []).length);
}

function value(id) { return $(id).value.trim(); }

async function startPlay(e) {
  e.preventDefault();
  await run(async () => show(await api("POST", "/api/play", {
    game: value("play-game"), players: value("play-players"), seat: value("play-seat"),
    opponents: value("play-opponents"), options: value("play-options"), seed: value("play-seed") || null,
  })));
}

async function startWatch(e) {
  e.preventDefault();
  await run(async () => show(await api("POST", "/api/watch", {
    game: value("watch-game"), players: value("watch-players"), agents: value("watch-agents"),
    options: value("watch-options"), seed: value("watch-seed") || null,
  })));
}

async function startReplay(e) {
  e.preventDefault();
  await run(async () => {
    const file = $("replay-file").files[0];
    const data = { game: value("replay-game") };
    if (file) data.log = await file.text();
    else data.path = value("replay-path");
    show(await api("POST", "/api/replay", data));
  });
}

// ---------------------------------------------------------------- moving on
function seatParam() { return current && current.mode !== "play" && value("view-seat") !== "" ? value("view-seat") : null; }

async function step(action) {
  show(await api("POST", `/api/s/${current.id}/step`, { action, seat: seatParam() }));
}

async function seek(position) {
  show(await api("POST", `/api/s/${current.id}/seek`, { position, seat: seatParam() }));
}

function stopLive() {
  if (liveTimer) clearTimeout(liveTimer);
  liveTimer = null;
  $("live").classList.remove("on");
}

function toggleLive() {
  if (liveTimer) { stopLive(); return; }
  $("live").classList.add("on");
  const tick = async () => {
    if (!current || atEnd(current)) { stopLive(); return; }
    await run(() => step(null));
    if (liveTimer) liveTimer = setTimeout(tick, +value("speed"));
  };
  liveTimer = setTimeout(tick, 0);
}

function atEnd(v) { return v.done || (v.mode === "replay" && v.moves >= v.length); }

// ---------------------------------------------------------------- drawing a view
function show(v) {
  const fresh = !current || current.id !== v.id;
  current = v;
  $("welcome").classList.add("hidden");
  $("game").classList.remove("hidden");
  $("game-title").textContent = `${v.title} \u2014 ${v.mode === "play" ? "you play seat " + v.human : v.mode === "watch" ? "watching agents" : "replaying a log"}`;
  $("round").textContent = `round ${v.round} of ${v.num_rounds} \u00b7 ${v.moves} moves`;
  const banner = $("banner");
  banner.textContent = v.banner + (v.mode !== "play" && !atEnd(v) ? " \u2014 press Step, or Live to let it run" : "");
  banner.className = "banner" + (v.done ? " over" : v.legal.length ? " yours" : "");
  document.body.dataset.done = v.done ? "1" : "0";
  document.body.dataset.moves = String(v.moves);
  document.body.dataset.session = v.id;
  document.body.dataset.views = String(+(document.body.dataset.views || 0) + 1);  // lets a test wait for the next view

  // The human's moves: one button per legal action, nothing else is clickable.
  $("moves-box").classList.toggle("hidden", v.mode !== "play" || v.done);
  const moves = $("moves");
  moves.innerHTML = "";
  for (const m of v.legal) {
    const b = document.createElement("button");
    b.className = "move"; b.textContent = m.label; b.dataset.action = m.action;
    b.addEventListener("click", () => {
      // One click per turn: the agents may think a while before the next view comes back.
      moves.querySelectorAll("button").forEach((other) => { other.disabled = true; });
      $("banner").textContent = "The agents are playing\u2026";
      $("banner").className = "banner";
      run(() => step(m.action)).then(() => { if (moves.contains(b)) show(current); });  // refused: the same view again, with the error above
    });
    moves.appendChild(b);
  }

  // Step / live controls for watching and replaying.
  $("controls").classList.toggle("hidden", v.mode === "play");
  const replay = v.mode === "replay";
  for (const id of ["first", "back", "last"]) $(id).classList.toggle("hidden", !replay);
  $("back").disabled = $("first").disabled = !replay || v.moves === 0;
  $("step").disabled = $("live").disabled = $("last").disabled = atEnd(v);
  const pos = $("position");
  pos.classList.toggle("hidden", !replay);
  if (replay) { pos.max = v.length; pos.value = v.moves; }
  if (fresh) {
    stopLive();
    const view = $("view-seat");
    view.innerHTML = "";
    view.add(new Option("spectator (everything)", ""));
    for (let s = 0; s < v.num_players; s++) view.add(new Option(`seat ${s} (${v.names[s]})`, String(s)));
    $("download").href = `/api/s/${v.id}/log`;
  }
  $("view-label").classList.toggle("hidden", v.mode === "play");

  // The hand (only the viewer's own; a spectator's view shows every hand in the table below).
  const hand = $("hand");
  hand.innerHTML = "";
  $("hand-box").classList.toggle("hidden", !v.hand.length);
  $("hand-box").querySelector("h3").textContent = v.mode === "play" ? "Your hand" : `Seat ${v.viewer}'s hand`;
  for (const c of v.hand) {
    const chip = document.createElement("span");
    chip.className = `chip suit-${c[0]}`; chip.textContent = c;
    hand.appendChild(chip);
  }

  $("table-title").textContent = `Table \u2014 ${v.table_note}`;
  const img = $("table-img");
  img.classList.toggle("hidden", !v.image);
  $("table-text").classList.toggle("hidden", v.image);
  $("legend").classList.toggle("hidden", v.image);
  $("legend").textContent = v.legend;
  if (v.image) {
    const seat = v.viewer === null ? "" : `&seat=${v.viewer}`;
    img.src = `/api/s/${v.id}/table.png?v=${v.moves}${seat}`;
  }
  $("table-text").textContent = v.text;  // also behind the picture, for screen readers and tests
  img.alt = v.text;
  $("download").classList.toggle("hidden", v.mode === "play" && !v.done);  // a played game's log (and seed) once it is over

  drawScores(v);
  const history = $("history");
  history.innerHTML = "";
  history.start = v.history_start;
  v.history.forEach((line, i) => {
    const li = document.createElement("li");
    li.textContent = line;
    if (v.history_start + i >= v.fresh) li.classList.add("fresh");  // what the last click brought
    if (line.startsWith("round ")) li.classList.add("round-end");
    else if (line.startsWith("you drew")) li.classList.add("private");
    history.appendChild(li);
  });
  history.scrollTop = history.scrollHeight;
}

function drawScores(v) {
  const table = $("scores");
  table.innerHTML = "";
  const head = table.insertRow();
  for (const h of ["", "player", "role", "total"]) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  for (let s = 0; s < v.num_players; s++) {
    const row = table.insertRow();
    if (s === v.to_act) row.classList.add("acting");
    if (s === v.human) row.classList.add("me");
    if (v.done && v.winners.includes(s)) row.classList.add("winner");
    row.insertCell().textContent = s === v.to_act ? "\u25b6" : v.done && v.winners.includes(s) ? "\u2605" : "";
    row.insertCell().textContent = `seat ${s} \u00b7 ${v.names[s]}`;
    row.insertCell().textContent = v.roles[s];
    const total = row.insertCell();
    total.className = "num"; total.textContent = v.totals[s];
  }
  $("rule").textContent = `${v.highest_total_wins ? "Highest" : "Lowest"} total after ${v.num_rounds} round${v.num_rounds > 1 ? "s" : ""} wins.`;
}

// ---------------------------------------------------------------- wiring
async function init() {
  document.querySelectorAll(".tab").forEach((b) => b.addEventListener("click", () => setTab(b.dataset.tab)));
  $("form-play").addEventListener("submit", startPlay);
  $("form-watch").addEventListener("submit", startWatch);
  $("form-replay").addEventListener("submit", startReplay);
  $("step").addEventListener("click", () => run(() => step(null)));
  $("live").addEventListener("click", toggleLive);
  $("back").addEventListener("click", () => run(() => seek(current.moves - 1)));
  $("first").addEventListener("click", () => run(() => seek(0)));
  $("last").addEventListener("click", () => run(() => seek(current.length)));
  $("position").addEventListener("change", () => run(() => seek(+$("position").value)));
  $("view-seat").addEventListener("change", () => run(async () => show(await api("GET", `/api/s/${current.id}${seatParam() === null ? "" : "?seat=" + seatParam()}`))));
  $("replay-list").addEventListener("change", () => { $("replay-path").value = $("replay-list").value; $("replay-file").value = ""; });
  await run(async () => { catalogue = await api("GET", "/api/games"); fillGames(); fillLogs(); });
  document.body.dataset.ready = "1";
}

init();
