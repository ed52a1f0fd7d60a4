// The pipeline drawn as SVG, left to right: source topics, each stage's
// steps in a dashed box (a stage is what one task runs), the repartition
// topic between stages, the sink; tables a step joins above it; the
// dead-letter and late topics below.

import { el, text, compact } from "./chart.js";

const STEP_MIN_W = 170, STEP_MAX_W = 300, STEP_H = 66, TOPIC_H = 34, GAP = 56, PAD = 14;

// textWidth estimates the width of s in the graph's fonts (the SVG may not
// be laid out yet when the graph is first drawn).
function textWidth(s, mono) {
  return s.length * (mono ? 6.7 : 7.0);
}

function clip(s, width, mono) {
  const max = Math.floor(width / (mono ? 6.7 : 7.0));
  return s.length <= max ? s : s.slice(0, Math.max(1, max - 1)) + "…";
}

function topicWidth(name) {
  return Math.min(260, Math.max(120, textWidth(name, true) + 28));
}

function arrow(svg, x1, y1, x2, y2, side) {
  const mx = (x1 + x2) / 2;
  const d = Math.abs(y1 - y2) < 1
    ? `M${x1},${y1} L${x2 - 6},${y2}`
    : side
      ? `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2 - 6}`
      : `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 6},${y2}`;
  el("path", { d, class: side ? "edge side" : "edge" }, svg);
  if (side) el("path", { d: `M${x2 - 4},${y2 - 7} L${x2},${y2} L${x2 + 4},${y2 - 7} Z`, class: "arrow" }, svg);
  else el("path", { d: `M${x2 - 7},${y2 - 4} L${x2},${y2} L${x2 - 7},${y2 + 4} Z`, class: "arrow" }, svg);
}

// topicBox draws a topic with its caption above it, or below for the side
// outputs (their edges come in from above).
function topicBox(svg, x, y, name, role, caption, extra) {
  const w = topicWidth(name);
  const g = el("g", { class: "topic" + (extra && extra.cls ? " " + extra.cls : ""), "data-testid": "graph-topic", "data-role": role, "data-topic": name }, svg);
  el("rect", { x, y, width: w, height: TOPIC_H, rx: TOPIC_H / 2 }, g);
  if (extra && extra.below) text(g, x + w / 2, y + TOPIC_H + 14, caption, { class: "sub", "text-anchor": "middle" });
  else text(g, x + 14, y - 5, caption, { class: "sub" });
  text(g, x + w / 2, y + TOPIC_H / 2 + 4, clip(name, w - 24, true), { class: "mono", "text-anchor": "middle" });
  const title = el("title", {}, g);
  title.textContent = `${caption}: ${name}`;
  return { x, y, w, h: TOPIC_H, g };
}

function stepDetail(s) {
  const parts = [s.kind];
  if (s.window) parts.push(s.window);
  if (s.join) parts.push(s.join);
  if (s.state) parts.push("state");
  return parts.join(" · ");
}

function badges(s, st) {
  const out = [];
  if (st && s.kind !== "key_by") out.push(["v" + st.version, "live"]);
  if (st && st.staged) out.push(["v" + st.staged + " next", "staged"]);
  if (st && st.shadow) out.push(["v" + st.shadow + " shadow", "shadow"]);
  return out.map(([label, cls]) => ({ label, cls, w: textWidth(label) * 0.85 + 10 }));
}

function stepFunction(s) {
  return s.function || (s.field ? "field " + s.field : "");
}

// stepWidth fits a step's box to its texts, within bounds.
function stepWidth(s, st) {
  const b = badges(s, st).reduce((w, x) => w + x.w + 4, 0);
  const need = Math.max(textWidth(s.name) * 1.05 + b + 24, textWidth(stepDetail(s)) * 0.93 + 22, textWidth(stepFunction(s), true) + 22);
  return Math.min(STEP_MAX_W, Math.max(STEP_MIN_W, Math.ceil(need)));
}

function stepBox(svg, x, y, s, st) {
  const W = stepWidth(s, st);
  const g = el("g", { class: "step", "data-testid": "graph-step", "data-step": s.name, "data-kind": s.kind, "data-version": st ? st.version : "" }, svg);
  el("rect", { x, y, width: W, height: STEP_H, rx: 6 }, g);
  // Badges right to left: live version, staged, shadow.
  let bx = x + W - 8;
  for (const b of badges(s, st)) {
    bx -= b.w;
    const bg = el("g", { class: "badge " + b.cls }, g);
    el("rect", { x: bx, y: y + 7, width: b.w, height: 15, rx: 7.5 }, bg);
    text(bg, bx + b.w / 2, y + 18, b.label, { "text-anchor": "middle" });
    bx -= 4;
  }
  text(g, x + 10, y + 19, clip(s.name, bx - x - 14), { "font-weight": "600" });
  text(g, x + 10, y + 38, clip(stepDetail(s), (W - 20) / 0.93), { class: "sub" });
  const fn = stepFunction(s);
  if (fn) text(g, x + 10, y + 55, clip(fn, W - 20, true), { class: "sub mono" });
  const title = el("title", {}, g);
  title.textContent = [s.name, stepDetail(s), fn, st && st.digest ? "sha256:" + st.digest.slice(0, 12) : ""].filter(Boolean).join("\n");
  return { x, y, w: W, h: STEP_H };
}

// drawGraph draws g (the status's graph) into svg. steps maps a step's name
// to its StepStatus (versions); rates holds each stage's input records/s
// (stages), its tasks on this node (tasks) and the sink's records/s (out);
// counts the dead-lettered and late totals.
export function drawGraph(svg, g, steps, rates, counts) {
  svg.replaceChildren();
  const stages = g.stages && g.stages.length ? g.stages : [{ inputs: g.sources, output: g.sink, from: 0, to: g.steps.length }];
  const joined = {}; // step index → table or stream it joins (drawn above)
  g.steps.forEach((s, i) => {
    if (s.join) joined[i] = s.join.replace(/ \(.*\)$/, "").split(" ");
  });
  const hasAbove = Object.keys(joined).length > 0;
  const hasSide = !!(g.dead_letter || g.late);
  const srcs = g.sources || [];

  const top = 10 + (hasAbove ? 70 : 0);
  const stageTop = top + 8;
  const rowY = stageTop + 26; // steps' top
  const mid = rowY + STEP_H / 2;

  // Sources, stacked around the main row.
  let x = 10;
  const srcW = Math.max(0, ...srcs.map(topicWidth));
  const srcBoxes = srcs.map((s, i) => {
    const y = mid - TOPIC_H / 2 + (i - (srcs.length - 1) / 2) * (TOPIC_H + 22);
    return topicBox(svg, x + (srcW - topicWidth(s)), y, s, "source", "source");
  });
  x += srcW + GAP;

  const stageBoxes = [];
  const stepBoxes = [];
  let prevOut = null; // the box the next stage reads from
  stages.forEach((st, si) => {
    const sx = x;
    x += PAD;
    const first = x;
    for (let i = st.from; i < st.to; i++) {
      const s = g.steps[i];
      const b = stepBox(svg, x, rowY, s, steps[s.name]);
      stepBoxes[i] = b;
      if (i > st.from) arrow(svg, x - 22, mid, x, mid);
      x += b.w + 22;
    }
    if (st.to === st.from) x += 40; // a stage without steps (a plain copy)
    x -= 22;
    const box = { x: sx, y: stageTop, w: x + PAD - sx, h: rowY + STEP_H + PAD - stageTop, si };
    stageBoxes.push(box);
    const sb = el("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: 10, class: "stage-box", "data-testid": "graph-stage" }, svg);
    svg.insertBefore(sb, svg.firstChild);
    const tasks = rates.tasks[si] || 0;
    text(svg, box.x + 10, box.y + 16, `stage ${si} · ${tasks} task${tasks === 1 ? "" : "s"} here`, { class: "stage-label" });
    const r = rates.stages[si];
    const label = r === undefined || r === null ? "" : `${compact(r)}/s in`;
    const inLabel = (x1, x2) => {
      if (label) text(svg, (x1 + x2) / 2, mid - 8, label, { class: "rate", "text-anchor": "middle", "data-testid": "graph-rate" });
    };
    // Edges into the stage.
    const into = st.to > st.from ? first : sx + PAD;
    if (si === 0) {
      for (const b of srcBoxes) arrow(svg, b.x + b.w, b.y + b.h / 2, into, mid);
      if (srcBoxes.length) inLabel(srcBoxes[0].x + srcBoxes[0].w, into);
    } else if (prevOut) {
      arrow(svg, prevOut.x + prevOut.w, mid, into, mid);
      inLabel(prevOut.x + prevOut.w, into);
    }
    x += PAD + GAP;
    // The stage's output: a repartition topic, or the sink.
    const last = si === stages.length - 1;
    const outName = last ? g.sink || st.output : st.output;
    const out = topicBox(svg, x, mid - TOPIC_H / 2, outName, last ? "sink" : "repartition", last ? "sink" : "repartition");
    arrow(svg, box.x + box.w - PAD, mid, x, mid);
    if (last && rates.out !== null && rates.out !== undefined) {
      text(svg, (box.x + box.w - PAD + x) / 2, mid - 8, `${compact(rates.out)}/s`, { class: "rate", "text-anchor": "middle", "data-testid": "graph-rate" });
    }
    prevOut = out;
    x += out.w + GAP;
  });
  let width = x - GAP + 10;

  // Tables and joined streams above their step.
  for (const i in joined) {
    const [what, name] = joined[i];
    const b = stepBoxes[i];
    if (!b) continue;
    const tb = (g.tables || []).find((t) => t.name === name);
    const label = tb ? tb.topic : name;
    const w = topicWidth(label);
    const tx = b.x + (b.w - w) / 2;
    topicBox(svg, tx, top - 62, label, what, tb ? `table ${name}${tb.global ? " (global)" : ""}` : `${what} ${name}`);
    arrow(svg, tx + w / 2, top - 62 + TOPIC_H, b.x + b.w / 2, rowY, true);
  }

  // Side outputs below: dead letters from every stage, late records from
  // the windowed steps.
  let height = rowY + STEP_H + PAD + 10;
  if (hasSide) {
    const sy = rowY + STEP_H + PAD + 46;
    let nextX = 10;
    const place = (wantX, w) => {
      const bx = Math.max(wantX, nextX);
      nextX = bx + w + 24;
      return bx;
    };
    if (g.dead_letter) {
      const w = topicWidth(g.dead_letter);
      // Under the middle of the stages, as every stage may dead-letter.
      const cx = stageBoxes.reduce((a, s) => a + s.x + s.w / 2, 0) / Math.max(1, stageBoxes.length);
      const bx = place(cx - w / 2, w + 50);
      const hot = counts.dead > 0;
      const b = topicBox(svg, bx, sy, g.dead_letter, "dead_letter", "dead letter", { cls: "side" + (hot ? " hot" : ""), below: true });
      for (const s of stageBoxes) arrow(svg, s.x + s.w / 2, s.y + s.h, b.x + b.w / 2, b.y, true);
      text(svg, b.x + b.w + 6, b.y + TOPIC_H / 2 + 4, compact(counts.dead || 0), { class: hot ? "count" : "sub", "data-testid": "graph-dead" });
      width = Math.max(width, b.x + b.w + 60);
    }
    if (g.late) {
      const windowed = g.steps.map((s, i) => ((s.window && s.kind === "aggregate") || (s.join && s.join.startsWith("stream")) ? i : -1)).filter((i) => i >= 0);
      const w = topicWidth(g.late);
      const src = windowed.length ? stepBoxes[windowed[0]] : stageBoxes[stageBoxes.length - 1];
      const bx = place(src ? src.x + src.w / 2 - w / 2 + 40 : 10, w + 50);
      const hot = counts.late > 0;
      const b = topicBox(svg, bx, sy, g.late, "late", "late", { cls: "side" + (hot ? " hot" : ""), below: true });
      for (const i of windowed) {
        const s = stepBoxes[i];
        if (s) arrow(svg, s.x + s.w / 2, s.y + s.h, b.x + b.w / 2, b.y, true);
      }
      text(svg, b.x + b.w + 6, b.y + TOPIC_H / 2 + 4, compact(counts.late || 0), { class: hot ? "count" : "sub", "data-testid": "graph-late" });
      width = Math.max(width, b.x + b.w + 60);
    }
    height = sy + TOPIC_H + 22;
  }
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  // Shrink a wide pipeline to the panel, down to 65%; scroll beyond.
  const avail = svg.parentElement ? svg.parentElement.clientWidth : 0;
  const scale = avail > 0 ? Math.min(1, Math.max(0.65, avail / width)) : 1;
  svg.setAttribute("width", Math.floor(width * scale));
  svg.setAttribute("height", Math.floor(height * scale));
}
