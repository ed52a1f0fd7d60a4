// A small time-series line chart drawn as SVG: a few series over a fixed
// span ending now, with a y axis from 0 to a round maximum.

const NS = "http://www.w3.org/2000/svg";

export function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

export function text(parent, x, y, s, attrs) {
  const t = el("text", Object.assign({ x, y }, attrs || {}), parent);
  t.textContent = s;
  return t;
}

// compact formats a number for an axis or a label: 950, 1.2k, 3.4M.
export function compact(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return trim(v / 1e9) + "G";
  if (a >= 1e6) return trim(v / 1e6) + "M";
  if (a >= 1e3) return trim(v / 1e3) + "k";
  return trim(v);
}

function trim(v) {
  const a = Math.abs(v);
  const s = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(a < 1 && a > 0 ? 2 : 1);
  return s.replace(/\.0+$/, "").replace(/(\.\d*[1-9])0+$/, "$1");
}

// niceMax is the top of an axis of four steps that holds v, each step a
// round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten).
function niceMax(v) {
  if (!(v > 0)) return 1;
  const step = (v * 1.05) / 4;
  const p = Math.pow(10, Math.floor(Math.log10(step)));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (step <= m * p) return 4 * m * p;
  return 40 * p;
}

// tickStep is the distance between the time axis's labels for a span.
function tickStep(span) {
  for (const [s, step] of [[30e3, 5e3], [60e3, 10e3], [120e3, 20e3], [300e3, 60e3], [600e3, 120e3]]) if (span <= s) return step;
  return 300e3;
}

function ago(ms) {
  return ms >= 60e3 && ms % 60e3 === 0 ? `-${ms / 60e3}m` : `-${Math.round(ms / 1000)}s`;
}

// drawChart draws series = [{name, key, points: [[timeMs, value], ...]}]
// into svg over the span (ms) ending at now. key names the CSS classes
// (s-KEY, a-KEY, legend-KEY) that colour a series.
export function drawChart(svg, series, now, span) {
  const W = Math.max(svg.clientWidth || 600, 200), H = Math.max(svg.clientHeight || 190, 120);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const L = 46, R = 10, T = 22, B = 20;
  const pw = W - L - R, ph = H - T - B;
  const from = now - span;
  let max = 0, n = 0;
  for (const s of series) for (const [t, v] of s.points) if (t >= from) { max = Math.max(max, v); n++; }
  const top = niceMax(max);
  const x = (t) => L + ((t - from) / span) * pw;
  const y = (v) => T + ph - (v / top) * ph;

  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4, yy = y(v);
    el("line", { x1: L, x2: W - R, y1: yy, y2: yy, class: i === 0 ? "axis" : "gridline" }, svg);
    text(svg, L - 6, yy + 4, compact(v), { "text-anchor": "end" });
  }
  const step = tickStep(span);
  for (let a = Math.floor(span / step) * step; a >= 0; a -= step) {
    const xx = x(now - a);
    el("line", { x1: xx, x2: xx, y1: T, y2: T + ph, class: "gridline" }, svg);
    text(svg, xx, H - 5, a === 0 ? "now" : ago(a), { "text-anchor": a === 0 ? "end" : xx - L < 12 ? "start" : "middle" });
  }

  let lx = L;
  for (const s of series) {
    const pts = s.points.filter(([t]) => t >= from);
    const last = pts.length ? pts[pts.length - 1][1] : null;
    el("rect", { x: lx, y: 6, width: 10, height: 3, rx: 1, class: "legend-" + s.key }, svg);
    const lt = text(svg, lx + 14, 11, `${s.name} ${last === null ? "–" : compact(last)}`);
    lx += 14 + Math.max(60, lt.getComputedTextLength ? lt.getComputedTextLength() + 16 : 80);
    if (pts.length === 0) continue;
    const coords = pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
    if (pts.length > 1) {
      el("polygon", {
        class: "area a-" + s.key,
        points: `${x(pts[0][0]).toFixed(1)},${y(0)} ${coords.join(" ")} ${x(pts[pts.length - 1][0]).toFixed(1)},${y(0)}`,
      }, svg);
    }
    el("polyline", { class: "series s-" + s.key, points: coords.join(" "), "data-testid": "series-" + s.key, "data-points": pts.length }, svg);
    if (pts.length === 1) el("circle", { cx: x(pts[0][0]), cy: y(pts[0][1]), r: 2.5, class: "legend-" + s.key }, svg);
  }
  if (n === 0) text(svg, L + pw / 2, T + ph / 2, "waiting for data…", { "text-anchor": "middle", class: "nodata" });
  svg.dataset.points = String(n);
}
