// The dashboard: polls the node's admin API (GET /v1/status every second,
// GET /v1/functions every few seconds and whenever a step's version
// changes) and redraws. Throughput is the counters' change between two
// polls; the charts keep the last five minutes in memory.

import { drawChart } from "./chart.js";
import { duration } from "./format.js";
import { drawGraph } from "./graph.js";

const POLL_MS = 1000;
const FUNCTIONS_MS = 5000;
const SPAN_MS = 5 * 60 * 1000;
const API = new URL("../v1/", location.href);

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en-US");

const state = {
  prev: null, // the last poll's counters: {t, in, out, stages: [in per stage]}
  started: "", // the node's start time: counters restart with it
  history: [], // {t, in, out, lag}: rates per second and lag
  status: null,
  functions: null,
  functionsErr: "",
  functionsAt: 0,
  versions: "",
  graphKey: "",
};

// APIError is an error the API answered; NetError a request that got no
// answer.
class APIError extends Error {}
class NetError extends Error {}

async function get(path) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 3000);
  try {
    const r = await fetch(new URL(path, API), { signal: ctl.signal, cache: "no-store", headers: { Accept: "application/json" } });
    let body = null;
    try {
      body = await r.json();
    } catch {
      body = null;
    }
    if (!r.ok) {
      const e = body && body.error;
      throw new APIError(e ? `${e.code}: ${e.message}` : `HTTP ${r.status}`);
    }
    return body;
  } catch (err) {
    if (err instanceof APIError) throw err;
    if (err.name === "AbortError") throw new NetError("no answer in 3s");
    throw new NetError(err.message);
  } finally {
    clearTimeout(timer);
  }
}

function setConn(cls, msg) {
  const c = $("conn");
  c.className = "conn " + cls;
  c.textContent = msg;
}

function setNum(id, v, text) {
  const e = $(id);
  e.dataset.value = v === null || v === undefined ? "" : String(v);
  e.textContent = text !== undefined ? text : v === null || v === undefined ? "–" : fmt.format(v);
}

function rateText(v) {
  if (v === null || v === undefined) return "–";
  return v >= 100 ? fmt.format(Math.round(v)) : v.toFixed(1);
}

// utc formats a time as 2006-01-02 15:04:05.000 (UTC); short drops the date.
function utc(ms, short) {
  const s = new Date(ms).toISOString().replace("T", " ").replace("Z", "");
  return short ? s.slice(11) : s;
}

function cell(tr, content, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  if (content instanceof Node) td.appendChild(content);
  else td.textContent = content;
  tr.appendChild(td);
  return td;
}

function stageIns(st) {
  const ins = [];
  for (const t of st.tasks || []) ins[t.stage] = (ins[t.stage] || 0) + t.in;
  return ins;
}

function update(st) {
  if (!st || !st.stats || !st.graph) throw new Error("the status has no pipeline graph: is this an Eddy node of this version?");
  const now = Date.now();
  const ins = stageIns(st);
  let rates = null;
  let p = state.prev;
  if (state.started !== st.started) {
    // A new node, or this one restarted: its counters start again.
    state.started = st.started;
    state.history = [];
    p = null;
  }
  if (p && st.stats.in >= p.in && now > p.t) {
    const dt = (now - p.t) / 1000;
    rates = {
      in: (st.stats.in - p.in) / dt,
      out: (st.stats.out - p.out) / dt,
      stages: ins.map((v, i) => (p.stages[i] === undefined || v < p.stages[i] ? null : (v - p.stages[i]) / dt)),
    };
    state.history.push({ t: now, in: rates.in, out: rates.out, lag: st.lag });
  } else {
    state.history.push({ t: now, in: null, out: null, lag: st.lag });
  }
  state.prev = { t: now, in: st.stats.in, out: st.stats.out, stages: ins };
  while (state.history.length && state.history[0].t < now - SPAN_MS - 5000) state.history.shift();

  $("pipeline").textContent = st.pipeline;
  document.title = `eddy · ${st.pipeline}`;
  $("node").textContent = st.node;
  $("delivery").textContent = st.delivery;
  $("uptime").textContent = duration(now - Date.parse(st.started));
  let nparts = 0;
  for (const k in st.partitions || {}) nparts += st.partitions[k].length;
  $("partcount").textContent = String(nparts);

  setNum("rate-in", rates ? rates.in : null, rateText(rates && rates.in));
  setNum("rate-out", rates ? rates.out : null, rateText(rates && rates.out));
  setNum("stat-in", st.stats.in);
  setNum("stat-out", st.stats.out);
  setNum("stat-lag", st.lag);
  setNum("stat-dead", st.stats.dead_lettered);
  setNum("stat-late", st.stats.late);
  setNum("stat-dropped", st.stats.dropped);
  setNum("stat-commits", st.stats.commits);
  setNum("stat-aborts", st.stats.aborts);
  $("stat-dead").parentElement.classList.toggle("nonzero", st.stats.dead_lettered > 0);
  $("stat-late").parentElement.classList.toggle("nonzero", st.stats.late > 0);

  const steps = {};
  for (const s of st.steps || []) steps[s.name] = s;
  const tasks = [];
  for (const t of st.tasks || []) tasks[t.stage] = (tasks[t.stage] || 0) + 1;
  drawGraph($("graph"), st.graph, steps, {
    stages: rates ? rates.stages : [],
    tasks,
    out: rates ? rates.out : null,
  }, { dead: st.stats.dead_lettered, late: st.stats.late });

  drawCharts(now);
  drawPartitions(st, now);

  // Fetch the functions again when a version changed, else now and then.
  const versions = (st.steps || []).map((s) => `${s.name}:${s.version}:${s.staged || 0}:${s.shadow || 0}`).join(",");
  if (versions !== state.versions || now - state.functionsAt > FUNCTIONS_MS) {
    state.versions = versions;
    state.functionsAt = now;
    loadFunctions(st);
  }
}

// chartSpan is the time the charts show: the smallest of 30 s, 1, 2 and 5
// minutes that holds what this page has seen, so that a page just opened
// does not squeeze its points into a corner.
function chartSpan(now) {
  const age = state.history.length ? now - state.history[0].t : 0;
  for (const s of [30e3, 60e3, 120e3]) if (age <= s) return s;
  return SPAN_MS;
}

function spanText(ms) {
  return ms < 60e3 ? `last ${ms / 1000} s` : `last ${ms / 60e3} min`;
}

function drawCharts(now) {
  const span = chartSpan(now);
  const h = state.history.filter((p) => p.in !== null);
  $("tp-span").textContent = "records/s · " + spanText(span);
  $("lag-span").textContent = "records not processed yet · " + spanText(span);
  drawChart($("chart-throughput"), [
    { name: "in", key: "in", points: h.map((p) => [p.t, p.in]) },
    { name: "out", key: "out", points: h.map((p) => [p.t, p.out]) },
  ], now, span);
  drawChart($("chart-lag"), [
    { name: "lag", key: "lag", points: state.history.map((p) => [p.t, p.lag]) },
  ], now, span);
}

function drawPartitions(st, now) {
  const body = document.createElement("tbody");
  let prevStage = -1;
  for (const t of st.tasks || []) {
    const inputs = t.inputs && t.inputs.length ? t.inputs : [null];
    for (const inp of inputs) {
      const tr = document.createElement("tr");
      tr.dataset.testid = "partition-row";
      tr.dataset.stage = t.stage;
      tr.dataset.partition = t.partition;
      if (prevStage !== -1 && t.stage !== prevStage) tr.className = "stage-break";
      prevStage = t.stage;
      cell(tr, String(t.stage), "num");
      cell(tr, inp ? `${inp.topic}/${inp.partition}` : `partition ${t.partition}`, "mono");
      cell(tr, inp ? (inp.offset < 0 ? "–" : fmt.format(inp.offset)) : "–", "num");
      const lag = cell(tr, inp ? fmt.format(inp.lag) : "–", "num");
      if (inp && inp.lag > 0) lag.classList.add("lagging");
      cell(tr, fmt.format(t.in), "num");
      cell(tr, fmt.format(t.out), "num");
      if (t.watermark !== undefined && t.watermark !== null) {
        const wm = cell(tr, utc(t.watermark), "mono");
        wm.dataset.testid = "watermark";
        wm.dataset.value = String(t.watermark);
        const behind = now - t.watermark;
        const b = cell(tr, duration(behind), "num");
        b.dataset.testid = "watermark-behind";
        b.title = "how far the watermark is behind this browser's clock";
        if (behind > 60e3) b.classList.add("behind-bad");
      } else {
        cell(tr, "–", "muted");
        cell(tr, "", "num");
      }
      body.appendChild(tr);
    }
  }
  // Stores restoring and standby copies: a row each, the records they
  // have still to read in the lag column.
  const extra = [
    ...(st.restores || []).map((r) => ({ kind: "restoring", testid: "restore-row", topic: r.topic, partition: r.partition, lag: r.remaining })),
    ...(st.standbys || []).map((s) => ({ kind: s.warmup ? "warm-up copy" : "standby copy", testid: "standby-row", topic: s.changelog, partition: s.partition, lag: s.lag, offset: s.position })),
  ];
  for (const x of extra) {
    const tr = document.createElement("tr");
    tr.dataset.testid = x.testid;
    tr.dataset.partition = x.partition;
    cell(tr, x.kind, "muted");
    cell(tr, `${x.topic}/${x.partition}`, "mono");
    cell(tr, x.offset === undefined || x.offset < 0 ? "–" : fmt.format(x.offset), "num");
    const lag = cell(tr, fmt.format(x.lag), "num");
    if (x.lag > 0) lag.classList.add("lagging");
    for (let i = 0; i < 4; i++) cell(tr, "", "num");
    body.appendChild(tr);
  }
  if (!body.children.length) {
    const tr = document.createElement("tr");
    const td = cell(tr, "no tasks on this node yet", "empty");
    td.colSpan = 8;
    body.appendChild(tr);
  }
  $("partitions").tBodies[0].replaceWith(body);
}

async function loadFunctions(st) {
  try {
    const body = await get("functions?pipeline=" + encodeURIComponent(st.pipeline));
    state.functions = body.functions || [];
    state.functionsErr = "";
  } catch (err) {
    state.functionsErr = err.message;
  }
  drawFunctions();
}

function pill(text, cls) {
  const s = document.createElement("span");
  s.className = "pill" + (cls ? " " + cls : "");
  s.textContent = text;
  return s;
}

function drawFunctions() {
  const box = document.createElement("div");
  box.id = "functions";
  box.dataset.testid = "functions";
  const st = state.status;
  if (state.functionsErr && !state.functions) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = state.functionsErr;
    box.appendChild(p);
  }
  const byStep = {};
  for (const f of state.functions || []) byStep[f.step] = f;
  for (const s of (st && st.steps) || []) {
    const f = byStep[s.name];
    const history = f ? f.history || [] : [];
    // No function: a key_by, a branch without one, a named output.
    if ((s.kind === "key_by" || s.kind === "output") && !history.length) continue;
    const d = document.createElement("div");
    d.className = "fn";
    d.dataset.testid = "function";
    d.dataset.step = s.name;
    const head = document.createElement("div");
    head.className = "fn-head";
    const name = document.createElement("span");
    name.className = "fn-name";
    name.textContent = s.name;
    head.appendChild(name);
    head.appendChild(pill(s.kind, "plain"));
    const live = pill(s.version ? "live v" + s.version : "live v0 · pipeline file");
    live.dataset.testid = "live-version";
    head.appendChild(live);
    if (s.staged) head.appendChild(pill(`v${s.staged} at next commit`, "staged"));
    if (s.shadow) head.appendChild(pill(`shadow v${s.shadow}`, "shadow"));
    if (s.digest) {
      const dg = document.createElement("span");
      dg.className = "mono muted";
      dg.textContent = "sha256:" + s.digest.slice(0, 12);
      head.appendChild(dg);
    }
    const liveEv = f && f.live;
    if (liveEv && (liveEv.name || liveEv.function_version)) {
      const m = document.createElement("span");
      m.className = "muted small";
      m.textContent = [liveEv.name, liveEv.function_version].filter(Boolean).join(" ");
      head.appendChild(m);
    }
    d.appendChild(head);
    if (history.length) {
      const t = document.createElement("table");
      t.className = "grid";
      const th = t.createTHead().insertRow();
      for (const h of ["time (UTC)", "version", "action", "digest", "note"]) {
        const c = document.createElement("th");
        c.textContent = h;
        th.appendChild(c);
      }
      const tb = t.createTBody();
      for (const ev of history.slice(-8).reverse()) {
        const tr = tb.insertRow();
        tr.dataset.testid = "history-row";
        if (liveEv && ev.version === liveEv.version) tr.className = "live";
        cell(tr, ev.time ? utc(Date.parse(ev.time)).slice(0, 19) : "–", "mono");
        cell(tr, "v" + ev.version + (ev.target ? ` → v${ev.target}` : ""));
        cell(tr, ev.action);
        cell(tr, ev.digest ? ev.digest.slice(0, 12) : "–", "mono");
        const note = cell(tr, ev.note || "", "note");
        if (ev.node) note.title = "by node " + ev.node;
      }
      if (history.length > 8) {
        const tr = tb.insertRow();
        const td = cell(tr, `${history.length - 8} older events: GET /v1/functions/${encodeURIComponent(f.pipeline)}/${encodeURIComponent(f.step)}`, "muted");
        td.colSpan = 5;
      }
      d.appendChild(t);
    } else {
      const p = document.createElement("p");
      p.className = "muted";
      p.textContent = state.functionsErr || "the pipeline file's module; no deploys yet";
      d.appendChild(p);
    }
    box.appendChild(d);
  }
  if (!box.children.length) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = "no functions";
    box.appendChild(p);
  }
  $("functions").replaceWith(box);
}

async function poll() {
  try {
    const st = await get("status");
    state.status = st;
    update(st);
    setConn("ok", "live");
  } catch (err) {
    if (err instanceof APIError && /unavailable|starting/.test(err.message)) setConn("wait", err.message + " · retrying");
    else if (err instanceof NetError) setConn("bad", "unreachable: " + err.message + " · retrying");
    else setConn("bad", err.message);
    state.prev = null; // a gap: no rate across it
  }
  $("updated").textContent = state.status ? "updated " + utc(Date.now(), true) + " UTC" : "no status yet";
  setTimeout(poll, POLL_MS);
}

window.addEventListener("resize", () => drawCharts(Date.now()));

// Until the first status: empty charts and a note where the graph goes.
{
  const g = $("graph");
  g.setAttribute("viewBox", "0 0 400 60");
  g.setAttribute("width", 400);
  g.setAttribute("height", 60);
  const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
  t.setAttribute("x", 200);
  t.setAttribute("y", 34);
  t.setAttribute("text-anchor", "middle");
  t.setAttribute("class", "sub");
  t.textContent = "waiting for the node's status…";
  g.appendChild(t);
}
drawCharts(Date.now());
poll();
