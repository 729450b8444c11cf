// The live page: set up a game, play it against the server's bots, show their moves one at a time, explain
// each round's scoring, give hints, keep the game across a reload (its id is kept in localStorage).
"use strict";

const STORAGE_KEY = "friday13-env-game";
const $ = (id) => document.getElementById(id);

const page = {
  options: null,
  id: null,
  table: null,
  frames: [],      // every frame received, as the person sees them
  shown: 0,        // frames received and queued or drawn
  drawn: 0,        // frames drawn so far: the history shows no further
  hinting: false,
  status: null,
  busy: false,
  queue: [],       // frames still to animate
  skip: false,
  waitingRoundEnd: null,
};

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  let data = {};
  if (response.status !== 204) {
    const text = await response.text();
    try { data = JSON.parse(text); } catch (error) { data = { error: text.slice(0, 200) || "no answer" }; }
  }
  if (!response.ok) {
    const error = new Error(data.error || "request failed (" + response.status + ")");
    error.status = response.status;
    throw error;
  }
  return data;
}

function say(text) { $("message").textContent = text || ""; }

function fillSelect(select, values, selected, label) {
  select.replaceChildren(...values.map((v) => el("option", { value: v, text: label ? label(v) : String(v), selected: String(v) === String(selected) })));
}

function setupForms() {
  const card = page.options.friday13;
  fillSelect($("players"), card.players, 4);
  fillSelect($("deck"), card.decks, "standard");
  fillSelect($("rounds"), card.rounds, 4);
  fillSelect($("level"), page.options.friday.levels, 1);
  const refreshSeats = () => {
    const players = Number($("players").value);
    fillSelect($("seat"), [...Array(players).keys()], 0, (s) => String(s + 1) + (s === 0 ? " (starts)" : ""));
    const deck = $("deck").value;
    const names = card.agents[deck];
    const fieldset = $("opponents");
    fieldset.replaceChildren(el("legend", { text: "Opponents (clockwise after you)" }));
    for (let i = 1; i < players; i++) {
      const select = el("select", { name: "opponent", "aria-label": "opponent " + i });
      fillSelect(select, names, card.default_opponent[deck]);
      fieldset.appendChild(el("label", { text: "Bot " + i + " " }, [select]));
    }
  };
  $("players").addEventListener("change", refreshSeats);
  $("deck").addEventListener("change", refreshSeats);
  refreshSeats();
  $("card-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const opponents = [...document.querySelectorAll("#opponents select")].map((s) => s.value);
    start({ game: "friday13", players: Number($("players").value), deck: $("deck").value,
            rounds: Number($("rounds").value), seat: Number($("seat").value), opponents });
  });
  $("solo-form").addEventListener("submit", (event) => {
    event.preventDefault();
    start({ game: "friday", level: Number($("level").value) });
  });
  const speed = localStorage.getItem("friday13-env-speed");
  if (speed !== null) $("speed").value = speed;
  $("speed").addEventListener("change", () => localStorage.setItem("friday13-env-speed", $("speed").value));
}

async function start(request) {
  try {
    const data = await api("POST", "/api/games", request);
    localStorage.setItem(STORAGE_KEY, data.id);
    enterGame(data, false);
  } catch (error) {
    say(error.message);
  }
}

function enterGame(data, resumed) {
  page.id = data.id || page.id;
  page.table = data.table;
  page.frames = [];
  page.shown = 0;
  page.drawn = 0;
  page.queue = [];
  page.skip = false;
  $("setup").hidden = true;
  $("game").hidden = false;
  $("hint-box").hidden = true;
  $("history").hidden = true;
  $("download").hidden = true;
  $("round-end").hidden = true;
  receive(data, resumed);
}

// New frames from the server: the first is drawn at once, the bots' moves one at a time.
function receive(data, instant) {
  page.status = data.status;
  const fresh = data.frames;
  page.frames.push(...fresh);
  if (instant || page.shown === 0) {
    if (instant) {
      page.shown = page.frames.length;
      draw(page.frames[page.frames.length - 1]);
      finishTurn();
      const pending = unseenRoundEnd();
      if (pending) showRoundEnd(pending).then(finishTurn);
      return;
    }
    page.shown = 1;
    draw(page.frames[0]);
  }
  page.queue.push(...page.frames.slice(page.shown));
  page.shown = page.frames.length;
  animate();
}

// A game resumed (a reload) where a round ended after the person's last move: its scoring was perhaps never seen.
function unseenRoundEnd() {
  for (let i = page.frames.length - 1; i >= 0; i--) {
    const frame = page.frames[i];
    if (frame.round_end) return frame.round_end;
    if (frame.move && frame.move.seat === page.table.you) return null;
  }
  return null;
}

function delay() { return page.skip ? 0 : Number($("speed").value); }

async function animate() {
  if (page.animating) return;
  page.animating = true;
  $("board").setAttribute("data-ready", "no");
  while (page.queue.length) {
    const frame = page.queue.shift();
    draw(frame, !page.queue.length);
    if (frame.round_end) await showRoundEnd(frame.round_end);
    else if (page.queue.length && delay() > 0) await new Promise((resolve) => setTimeout(resolve, delay()));
  }
  page.animating = false;
  page.skip = false;
  finishTurn();
}

function showRoundEnd(roundEnd) {
  renderRoundEnd($("round-end-body"), page.table, roundEnd);
  $("round-end").hidden = false;
  $("continue").focus();
  return new Promise((resolve) => { page.waitingRoundEnd = resolve; });
}

function closeRoundEnd() {
  if (!page.waitingRoundEnd) return;
  $("round-end").hidden = true;
  const resolve = page.waitingRoundEnd;
  page.waitingRoundEnd = null;
  resolve();
}

function draw(frame, interactive) {
  page.drawn = Math.max(page.drawn, page.frames.indexOf(frame) + 1);
  const live = interactive !== false && page.queue.length === 0 && page.status && page.status.your_turn;
  renderFrame($("board"), page.table, frame, live ? { onMove: play, onChoice: play } : { seat: page.table.you });
  $("board").setAttribute("data-frames", page.frames.length);
}

function finishTurn() {
  const status = page.status;
  const last = page.frames[page.frames.length - 1];
  draw(last, true);
  if (status.error) say(status.error);
  else if (status.over) say(gameOverText(last));
  else if (status.your_turn) say("Your move.");
  $("board").setAttribute("data-ready", status.your_turn || status.over ? "yes" : "no");
  $("hint").disabled = !status.your_turn;
  if (status.over) {
    const link = $("download");
    link.href = "/api/games/" + page.id + "/replay.html";
    link.setAttribute("download", "replay.html");
    link.hidden = false;
  }
  const first = document.querySelector("#board button.legal");
  if (first && !page.waitingRoundEnd) first.focus();
  if (!$("history").hidden) showHistory();
}

function gameOverText(frame) {
  if (page.table.game === "friday") return frame.won ? "You won with " + frame.score + " points!" : "You lost; score " + frame.score + ".";
  const best = Math.min(...frame.scores);
  const winners = frame.scores.map((s, i) => (s === best ? page.table.seats[i] : null)).filter((x) => x);
  const verb = winners.length > 1 ? " share the win" : winners[0] === "you" ? " win" : " wins";
  return "Game over. " + winners.join(" and ") + verb + " with " + best + " points.";
}

async function play(action) {
  if (page.busy || page.animating) return;
  page.busy = true;
  $("board").setAttribute("data-ready", "no");
  $("hint-box").hidden = true;
  document.querySelectorAll("#board button.move").forEach((b) => { b.disabled = true; });
  try {
    const data = await api("POST", "/api/games/" + page.id + "/moves", { action, since: page.frames.length });
    receive(data, false);
  } catch (error) {
    if (error.status === 404) { say(error.message); return leave(); }
    await resync(error.message);
  } finally {
    page.busy = false;
  }
}

// After a refused or failed move: the server's position again, with the reason kept on screen.
async function resync(reason) {
  try {
    enterGame(await api("GET", "/api/games/" + page.id + "?since=0"), true);
    say(reason);
  } catch (error) {
    say("The server cannot be reached (" + error.message + "); try your move again.");
    finishTurn();
  }
}

async function hint() {
  if (!page.status || !page.status.your_turn || page.busy || page.animating || page.hinting) return;
  const position = page.frames.length;
  page.hinting = true;
  say("Asking the adviser...");
  try {
    const data = await api("GET", "/api/games/" + page.id + "/hint");
    if (page.frames.length !== position || page.busy || page.animating) return;  // the game moved on meanwhile
    const box = $("hint-box");
    box.replaceChildren(el("p", { class: "hint-text", text: data.text }),
      el("ul", {}, data.options.slice(0, 5).map((o) => el("li", { text: o.label + ": " + (data.basis === "searches"
        ? Math.round(o.share * data.runs) + " of " + data.runs + " runs" : Math.round(o.share * 100) + "% probability") }))));
    box.setAttribute("data-action", data.action);
    box.hidden = false;
    say("Hint from " + data.agent + ".");
    const button = document.querySelector('#board button.legal[data-action="' + data.action + '"]');
    if (button) { button.classList.add("hinted"); button.focus(); }
  } catch (error) {
    say(error.message);
  } finally {
    page.hinting = false;
  }
}

// The history: the frames drawn so far, never one the board has not shown yet.
function showHistory() {
  const frames = page.frames.slice(0, page.drawn);
  new Viewer($("history"), page.table, frames, { seat: page.table.you, fixedSeat: true, start: frames.length - 1 });
}

async function leave() {
  const id = page.id;
  localStorage.removeItem(STORAGE_KEY);
  page.id = null;
  page.frames = [];
  page.queue = [];
  page.skip = false;
  $("hint-box").hidden = true;
  $("game").hidden = true;
  $("setup").hidden = false;
  if (id) { try { await api("DELETE", "/api/games/" + id); } catch (error) { /* already gone */ } }
  $("start-card").focus();
}

document.addEventListener("keydown", (event) => {
  if ($("game").hidden) return;
  if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
  if (page.waitingRoundEnd && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    closeRoundEnd();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (/^[1-9]$/.test(event.key)) {
    const button = document.querySelector('#board button.legal[data-key="' + event.key + '"]');
    if (button && !button.disabled) { event.preventDefault(); button.click(); }
  } else if (event.key === "h") {
    event.preventDefault();
    hint();
  }
});

async function main() {
  page.options = await api("GET", "/api/options");
  setupForms();
  $("hint").addEventListener("click", hint);
  $("skip").addEventListener("click", () => { if (page.animating) page.skip = true; });
  $("leave").addEventListener("click", leave);
  $("continue").addEventListener("click", closeRoundEnd);
  $("history-toggle").addEventListener("click", () => {
    const root = $("history");
    root.hidden = !root.hidden;
    if (!root.hidden) showHistory();
  });
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved) {
    page.id = saved;
    try {
      enterGame(await api("GET", "/api/games/" + saved + "?since=0"), true);
      return;
    } catch (error) {
      localStorage.removeItem(STORAGE_KEY);
      say("Your last game is no longer on the server (" + error.message + ").");
    }
  }
  $("start-card").focus();
}

main();
