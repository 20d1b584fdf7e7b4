// The web page of raymond serve (docs/serve.md, "The web page").
//
// One page, two views chosen by the address's hash: #/ lists the runs and
// launches new ones, #/runs/ID follows one run live.  Everything shown
// comes from the daemon's API (docs/api.md) with the cookie the login link
// set.  Text from the API is only ever set as textContent, never parsed as
// HTML: a run's output is whatever a model or a script printed.  The one
// exception is the workflow diagram, an SVG the daemon renders with every
// name escaped.
"use strict";

const $ = (id) => document.getElementById(id);

// An element with text and children; `props` are set as properties, so a
// string from the API becomes text, not markup.
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k.startsWith("data-") || k.startsWith("aria-") || k === "for") e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

// ------------------------------------------------------------------ the API

class ApiError extends Error {
  constructor(status, message, hint) {
    super(message);
    this.status = status;
    this.hint = hint || "";
  }
}

// A request to the daemon: its JSON answer, or an ApiError carrying the
// {error, hint} the daemon answered with.
async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw new ApiError(0, "raymond serve cannot be reached", "is it still running? Start it again and reload");
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, (data && data.error) || `${res.status} ${res.statusText}`, data && data.hint);
  return data;
}

// ------------------------------------------------------------------ notices

// The notice says what went wrong.  `source` names what showed it, so a
// later success of the same kind (a refresh) can take it away again while
// an error of a button the user pressed stays until the next action.
let noticeSource = null;

function showError(err, source) {
  noticeSource = source;
  if (err.status === 401) {
    $("notice-text").textContent = "You are not logged in.";
    $("notice-hint").textContent = "Open the login link raymond serve printed when it started " +
      "(\"log in once with: …/login?code=…\"). A link works once; to get a new one, start raymond serve again.";
  } else {
    $("notice-text").textContent = err.message;
    $("notice-hint").textContent = err.hint || "";
  }
  $("notice").hidden = false;
}

function clearNotice(source) {
  if (source && noticeSource !== source) return;
  $("notice").hidden = true;
  noticeSource = null;
}

// ------------------------------------------------------------------ helpers

function usd(x) {
  return "$" + (Number(x) || 0).toFixed(4);
}

function when(iso) {
  const t = el("time", { dateTime: iso || "" });
  t.textContent = iso ? new Date(iso).toLocaleString() : "";
  return t;
}

function basename(path) {
  return String(path || "").replace(/\/+$/, "").split("/").pop();
}

// Run `fn` now and then every `ms` after it finished, until stopped:
// a slow answer never piles requests up.
function every(ms, fn) {
  let timer = null, stopped = false;
  const tick = async () => {
    await fn();
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

function showView(id) {
  for (const v of ["runs-view", "run-view"]) $(v).hidden = v !== id;
}

// ------------------------------------------------------------------ runs list

async function loadWorkflows() {
  const select = $("launch-workflow");
  try {
    const flows = await api("GET", "/api/workflows");
    const chosen = select.value;
    select.replaceChildren(...flows.map((w) => {
      const rel = w.root && w.path.startsWith(w.root + "/") ? w.path.slice(w.root.length + 1) : w.path;
      return el("option", { value: w.path, textContent: `${rel} (${w.kind})` });
    }));
    if (chosen) select.value = chosen;
  } catch (e) {
    showError(e, "workflows");
  }
}

// The rows are kept by run id and updated in place, so a refresh does
// not take the keyboard focus away from a link in the table.
const runRows = new Map();

function runRow(r) {
  let tr = runRows.get(r.id);
  if (!tr) {
    tr = el("tr", {}, el("th", { scope: "row" }, el("a", { href: "#/runs/" + encodeURIComponent(r.id), textContent: r.id })),
      el("td"), el("td"), el("td", { className: "num" }), el("td"), el("td"));
    runRows.set(r.id, tr);
  }
  const c = tr.cells;
  c[1].textContent = r.name || "";
  c[2].textContent = r.status || "";
  c[2].className = "status " + (r.status || "");
  c[3].textContent = r.cost_usd == null ? "" : usd(r.cost_usd);
  c[4].replaceChildren(when(r.created_at));
  c[5].textContent = r.workflow ? basename(r.workflow) : (r.error || "");
  return tr;
}

// The table shows the newest runs only: a project may hold thousands,
// and a page of thousands of rows is slow to draw and to read.
const RUNS_SHOWN = 200;

async function loadRuns() {
  try {
    const all = await api("GET", "/api/runs");
    const runs = all.slice(0, RUNS_SHOWN);
    const body = $("runs").tBodies[0];
    runs.forEach((r, i) => {
      const tr = runRow(r);
      if (body.rows[i] !== tr) body.insertBefore(tr, body.rows[i] || null);
    });
    while (body.rows.length > runs.length) {
      runRows.delete(body.rows[body.rows.length - 1].cells[0].textContent);
      body.deleteRow(-1);
    }
    $("runs-count").textContent = all.length === 0 ? "No runs yet."
      : all.length > runs.length ? `The newest ${runs.length} of ${all.length} runs.` : `${all.length} run${all.length === 1 ? "" : "s"}.`;
    clearNotice("runs");
  } catch (e) {
    showError(e, "runs");
  }
}

function runsPage() {
  showView("runs-view");
  document.title = "Runs - raymond";
  loadWorkflows();
  return every(3000, loadRuns);
}

async function launch(ev) {
  ev.preventDefault();
  const button = ev.submitter || ev.target.querySelector("button");
  const body = { workflow: $("launch-workflow").value, on_ask: $("launch-on-ask").value };
  if ($("launch-input").value) body.input = $("launch-input").value;
  if ($("launch-budget").value !== "") body.budget = Number($("launch-budget").value);
  if ($("launch-name").value) body.name = $("launch-name").value;
  button.disabled = true; // one click, one run
  clearNotice();
  try {
    const r = await api("POST", "/api/runs", body);
    location.hash = "#/runs/" + encodeURIComponent(r.id);
  } catch (e) {
    showError(e, "launch");
  } finally {
    button.disabled = false;
  }
}

// ------------------------------------------------------------------ one run

// The agent whose id `id` extends by "_NAME": a worker's id is its
// parent's id, "_", a stem and a number (main_worker1 under main).
function parentOf(id, ids) {
  let best = null;
  for (const p of ids) {
    if (p !== id && id.startsWith(p + "_") && (!best || p.length > best.length)) best = p;
  }
  return best;
}

// The agent tree, drawn again from `agents` (id -> {state, status}).
// Agents that ended stay, marked so, with their output.
function drawAgents(agents) {
  const ids = [...agents.keys()].sort();
  const items = new Map(ids.map((id) => {
    const a = agents.get(id);
    const li = el("li", { "data-agent": id, className: a.status },
      el("span", { className: "agent-id", textContent: id }), " ",
      el("span", { className: "agent-state", textContent: a.state || "" }), " ",
      el("span", { className: "agent-status", textContent: a.status || "" }));
    return [id, li];
  }));
  const root = $("agents");
  root.replaceChildren();
  for (const id of ids) {
    const parent = items.get(parentOf(id, ids));
    if (!parent) { root.append(items.get(id)); continue; }
    let ul = parent.querySelector(":scope > ul");
    if (!ul) parent.append(ul = el("ul"));
    ul.append(items.get(id));
  }
}

// The states agents are in now, highlighted in the diagram.
function highlight(agents) {
  const now = new Set();
  for (const a of agents.values()) if (a.status !== "ended") now.add(a.state);
  for (const g of $("diagram").querySelectorAll("g.node[data-state]")) {
    g.classList.toggle("current", now.has(g.dataset.state));
  }
}

// One form per pending ask, kept while the ask is pending so an answer
// being typed survives a refresh.
function drawAsks(page, snap) {
  const pending = new Map();
  for (const a of Array.isArray(snap.asks) ? snap.asks : []) pending.set(a.ask_id, { agent: a.agent, prompt: a.prompt });
  const box = $("asks");
  for (const form of [...box.children]) if (!pending.has(form.dataset.askId)) form.remove();
  for (const [askId, a] of pending) {
    if (box.querySelector(`form[data-ask-id="${CSS.escape(askId)}"]`)) continue;
    const field = "answer-" + askId;
    const form = el("form", { className: "ask", "data-ask-id": askId },
      el("p", { className: "prompt", textContent: a.prompt }),
      el("label", { for: field, textContent: `Answer for ${a.agent}` }),
      el("textarea", { id: field, rows: 2, required: true }),
      el("p", {}, el("button", { type: "submit", textContent: "Answer" })));
    form.addEventListener("submit", (ev) => answer(ev, page, askId, field));
    box.append(form);
  }
  $("asks-box").hidden = pending.size === 0;
}

async function answer(ev, page, askId, field) {
  ev.preventDefault();
  const button = ev.submitter || ev.target.querySelector("button");
  button.disabled = true;
  clearNotice();
  try {
    await api("POST", `/api/runs/${encodeURIComponent(page.id)}/answer`, { ask_id: askId, text: $(field).value });
    button.textContent = "Answer sent";
  } catch (e) {
    showError(e, "answer");
    button.disabled = false;
  }
}

// A run's snapshot (GET /api/runs/ID, or a `run` event) shown.
function drawRun(page, snap) {
  const running = snap.running != null ? snap.running : snap.status === "running";
  $("run-status").textContent = snap.status || "";
  $("run-status").className = "status " + (snap.status || "");
  $("run-workflow").textContent = basename(snap.workflow);
  $("run-started").replaceChildren(when(snap.created_at));
  const cost = Number(snap.cost) || 0, budget = Number(snap.budget) || 0; // 0: none
  const meter = $("run-cost-meter");
  meter.hidden = !budget;
  if (budget) {
    meter.max = budget;
    meter.high = budget * 0.8;
    meter.value = Math.min(cost, budget);
  }
  $("run-cost").textContent = budget ? `${usd(cost)} of ${usd(budget)}` : `${usd(cost)} (no budget)`;
  $("run-stop").disabled = !running;
  $("run-resume").disabled = running || !["failed", "stopped", "interrupted"].includes(snap.status);
  const live = new Set();
  for (const a of snap.agents || []) {
    live.add(a.id);
    page.agents.set(a.id, { state: a.state, status: a.status || (running ? "running" : snap.status) });
  }
  for (const [id, a] of page.agents) if (!live.has(id)) a.status = "ended";
  drawAgents(page.agents);
  highlight(page.agents);
  drawAsks(page, snap);
}

// A line of an agent's output, in its own log.  A log keeps its last
// LOG_LINES lines, so a long run cannot grow the page without bound.
const LOG_LINES = 2000;

function outputLine(page, agent, kind, text) {
  let log = page.logs.get(agent);
  if (!log) {
    log = el("pre", { className: "log", tabIndex: 0, "aria-label": `Output of ${agent}` });
    log.setAttribute("role", "log");
    $("output").append(el("section", { className: "agent-output", "data-agent": agent },
      el("h3", { textContent: agent }), log));
    page.logs.set(agent, log);
    $("output-none").hidden = true;
  }
  const lines = String(text).split("\n").map((part) =>
    el("span", { className: "line " + kind }, el("span", { className: "kind", textContent: kind }), " ", part, "\n"));
  log.append(...lines);
  while (log.childNodes.length > LOG_LINES) log.firstChild.remove();
}

// Each event of the stream as a line of its agent's output (hooks'
// decisions and notes in the run's own).
const LINES = {
  step: (d) => d.state + (d.turn ? " (a turn)" : ""),
  output: (d) => String(d.text).replace(/\n$/, ""),
  text: (d) => d.text,
  tool: (d) => `${d.name} ${d.input || ""}`,
  print: (d) => d.text,
  transition: (d) => `${d.from} -> ${d.to}`,
  decision: (d) => d.text,
  note: (d) => d.text,
};

function follow(page) {
  const es = new EventSource(`/api/runs/${encodeURIComponent(page.id)}/events`);
  es.addEventListener("run", (e) => drawRun(page, JSON.parse(e.data)));
  for (const [kind, line] of Object.entries(LINES)) {
    es.addEventListener(kind, (e) => {
      const d = JSON.parse(e.data);
      outputLine(page, d.agent || "run", d.stream === "stderr" ? "stderr" : kind, line(d));
    });
  }
  // EventSource reconnects by itself after a network error, sending the
  // last event's id; it gives up only when the daemon refused the stream
  // (401, 404).  Then the snapshot is polled, which also shows why.
  es.addEventListener("error", () => {
    if (es.readyState === EventSource.CLOSED && !page.poll) page.poll = every(2000, () => refresh(page));
  });
  return es;
}

async function refresh(page) {
  try {
    drawRun(page, await api("GET", `/api/runs/${encodeURIComponent(page.id)}`));
    clearNotice("run");
  } catch (e) {
    showError(e, "run");
  }
}

async function loadDiagram(page) {
  const fig = $("diagram");
  try {
    const d = await api("GET", `/api/runs/${encodeURIComponent(page.id)}/diagram`);
    fig.innerHTML = d.svg; // the daemon's own SVG, every name in it escaped
    highlight(page.agents);
  } catch (e) {
    fig.replaceChildren(el("p", { className: "legend", textContent: "No diagram: " + e.message }));
  }
}

let currentRun = null;

function runPage(id) {
  showView("run-view");
  document.title = `Run ${id} - raymond`;
  $("run-id").textContent = id;
  for (const c of ["agents", "asks", "output", "diagram", "run-status", "run-workflow", "run-cost"]) $(c).replaceChildren();
  $("output-none").hidden = false;
  const page = currentRun = { id, agents: new Map(), logs: new Map(), poll: null };
  refresh(page).then(() => loadDiagram(page));
  const es = follow(page);
  return () => {
    es.close();
    if (page.poll) page.poll();
    currentRun = null;
  };
}

// Stop or resume: the run's next snapshot (a `run` event) shows what
// came of it, whether it comes before or after this answer.
async function control(action) {
  const page = currentRun;
  if (!page) return;
  const button = $("run-" + action);
  button.disabled = true;
  clearNotice();
  try {
    await api("POST", `/api/runs/${encodeURIComponent(page.id)}/${action}`);
  } catch (e) {
    showError(e, action);
    button.disabled = false;
  }
}

// ------------------------------------------------------------------ routing

let leave = null;

function route() {
  if (leave) leave();
  clearNotice();
  const m = location.hash.match(/^#\/runs\/([^/]+)$/);
  leave = m ? runPage(decodeURIComponent(m[1])) : runsPage();
}

// The skip link moves the focus without changing the address, whose
// hash names the view.
$("skip").addEventListener("click", (ev) => { ev.preventDefault(); $("main").focus(); });
$("launch").addEventListener("submit", launch);
$("run-stop").addEventListener("click", () => control("stop"));
$("run-resume").addEventListener("click", () => control("resume"));
// A new view takes the focus, so a keyboard or a screen reader starts
// at its top rather than at a link of the view that is gone.
window.addEventListener("hashchange", () => { route(); $("main").focus(); });
route();
