// The pipeline drawn as SVG, left to right: source topics, each stage's
// steps in a row in a dashed box (a stage is what one task runs), the
// repartition topic between stages, the sink. An arrow joins two steps side
// by side when the second reads the first; a step that reads other steps
// (from:) or the source gets an arrow from each of them over the row, on
// lanes above it. The steps made from a branch step's branches or from a
// step's named outputs are grouped under their step's name; the topics
// steps also write to (to:) stand below them, with the dead-letter topic
// and, when windows can send records there, the late topic; tables a step
// joins above it.

import { el, text, compact } from "./chart.js";

const STEP_MIN_W = 170, STEP_MAX_W = 300, STEP_H = 66, TOPIC_H = 34, GAP = 56, PAD = 14;
const STEP_GAP = 22; // between two steps of a row
const OUT_MIN_W = 110, OUT_H = 44; // a step of kind output: a branch without a function, a named output
const LANE = 12; // between two lanes of the arrows over the row
const GROUP_H = 18; // under a row with branches or outputs: their label
const INPUT = -1; // a step reads its stage's input: the sources, or the repartition topic

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

// link is the group of an edge's path and arrowhead, naming what it joins
// (a step's name, or role:topic) for tests and a title for people.
function link(parent, from, to, title) {
  const g = el("g", { class: "link", "data-testid": "graph-edge", "data-from": from, "data-to": to }, parent);
  el("title", {}, g).textContent = title || `${from} → ${to}`;
  return g;
}

// head draws an arrowhead with its tip at x,y, pointing right or down.
function head(parent, x, y, down) {
  const d = down ? `M${x - 4},${y - 7} L${x},${y} L${x + 4},${y - 7} Z` : `M${x - 7},${y - 4} L${x},${y} L${x - 7},${y + 4} Z`;
  el("path", { d, class: "arrow" }, parent);
}

// arrow draws an edge from x1,y1 to x2,y2: left to right (a curve when the
// two are not level), or downwards (opts.down). opts.cls adds classes to
// the path: side (dashed), else (dotted).
function arrow(parent, x1, y1, x2, y2, opts) {
  const o = opts || {};
  const mx = (x1 + x2) / 2;
  const d = o.down
    ? `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2 - 6}`
    : Math.abs(y1 - y2) < 1
      ? `M${x1},${y1} L${x2 - 6},${y2}`
      : `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 6},${y2}`;
  el("path", { d, class: "edge" + (o.cls ? " " + o.cls : "") }, parent);
  head(parent, x2, y2, o.down);
}

// roundPath is an SVG path through pts, its corners rounded.
function roundPath(pts, r) {
  const p = pts.filter((q, k) => k === 0 || Math.abs(q[0] - pts[k - 1][0]) + Math.abs(q[1] - pts[k - 1][1]) > 0.01);
  let d = `M${p[0][0]},${p[0][1]}`;
  for (let k = 1; k < p.length - 1; k++) {
    const [px, py] = p[k - 1], [cx, cy] = p[k], [nx, ny] = p[k + 1];
    const l1 = Math.hypot(cx - px, cy - py), l2 = Math.hypot(nx - cx, ny - cy);
    const rr = Math.min(r, l1 / 2, l2 / 2);
    const ax = cx + ((px - cx) * rr) / l1, ay = cy + ((py - cy) * rr) / l1;
    const bx = cx + ((nx - cx) * rr) / l2, by = cy + ((ny - cy) * rr) / l2;
    d += ` L${ax},${ay} Q${cx},${cy} ${bx},${by}`;
  }
  const last = p[p.length - 1];
  return d + ` L${last[0]},${last[1]}`;
}

// laneArrow draws an edge through the corners pts, whose last point is the
// arrow's tip, reached going down (or right).
function laneArrow(parent, pts, down) {
  const [tx, ty] = pts[pts.length - 1];
  const end = down ? [tx, ty - 6] : [tx - 6, ty];
  el("path", { d: roundPath([...pts.slice(0, -1), end], 8), class: "edge lane" }, parent);
  head(parent, tx, ty, down);
}

// topicBox draws a topic with its caption above it, or below (extra.below)
// for the topics below the stages (their edges come in from above).
function topicBox(parent, x, y, name, role, caption, extra) {
  const e = extra || {};
  const w = topicWidth(name);
  const attrs = { class: "topic" + (e.cls ? " " + e.cls : ""), "data-testid": e.testid || "graph-topic", "data-role": role, "data-topic": name };
  if (e.step) attrs["data-step"] = e.step;
  const g = el("g", attrs, parent);
  el("rect", { x, y, width: w, height: TOPIC_H, rx: TOPIC_H / 2 }, g);
  if (e.below) text(g, x + w / 2, y + TOPIC_H + 14, caption, { class: "sub", "text-anchor": "middle" });
  else text(g, x + 14, y - 5, caption, { class: "sub" });
  text(g, x + w / 2, y + TOPIC_H / 2 + 4, clip(name, w - 24, true), { class: "mono", "text-anchor": "middle" });
  const title = el("title", {}, g);
  title.textContent = e.title || `${caption}: ${name}`;
  return { x, y, w, h: TOPIC_H, g };
}

function stepDetail(s, rest) {
  const parts = [s.kind];
  if (rest) parts.push("the rest");
  if (s.window) parts.push(s.window);
  if (s.join) parts.push(s.join);
  if (s.state) parts.push("state");
  return parts.join(" · ");
}

function badges(s, st) {
  const out = [];
  // A key_by runs no function, nor does an output (a branch without a
  // function, a named output).
  if (st && s.kind !== "key_by" && s.kind !== "output") out.push(["v" + st.version, "live"]);
  if (st && st.staged) out.push(["v" + st.staged + " next", "staged"]);
  if (st && st.shadow) out.push(["v" + st.shadow + " shadow", "shadow"]);
  return out.map(([label, cls]) => ({ label, cls, w: textWidth(label) * 0.85 + 10 }));
}

function stepFunction(s) {
  return s.function || (s.field ? "field " + s.field : "");
}

// stepSize fits a step's box to its texts, within bounds; a step of kind
// output is smaller.
function stepSize(s, st, rest) {
  const b = badges(s, st).reduce((w, x) => w + x.w + 4, 0);
  if (s.kind === "output") {
    const need = Math.max(textWidth(s.name) * 1.05 + b + 20, textWidth(stepDetail(s, rest)) * 0.93 + 20);
    return { w: Math.min(STEP_MAX_W, Math.max(OUT_MIN_W, Math.ceil(need))), h: OUT_H };
  }
  const need = Math.max(textWidth(s.name) * 1.05 + b + 24, textWidth(stepDetail(s, rest)) * 0.93 + 22, textWidth(stepFunction(s), true) + 22);
  return { w: Math.min(STEP_MAX_W, Math.max(STEP_MIN_W, Math.ceil(need))), h: STEP_H };
}

function stepBox(parent, b, s, st, rest) {
  const { x, y, w: W, h: H } = b;
  const small = s.kind === "output";
  const g = el("g", { class: "step" + (small ? " output" : ""), "data-testid": "graph-step", "data-step": s.name, "data-kind": s.kind, "data-version": st ? st.version : "" }, parent);
  if (s.of) g.setAttribute("data-of", s.of);
  el("rect", { x, y, width: W, height: H, rx: 6 }, g);
  // Badges right to left: live version, staged, shadow.
  let bx = x + W - 8;
  for (const bd of badges(s, st)) {
    bx -= bd.w;
    const bg = el("g", { class: "badge " + bd.cls }, g);
    el("rect", { x: bx, y: y + 7, width: bd.w, height: 15, rx: 7.5 }, bg);
    text(bg, bx + bd.w / 2, y + 18, bd.label, { "text-anchor": "middle" });
    bx -= 4;
  }
  text(g, x + 10, y + 19, clip(s.name, bx - x - 14), { "font-weight": "600" });
  text(g, x + 10, y + (small ? 35 : 38), clip(stepDetail(s, rest), (W - 20) / 0.93), { class: "sub" });
  const fn = stepFunction(s);
  if (fn && !small) text(g, x + 10, y + 55, clip(fn, W - 20, true), { class: "sub mono" });
  const title = el("title", {}, g);
  title.textContent = [s.name, stepDetail(s, rest), fn, st && st.digest ? "sha256:" + st.digest.slice(0, 12) : "",
    s.of ? (rest !== undefined ? `branch of ${s.of}` : `output of ${s.of}`) : ""].filter(Boolean).join("\n");
}

// inputsOf returns what step i of stage st reads: earlier steps of the
// stage (indexes), or INPUT for the stage's input (the sources, or the
// repartition topic in front of the stage).
function inputsOf(g, index, st, i) {
  const s = g.steps[i];
  if (!s.from || !s.from.length) return [i === st.from ? INPUT : i - 1];
  const out = [];
  for (const name of s.from) {
    let k = INPUT;
    if (name !== "source") {
      const j = index[name];
      if (j === undefined || j >= i) continue; // not a step before it: no edge
      if (j >= st.from) k = j; // else a step of an earlier stage: what the stage reads
    }
    if (!out.includes(k)) out.push(k);
  }
  return out;
}

// outputStep is the step of stage st whose output goes to the stage's
// output topic (the sink, or the repartition topic): its last step, or the
// step its last steps are the named outputs of; -1 when they are a branch
// step's branches (a branch step has no output of its own).
function outputStep(g, index, st) {
  for (let i = st.to - 1; i >= st.from; i--) {
    const s = g.steps[i];
    if (!s.of) return i;
    if (index[s.of] === undefined) return -1;
  }
  return -1;
}

// assignLevels gives each lane (an arrow over the row, covering lo..hi in
// step positions) a level: above every shorter lane it overlaps.
function assignLevels(lanes) {
  const done = [];
  for (const l of lanes.slice().sort((a, b) => a.hi - a.lo - (b.hi - b.lo) || a.lo - b.lo)) {
    l.level = 0;
    for (const d of done) if (d.lo <= l.hi && l.lo <= d.hi) l.level = Math.max(l.level, d.level + 1);
    done.push(l);
  }
}

// drawGraph draws g (the status's graph) into svg. steps maps a step's name
// to its StepStatus (versions); rates holds each stage's input records/s
// (stages), its tasks on this node (tasks) and the sink's records/s (out);
// counts the dead-lettered and late totals.
export function drawGraph(svg, g, steps, rates, counts) {
  svg.replaceChildren();
  const layer = { back: el("g", {}, svg), edges: el("g", {}, svg), nodes: el("g", {}, svg), labels: el("g", {}, svg) };
  const gsteps = g.steps || [];
  const stages = g.stages && g.stages.length ? g.stages : [{ inputs: g.sources, output: g.sink, from: 0, to: gsteps.length }];
  const index = {}; // a step's name → its index
  gsteps.forEach((s, i) => {
    if (index[s.name] === undefined) index[s.name] = i;
  });
  // A step of a branch (of names no step: the branch step became its
  // branches) rather than a named output (of names the routing step).
  const ofBranch = (s) => !!s.of && index[s.of] === undefined;
  const joined = {}; // step index → table or stream it joins (drawn above)
  gsteps.forEach((s, i) => {
    if (s.join) joined[i] = s.join.replace(/ \(.*\)$/, "").split(" ");
  });
  const hasAbove = Object.keys(joined).length > 0;
  const hasGroups = gsteps.some((s) => s.of);
  const taps = gsteps.map((s, i) => (s.to ? i : -1)).filter((i) => i >= 0);
  // The steps that send records to the late topic: those with windows that
  // close (an aggregate's but a global one, a stream-stream join's). The
  // late topic is drawn only when there is one: a node leaves it out of
  // the graph of a pipeline without such windows, and an older node that
  // did not is drawn alike.
  const windowed = gsteps
    .map((s, i) => ((s.kind === "aggregate" && s.window && !s.window.startsWith("global")) || (s.join && s.join.startsWith("stream")) ? i : -1))
    .filter((i) => i >= 0);
  const late = windowed.length > 0 ? g.late : "";
  const hasBelow = !!(g.dead_letter || late) || taps.length > 0;
  const srcs = g.sources || [];

  // What each step reads, and the edges that skip steps: lanes over the row.
  const plans = stages.map((st) => {
    const ins = {};
    const lanes = [];
    for (let i = st.from; i < st.to; i++) {
      ins[i] = inputsOf(g, index, st, i);
      for (const j of ins[i]) {
        if (j === i - 1 || (j === INPUT && i === st.from)) continue; // side by side
        lanes.push({ from: j, to: i, lo: j === INPUT ? st.from - 0.5 : j + 0.25, hi: i - 0.25 });
      }
    }
    const out = st.to > st.from ? outputStep(g, index, st) : -1;
    if (out >= 0 && out < st.to - 1) lanes.push({ from: out, to: "out", lo: out + 0.25, hi: st.to + 0.5 });
    assignLevels(lanes);
    return { ins, lanes, out };
  });
  const levels = Math.max(0, ...plans.flatMap((p) => p.lanes.map((l) => l.level + 1)));

  const top = 10 + (hasAbove ? 70 : 0);
  const stageTop = top + 8;
  const rowY = stageTop + 26 + (levels ? 8 + levels * LANE : 0); // steps' top
  const mid = rowY + STEP_H / 2;
  const laneY = (level) => rowY - 12 - level * LANE;
  const stageBottom = rowY + STEP_H + PAD + (hasGroups ? GROUP_H : 0);

  // Sources, stacked around the main row.
  let x = 10;
  const srcW = Math.max(0, ...srcs.map(topicWidth));
  const srcBoxes = srcs.map((s, i) => {
    const y = mid - TOPIC_H / 2 + (i - (srcs.length - 1) / 2) * (TOPIC_H + 22);
    const b = topicBox(layer.nodes, x + (srcW - topicWidth(s)), y, s, "source", "source");
    b.ref = "source:" + s;
    return b;
  });
  x += srcW + GAP;

  const boxes = []; // step index → its box
  const stageBoxes = [];
  let prevOut = null; // the topic the next stage reads
  stages.forEach((st, si) => {
    const plan = plans[si];
    const sx = x;
    x += PAD;
    for (let i = st.from; i < st.to; i++) {
      const s = gsteps[i];
      const rest = ofBranch(s) ? s.kind === "output" : undefined;
      const { w, h } = stepSize(s, steps[s.name], rest);
      boxes[i] = { x, y: mid - h / 2, w, h };
      stepBox(layer.nodes, boxes[i], s, steps[s.name], rest);
      x += w + STEP_GAP;
    }
    if (st.to === st.from) x += 40; // a stage without steps (a plain copy)
    x -= STEP_GAP;
    const box = { x: sx, y: stageTop, w: x + PAD - sx, h: stageBottom - stageTop, si };
    stageBoxes.push(box);
    el("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: 10, class: "stage-box", "data-testid": "graph-stage" }, layer.back);
    const tasks = rates.tasks[si] || 0;
    text(layer.back, box.x + 10, box.y + 16, `stage ${si} · ${tasks} task${tasks === 1 ? "" : "s"} here`, { class: "stage-label" });

    // The steps made from a branch step or a step's named outputs: under
    // their step's name.
    for (let i = st.from; i < st.to; ) {
      const of = gsteps[i].of;
      let j = i + 1;
      while (of && j < st.to && gsteps[j].of === of) j++;
      if (of) {
        const branch = ofBranch(gsteps[i]);
        const gx = boxes[i].x - 7, gw = boxes[j - 1].x + boxes[j - 1].w + 7 - gx;
        const grp = el("g", { class: "group", "data-testid": "graph-group", "data-of": of, "data-kind": branch ? "branch" : "outputs" }, layer.back);
        el("rect", { x: gx, y: rowY - 7, width: gw, height: STEP_H + GROUP_H + 5, rx: 8 }, grp);
        // The label goes left, between the arrows down to the steps' to:
        // topics if it can, else over them (it has a halo).
        const label = branch ? `branch ${of}` : `outputs of ${of}`;
        const cuts = [];
        for (let k = i; k < j; k++) if (gsteps[k].to) cuts.push(boxes[k].x + boxes[k].w / 2);
        let free = [];
        let from = gx + 8;
        for (const c of cuts) {
          free.push([from, c - 6]);
          from = c + 6;
        }
        free.push([from, gx + gw - 4]);
        free = free.filter(([a, b]) => b > a);
        const spot = free.find(([a, b]) => b - a >= textWidth(label) * 0.9) || [gx + 8, gx + gw - 4];
        text(layer.labels, spot[0], rowY + STEP_H + 12, clip(label, spot[1] - spot[0]), { class: "group-label", "data-testid": "graph-group-label", "data-of": of });
        el("title", {}, grp).textContent = branch
          ? `the branches of branch step ${of}: each record goes to the first whose filter keeps it`
          : `the named outputs of step ${of}: the records its function routes there`;
      }
      i = j;
    }

    // Edges into the steps: side by side, or over the row.
    const inputs = si === 0 ? srcBoxes : prevOut ? [prevOut] : [];
    const r = rates.stages[si];
    const rateText = r === undefined || r === null ? "" : `${compact(r)}/s in`;
    const inputLanes = plan.lanes.some((l) => l.from === INPUT);
    const entryX = (i) => boxes[i].x + boxes[i].w * 0.28;
    const exitX = (i) => boxes[i].x + boxes[i].w * 0.72;
    if (st.to === st.from) {
      for (const b of inputs) arrow(link(layer.edges, b.ref, `stage:${si}`), b.x + b.w, b.y + b.h / 2, sx + PAD, mid);
    }
    for (let i = st.from; i < st.to; i++) {
      const s = gsteps[i];
      for (const j of plan.ins[i]) {
        if (j === INPUT && i === st.from) {
          for (const b of inputs) arrow(link(layer.edges, b.ref, s.name), b.x + b.w, b.y + b.h / 2, boxes[i].x, mid);
          continue;
        }
        if (j === i - 1) {
          const p = gsteps[j];
          // A branch reads the records the branch before it did not take.
          const rest = ofBranch(s) && p.of === s.of;
          const e = link(layer.edges, p.name, s.name, rest ? `${s.name} gets the records ${p.name} did not take` : "");
          arrow(e, boxes[j].x + boxes[j].w, mid, boxes[i].x, mid, { cls: rest ? "else" : "" });
          continue;
        }
        const lane = plan.lanes.find((l) => l.from === j && l.to === i);
        const ly = laneY(lane.level);
        const down = [[entryX(i), ly], [entryX(i), boxes[i].y]];
        if (j === INPUT) {
          for (const b of inputs) {
            const jx = b.x + b.w + 10;
            laneArrow(link(layer.edges, b.ref, s.name), [[b.x + b.w, b.y + b.h / 2], [jx, b.y + b.h / 2], [jx, ly], ...down], true);
          }
        } else {
          laneArrow(link(layer.edges, gsteps[j].name, s.name), [[exitX(j), boxes[j].y], [exitX(j), ly], ...down], true);
        }
      }
    }
    if (rateText && inputs.length) {
      const x1 = inputs[0].x + inputs[0].w, x2 = st.to > st.from ? boxes[st.from].x : sx + PAD;
      text(layer.labels, (x1 + x2) / 2, inputLanes ? mid + 16 : mid - 8, rateText, { class: "rate", "text-anchor": "middle", "data-testid": "graph-rate" });
    }

    x += PAD + GAP;
    // The stage's output: a repartition topic, or the sink (none when the
    // pipeline ends with a branch step).
    const last = si === stages.length - 1;
    const outName = last ? g.sink : st.output;
    prevOut = null;
    if (!outName) return;
    const role = last ? "sink" : "repartition";
    const out = topicBox(layer.nodes, x, mid - TOPIC_H / 2, outName, role, role);
    out.ref = role + ":" + outName;
    const boxRight = box.x + box.w;
    let rateAt = null;
    if (st.to === st.from || plan.out === st.to - 1) {
      const from = st.to === st.from ? `stage:${si}` : gsteps[plan.out].name;
      const x1 = st.to === st.from ? boxRight - PAD : boxes[plan.out].x + boxes[plan.out].w;
      arrow(link(layer.edges, from, out.ref), x1, mid, x, mid);
      rateAt = [(boxRight - PAD + x) / 2, mid - 8];
    } else if (plan.out >= 0) {
      const lane = plan.lanes.find((l) => l.to === "out");
      const ly = laneY(lane.level);
      const jx = boxRight + 16;
      const o = plan.out;
      laneArrow(link(layer.edges, gsteps[o].name, out.ref), [[exitX(o), boxes[o].y], [exitX(o), ly], [jx, ly], [jx, mid], [x, mid]], false);
      rateAt = [(jx + x) / 2, mid + 16];
    }
    if (last && rateAt && rates.out !== null && rates.out !== undefined) {
      text(layer.labels, rateAt[0], rateAt[1], `${compact(rates.out)}/s`, { class: "rate", "text-anchor": "middle", "data-testid": "graph-rate" });
    }
    prevOut = out;
    x += out.w + GAP;
  });
  let width = x - GAP + 10;

  // Tables and joined streams above their step.
  for (const i in joined) {
    const [what, name] = joined[i];
    const b = boxes[i];
    if (!b) continue;
    const tb = (g.tables || []).find((t) => t.name === name);
    const label = tb ? tb.topic : name;
    const w = topicWidth(label);
    const tx = b.x + (b.w - w) / 2;
    topicBox(layer.nodes, tx, top - 62, label, what, tb ? `table ${name}${tb.global ? " (global)" : ""}` : `${what} ${name}`);
    arrow(link(layer.edges, `${what}:${label}`, gsteps[i].name), tx + w / 2, top - 62 + TOPIC_H, b.x + b.w / 2, b.y, { down: true, cls: "side" });
  }

  // Below: the topics steps also write to (to:), each under its step, and
  // the side outputs: dead letters from every stage, late records from the
  // windowed steps.
  let height = stageBottom + 10;
  if (hasBelow) {
    const sy = stageBottom + 46;
    const taken = []; // [from, to) of the boxes placed, with their margins
    const place = (wantX, w) => {
      let bx = Math.max(10, wantX);
      for (let moved = true; moved; ) {
        moved = false;
        for (const [a, b] of taken) {
          if (bx < b && bx + w > a) {
            bx = b;
            moved = true;
          }
        }
      }
      taken.push([bx, bx + w]);
      return bx;
    };
    for (const i of taps) {
      const s = gsteps[i];
      const b = boxes[i];
      if (!b) continue;
      const w = topicWidth(s.to);
      const t = topicBox(layer.nodes, place(b.x + b.w / 2 - w / 2, w + 20), sy, s.to, "tap", "tap", {
        below: true, testid: "graph-tap", step: s.name, title: `step ${s.name} also writes to ${s.to}`,
      });
      arrow(link(layer.edges, s.name, "tap:" + s.to), b.x + b.w / 2, b.y + b.h, t.x + t.w / 2, t.y, { down: true });
      width = Math.max(width, t.x + t.w + 10);
    }
    if (g.dead_letter) {
      const w = topicWidth(g.dead_letter);
      // Under the middle of the stages, as every stage may dead-letter.
      const cx = stageBoxes.reduce((a, s) => a + s.x + s.w / 2, 0) / Math.max(1, stageBoxes.length);
      const bx = place(cx - w / 2, w + 50);
      const hot = counts.dead > 0;
      const b = topicBox(layer.nodes, bx, sy, g.dead_letter, "dead_letter", "dead letter", { cls: "side" + (hot ? " hot" : ""), below: true });
      for (const s of stageBoxes) {
        arrow(link(layer.edges, `stage:${s.si}`, "dead_letter:" + g.dead_letter), s.x + s.w / 2, s.y + s.h, b.x + b.w / 2, b.y, { down: true, cls: "side" });
      }
      text(layer.labels, b.x + b.w + 6, b.y + TOPIC_H / 2 + 4, compact(counts.dead || 0), { class: hot ? "count" : "sub", "data-testid": "graph-dead" });
      width = Math.max(width, b.x + b.w + 60);
    }
    if (late) {
      const w = topicWidth(late);
      const src = boxes[windowed[0]];
      const bx = place(src ? src.x + src.w / 2 - w / 2 + 40 : 10, w + 50);
      const hot = counts.late > 0;
      const b = topicBox(layer.nodes, bx, sy, late, "late", "late", { cls: "side" + (hot ? " hot" : ""), below: true });
      for (const i of windowed) {
        const s = boxes[i];
        if (s) arrow(link(layer.edges, gsteps[i].name, "late:" + late), s.x + s.w / 2, s.y + s.h, b.x + b.w / 2, b.y, { down: true, cls: "side" });
      }
      text(layer.labels, b.x + b.w + 6, b.y + TOPIC_H / 2 + 4, compact(counts.late || 0), { class: hot ? "count" : "sub", "data-testid": "graph-late" });
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
