// Cards drawn as SVG, and a small DOM helper. Shared by the live page and the replay viewer.
// Every text that comes from the server or a replay file is set with textContent, never parsed as HTML.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children || []) if (child) node.appendChild(child);
  return node;
}

function svg(tag, attrs, children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children || []) node.appendChild(child);
  return node;
}

const TYPE_STYLE = {
  cat: { fill: "#2b2b33", ink: "#f2d15c", name: "black cat" },
  mirror: { fill: "#dbe7f3", ink: "#3c6aa8", name: "broken mirror" },
  ladder: { fill: "#f3e2c4", ink: "#8a5a22", name: "ladder" },
  friday: { fill: "#7d1010", ink: "#ffffff", name: "Friday the 13th" },
};

function symbol(type, ink) {
  // A small picture of each omen, centred in a 60 x 84 card.
  if (type === "cat") {
    return svg("g", { fill: ink }, [
      svg("path", { d: "M18 48 L20 30 L27 38 L33 38 L40 30 L42 48 Q30 62 18 48 Z" }),
      svg("circle", { cx: 25, cy: 45, r: 1.8, fill: "#2b2b33" }),
      svg("circle", { cx: 35, cy: 45, r: 1.8, fill: "#2b2b33" }),
    ]);
  }
  if (type === "mirror") {
    return svg("g", { fill: "none", stroke: ink, "stroke-width": 2 }, [
      svg("ellipse", { cx: 30, cy: 44, rx: 11, ry: 15 }),
      svg("polyline", { points: "24,33 31,42 27,47 35,56" }),
    ]);
  }
  if (type === "ladder") {
    const rungs = [34, 41, 48, 55].map((y) => svg("line", { x1: 22, y1: y, x2: 38, y2: y }));
    return svg("g", { stroke: ink, "stroke-width": 2 }, [
      svg("line", { x1: 22, y1: 28, x2: 22, y2: 62 }),
      svg("line", { x1: 38, y1: 28, x2: 38, y2: 62 }),
      ...rungs,
    ]);
  }
  return svg("text", { x: 30, y: 53, "text-anchor": "middle", "font-size": 22, "font-weight": 700, fill: ink, text: "13" });
}

// One card of Friday the 13th: kind = {type, value, name}.
function cardSVG(kind, extraClass) {
  const style = TYPE_STYLE[kind.type];
  const label = kind.type === "friday" ? "Fri 13" : String(kind.value);
  return svg("svg", { viewBox: "0 0 60 84", class: "card " + kind.type + " " + (extraClass || ""), role: "img",
                      "aria-label": style.name + (kind.type === "friday" ? "" : " " + kind.value) }, [
    svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: style.fill, stroke: "#111", "stroke-width": 1.5 }),
    svg("text", { x: 6, y: 17, "font-size": 14, "font-weight": 700, fill: style.ink, text: label }),
    symbol(kind.type, style.ink),
    svg("text", { x: 54, y: 78, "text-anchor": "end", "font-size": 10, fill: style.ink, text: kind.type === "friday" ? "value 4" : "" }),
  ]);
}

// A face-down card (another player's hand, the solo Robinson stack).
function backSVG() {
  return svg("svg", { viewBox: "0 0 60 84", class: "card back", role: "img", "aria-label": "face-down card" }, [
    svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: "#3b4a7a", stroke: "#111", "stroke-width": 1.5 }),
    svg("rect", { x: 8, y: 8, width: 44, height: 68, rx: 4, fill: "none", stroke: "#8fa2e0", "stroke-width": 1.5 }),
  ]);
}

// One fighting card of Friday (solo): {name, value, ability, aging, hazard: {name, free, values} | null}.
function soloCardSVG(card, options) {
  const opts = options || {};
  const fill = card.aging ? "#5b3a56" : card.hazard ? "#e9f0da" : "#f6ecd2";
  const ink = card.aging ? "#ffffff" : "#2a2a2a";
  const shown = opts.points !== undefined ? opts.points : card.value;
  const children = [
    svg("rect", { x: 1, y: 1, width: 98, height: 138, rx: 8, fill, stroke: "#111", "stroke-width": 1.5 }),
    svg("text", { x: 8, y: 22, "font-size": 20, "font-weight": 700, fill: ink,
                  text: (shown > 0 ? "+" : "") + shown }),
    svg("text", { x: 50, y: 50, "text-anchor": "middle", "font-size": 11, fill: ink, text: card.name }),
    svg("text", { x: 50, y: 66, "text-anchor": "middle", "font-size": 10, fill: ink, text: card.ability || "" }),
  ];
  if (opts.hazardSide && card.hazard) {
    // The hazard side: its name, free cards and the value in the green, yellow and red step.
    children.push(svg("rect", { x: 6, y: 80, width: 88, height: 54, rx: 5, fill: "#7a2d1d" }));
    const size = Math.min(9, 150 / card.hazard.name.length);  // long names ("further exploring the island") fit too
    children.push(svg("text", { x: 50, y: 96, "text-anchor": "middle", "font-size": size, fill: "#fff", text: card.hazard.name }));
    children.push(svg("text", { x: 50, y: 112, "text-anchor": "middle", "font-size": 11, fill: "#fff",
                                text: "free " + card.hazard.free }));
    children.push(svg("text", { x: 50, y: 128, "text-anchor": "middle", "font-size": 11, fill: "#fff",
                                text: card.hazard.values.join(" / ") }));
  }
  return svg("svg", { viewBox: "0 0 100 140", class: "solo-card" + (opts.faceDown ? " face-down" : ""), role: "img",
                      "aria-label": card.name + " " + card.value + (card.ability ? " " + card.ability : "") }, children);
}
