// Drawing a frame of either game, and the Viewer that steps through frames (the replay file and the live
// page's history use the same one). Frames come from friday13_env/web/views.py.
"use strict";

// As views.seat_names: a label that several seats share gets its seat number; should a name so made equal
// another, every seat gets its number (the names are then unique).
function seatNames(seats) {
  const numbered = (label, s) => label + " (seat " + (s + 1) + ")";
  const names = seats.map((label, s) => (seats.filter((other) => other === label).length > 1 ? numbered(label, s) : label));
  return new Set(names).size < names.length ? seats.map(numbered) : names;
}

// Who played a solo game, as its texts name them: "You" for the person's own game (label "you", as the live
// page's and its replays'), else the record's player label (an agent's name in a benchmark's replays).
function soloPlayer(table) {
  return table.player === undefined || table.player === "you" ? "You" : table.player;
}

function expandHand(counts) {
  const cards = [];
  counts.forEach((count, kind) => { for (let i = 0; i < count; i++) cards.push(kind); });
  return cards;
}

function typeCounts(stack) {
  return ["cat", "mirror", "ladder", "friday"].map((type, i) =>
    el("span", { class: "count " + type, title: TYPE_STYLE[type].name, text: TYPE_STYLE[type].name + " " + stack[i] }));
}

// The card game. options: {seat: the seat whose hand is shown (null: every hand), onMove: function(action) for
// the person's legal moves (absent in a replay)}.
function renderCardFrame(container, table, frame, options) {
  const opts = options || {};
  const seat = opts.seat === undefined ? table.you : opts.seat;
  container.replaceChildren();
  const header = el("div", { class: "status" }, [
    el("strong", { text: "Round " + (frame.round + 1) + " of " + table.rounds }),
    el("span", { text: frame.game_over ? " Game over." :
      frame.current === null ? " Round over." : " " + seatNames(table.seats)[frame.current] + " to play." }),
  ]);
  container.appendChild(header);

  const seats = el("div", { class: "seats" });
  const names = seatNames(table.seats);
  table.seats.forEach((seatLabel, s) => {
    const label = names[s];
    const classes = ["seat"];
    if (s === frame.current) classes.push("to-move");
    if (s === table.you) classes.push("you");
    const hand = frame.hands[s];
    const showHand = hand && (seat === null || s !== seat);
    seats.appendChild(el("section", { class: classes.join(" "), "data-seat": s, "aria-label": "seat " + label }, [
      el("h3", { text: label + (s === frame.start ? " (starts)" : "") }),
      el("div", { class: "score", text: "Points: " + frame.scores[s] }),
      el("div", { class: "captured", "data-captured": frame.captured[s].join(",") }, [
        el("span", { text: "Taken: " }), ...typeCounts(frame.captured[s])]),
      el("div", { class: "hand-size", text: frame.hand_sizes[s] + (frame.hand_sizes[s] === 1 ? " card" : " cards") + " in hand" }),
      showHand ? el("div", { class: "mini-hand" }, expandHand(hand).map((k) => cardSVG(table.kinds[k], "small"))) : null,
    ]));
  });
  if (seat === null && frame.dummy) {
    seats.appendChild(el("section", { class: "seat dummy", "aria-label": "dummy hand" }, [
      el("h3", { text: "Dummy hand (never played)" }),
      el("div", { class: "mini-hand" }, expandHand(frame.dummy).map((k) => cardSVG(table.kinds[k], "small"))),
    ]));
  }
  container.appendChild(seats);

  const piles = el("div", { class: "piles" });
  frame.piles.forEach((pile, p) => {
    const moved = frame.move && frame.move.pile === p;
    piles.appendChild(el("section", { class: "pile" + (moved ? " moved" : ""), "data-pile": p,
                                      "aria-label": table.piles[p] + " pile" }, [
      el("h3", { text: table.piles[p] }),
      el("div", { class: "total", "data-total": frame.totals[p], text: "Total " + frame.totals[p] + " / 13" }),
      el("div", { class: "pile-cards" }, pile.map((k) => cardSVG(table.kinds[k], "small"))),
    ]));
  });
  container.appendChild(piles);

  container.appendChild(el("p", { class: "last-move", "aria-live": "polite",
                                  text: frame.move ? frame.move.text : "Cards dealt." }));

  if (seat !== null && frame.hands[seat]) {
    const legal = new Set(frame.legal);
    const hand = el("div", { class: "hand", "aria-label": "your hand" });
    const counts = frame.hands[seat];
    let shortcut = 0;
    counts.forEach((count, kind) => {
      if (!count) return;
      const kindInfo = table.kinds[kind];
      const actions = table.actions.map((a, i) => i).filter((i) => table.actions[i].kind === kind);
      const buttons = actions.map((action) => {
        const playable = Boolean(opts.onMove) && legal.has(action);
        if (playable) shortcut += 1;
        const name = table.actions[action].name;
        const label = kindInfo.type === "friday" ? "on " + table.piles[table.actions[action].pile] : "play";
        return el("button", {
          class: "move" + (playable ? " legal" : ""), "data-action": action, disabled: !playable,
          "aria-label": "play " + name + (playable && shortcut <= 9 ? " (key " + shortcut + ")" : ""),
          "data-key": playable && shortcut <= 9 ? shortcut : null,
          onclick: playable ? () => opts.onMove(action) : null,
        }, [el("span", { text: label + (playable && shortcut <= 9 ? " (" + shortcut + ")" : "") })]);
      });
      hand.appendChild(el("div", { class: "hand-card" + (opts.onMove && legal.has(actions[0]) ? " playable" : ""),
                                   "data-kind": kind, "data-count": count }, [
        cardSVG(kindInfo),
        el("div", { class: "copies", text: count > 1 ? "x " + count : "" }),
        el("div", { class: "card-buttons" }, opts.onMove ? buttons : []),
      ]));
    });
    container.appendChild(el("h3", { text: seat === table.you ? "Your hand" : seatNames(table.seats)[seat] + "'s hand" }));
    container.appendChild(hand);
  }
}

// The scoring of a finished round, explained.
function renderRoundEnd(container, table, roundEnd) {
  container.replaceChildren();
  container.appendChild(el("h2", { text: "Round " + (roundEnd.round + 1) + " scored" }));
  container.appendChild(el("ul", { class: "majorities" }, roundEnd.types.map((t) => el("li", { text: t.text }))));
  const head = el("tr", {}, [el("th", { text: "player" }), ...table.piles.map((p) => el("th", { class: "type-col", text: p })),
    el("th", { text: "Fri 13" }), el("th", { text: "points" }), el("th", { text: "total" })]);
  const rows = roundEnd.rows.map((row) => el("tr", { "data-seat": row.seat }, [
    el("td", { text: seatNames(table.seats)[row.seat] }),
    ...roundEnd.types.map((t) => el("td", { class: "type-col" + (t.discarder === row.seat ? " discarded" : ""),
                                           text: String(t.counts[row.seat]) + (t.discarder === row.seat ? " (discarded)" : "") })),
    el("td", { text: String(row.fridays) + " x 2" }),
    el("td", { class: "round-points", text: String(row.points) }),
    el("td", { class: "round-total", text: String(row.total) }),
  ]));
  container.appendChild(el("table", { class: "round-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)]));
  container.appendChild(el("ul", { class: "point-lines" }, roundEnd.rows.map((row) => el("li", { text: row.text }))));
  container.appendChild(el("p", { class: "rule", text: "Omen cards count 1 point each, Friday the 13th cards 2; " +
    "whoever alone holds the most of an omen type discards those cards. Fewest points wins." }));
}

// The solo game. options: {onChoice: function(action)} on the live page.
function renderSoloFrame(container, table, frame, options) {
  const opts = options || {};
  container.replaceChildren();
  const life = el("div", { class: "life-bar", role: "img", "aria-label": "life " + frame.life + ", reserve " + frame.reserve });
  for (let i = 0; i < frame.max_life; i++) {
    life.appendChild(el("span", { class: i < frame.life ? "life" : i < frame.life + frame.reserve ? "reserve" : "lost" }));
  }
  container.appendChild(el("div", { class: "status" }, [
    el("strong", { text: "Level " + frame.level + " | step " + frame.step }),
    el("span", { class: "life-text", "data-life": frame.life, text: " Life " + frame.life + " (reserve " + frame.reserve + ")" }),
    frame.done ? el("strong", { class: "result", "data-score": frame.score,
                                text: frame.won ? " " + soloPlayer(table) + " won! Score " + frame.score : " Game over. Score " + frame.score }) : null,
  ]));
  container.appendChild(life);
  const piles = frame.piles;
  container.appendChild(el("div", { class: "solo-piles" }, [
    ["robinson", "Robinson stack"], ["discard", "discard"], ["aging", "aging stack"], ["hazards", "hazard stack"],
    ["hazard_discard", "hazard discard"], ["destroyed", "destroyed"],
  ].map(([key, name]) => el("span", { class: "solo-pile", "data-pile": key, text: name + ": " + piles[key] }))));
  container.appendChild(el("div", { class: "pirates" }, frame.pirates.map((p, i) =>
    el("div", { class: "pirate" + (p.beaten ? " beaten" : ""), text: "Pirate " + "AB"[i] + ": " + p.label + (p.beaten ? " (beaten)" : "") }))));
  if (frame.hazards.length) {
    container.appendChild(el("h3", { text: "Hazards on offer" }));
    container.appendChild(el("div", { class: "solo-row hazards" }, frame.hazards.map((c) => soloCardSVG(c, { hazardSide: true }))));
  }
  const fight = frame.fight;
  if (fight) {
    const winning = fight.points >= fight.target;
    container.appendChild(el("div", { class: "fight" }, [
      el("h3", { text: "Fight: " + fight.against }),
      fight.hazard ? el("div", { class: "solo-row fought" }, [soloCardSVG(fight.hazard, { hazardSide: true })]) : null,
      el("div", { class: "fight-score " + (winning ? "winning" : "losing"), "data-points": fight.points,
                  "data-target": fight.target, text: "Points " + fight.points + " against " + fight.target +
                  " | free cards " + fight.free_used + " / " + fight.free_total +
                  (fight.step_downs ? " | step -" + fight.step_downs : "") }),
      el("div", { class: "solo-row table-cards" }, fight.slots.map((slot) => {
        const flags = ["paid", "used", "face_down", "doubled"].filter((f) => slot[f]).map((f) => f.replace("_", " "));
        return el("figure", { class: "slot" }, [soloCardSVG(slot, { points: slot.points }),
                                                  el("figcaption", { text: flags.join(", ") })]);
      })),
    ]));
  }
  if (frame.pending) container.appendChild(el("p", { class: "pending", text: "Resolving: " + frame.pending }));
  if (frame.looked.length || frame.placed.length) {
    container.appendChild(el("h3", { text: "Sorting: looked at, then placed on top" }));
    container.appendChild(el("div", { class: "solo-row" }, [...frame.looked, ...frame.placed].map((c) => soloCardSVG(c))));
  }
  container.appendChild(el("p", { class: "last-move", "aria-live": "polite", text: frame.move ? soloPlayer(table) + ": " + frame.move.text : "" }));
  container.appendChild(el("p", { class: "phase", text: frame.phase_text }));
  if (opts.onChoice && !frame.done) {
    container.appendChild(el("div", { class: "choices", "aria-label": "your choices" }, frame.choices.map((c, i) =>
      el("button", { class: "move legal", "data-action": c.action, "data-key": i < 9 ? i + 1 : null,
                     onclick: () => opts.onChoice(c.action), text: (i < 9 ? i + 1 + ". " : "") + c.label }))));
  }
}

function renderFrame(container, table, frame, options) {
  if (table.game === "friday") renderSoloFrame(container, table, frame, options);
  else renderCardFrame(container, table, frame, options);
}

// Steps through frames: first / back / forward / last, a slider, and (card game) whose view to show.
class Viewer {
  constructor(root, table, frames, options) {
    this.root = root;
    this.table = table;
    this.frames = frames;
    this.index = 0;
    this.seat = (options && options.seat !== undefined) ? options.seat : null;
    this.fixedSeat = options && options.fixedSeat;
    this.build();
    this.show(options && options.start !== undefined ? options.start : 0);
  }

  build() {
    this.root.replaceChildren();
    const button = (name, label, delta) => el("button", { class: "step " + name, "aria-label": label, text: label,
                                                         onclick: () => this.show(delta(this.index)) });
    this.slider = el("input", { type: "range", min: 0, max: Math.max(0, this.frames.length - 1), value: 0,
                                "aria-label": "move", oninput: (e) => this.show(Number(e.target.value)) });
    this.position = el("span", { class: "position" });
    const controls = el("div", { class: "viewer-controls" }, [
      button("first", "First", () => 0), button("back", "Back", (i) => i - 1),
      button("forward", "Forward", (i) => i + 1), button("last", "Last", () => this.frames.length - 1),
      this.slider, this.position,
    ]);
    if (this.table.game === "friday13" && !this.fixedSeat) {
      const select = el("select", { "aria-label": "whose view", class: "view-seat",
                                    onchange: (e) => { this.seat = e.target.value === "all" ? null : Number(e.target.value); this.show(this.index); } },
        [el("option", { value: "all", text: "full table" }),
         ...seatNames(this.table.seats).map((label, s) => el("option", { value: s, text: label + "'s view" }))]);
      controls.appendChild(select);
    }
    this.board = el("div", { class: "viewer-board" });
    this.scoring = el("div", { class: "viewer-scoring" });
    this.root.append(controls, this.board, this.scoring);
    // One handler per element, replaced with the viewer: a new viewer on the same element adds none.
    this.root.onkeydown = (event) => {
      if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
      if (event.key === "ArrowRight") { this.show(this.index + 1); event.preventDefault(); }
      if (event.key === "ArrowLeft") { this.show(this.index - 1); event.preventDefault(); }
      if (event.key === "Home") { this.show(0); event.preventDefault(); }
      if (event.key === "End") { this.show(this.frames.length - 1); event.preventDefault(); }
    };
  }

  show(index) {
    if (!this.frames.length) return;
    this.index = Math.max(0, Math.min(this.frames.length - 1, index));
    const frame = this.frames[this.index];
    const view = this.table.game === "friday13" && this.seat !== null ? hideOthers(frame, this.seat) : frame;
    renderFrame(this.board, this.table, view, { seat: this.seat });
    if (frame.round_end) renderRoundEnd(this.scoring, this.table, frame.round_end);
    else this.scoring.replaceChildren();
    this.slider.value = this.index;
    this.position.textContent = "move " + this.index + " of " + (this.frames.length - 1);
    this.root.setAttribute("data-index", this.index);
  }
}

// One seat's view of a full frame: the other hands hidden (sizes stay).
function hideOthers(frame, seat) {
  return Object.assign({}, frame, { hands: frame.hands.map((hand, s) => (s === seat ? hand : null)), dummy: null });
}
