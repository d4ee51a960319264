// botkit serve's dashboard: polls the JSON API (/api/...) and draws what it answers.
//
// Safety: every value from the API reaches the page as text (textContent), never as HTML.
// The bearer token the operator types is kept in sessionStorage (this tab only, gone when it
// closes) and sent as "Authorization: Bearer ..."; control requests also carry the CSRF header
// the API asks for (X-Botkit-Csrf) and a JSON body. Nothing is loaded from another site.
import uPlot from "uplot";

const TOKEN_KEY = "botkit.token";
const CSRF_HEADER = "X-Botkit-Csrf";
const params = new URLSearchParams(window.location.search);
// ?poll=MS sets the refresh interval (tests use a short one); 250 ms at the least.
const POLL_MS = Math.max(250, Number(params.get("poll")) || 2000);
const FEED_ROWS = 50;

// Every endpoint the page reads on each refresh (bench/bench_dashboard.py polls the same list).
const ENDPOINTS = {
  health: "/api/health",
  controls: "/api/controls",
  strategies: "/api/strategies",
  positions: "/api/positions",
  equity: "/api/equity",
  openOrders: "/api/orders",
  decisions: "/api/decisions",
  events: "/api/events",
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function text(value) {
  if (value === undefined || value === null || value === "") return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function when(ms) {
  if (ms === undefined || ms === null) return "—";
  const d = new Date(typeof ms === "number" ? ms : Date.parse(ms));
  if (Number.isNaN(d.getTime())) return String(ms);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function signed(value) {
  const n = Number(value);
  if (!Number.isFinite(n) || n === 0) return "";
  return n > 0 ? "pos" : "neg";
}

function list(body, ...keys) {
  if (Array.isArray(body)) return body;
  for (const key of keys) {
    if (body && Array.isArray(body[key])) return body[key];
  }
  return [];
}

// --- the API --------------------------------------------------------------------------------

class Unauthorized extends Error {}

function token() {
  return window.sessionStorage.getItem(TOKEN_KEY) || "";
}

async function call(path, options = {}) {
  const headers = { Accept: "application/json", ...(options.headers || {}) };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const answer = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body,
    cache: "no-store",
    credentials: "omit",
  });
  if (answer.status === 401) throw new Unauthorized("the token was refused");
  let body = null;
  try {
    body = await answer.json();
  } catch {
    body = null;
  }
  if (!answer.ok) {
    const why = body && body.error ? body.error : `HTTP ${answer.status}`;
    const error = new Error(why);
    error.status = answer.status;
    throw error;
  }
  return body;
}

async function control(path, payload) {
  return call(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", [CSRF_HEADER]: "1" },
    body: JSON.stringify(payload || {}),
  });
}

// --- rendering --------------------------------------------------------------------------------

function table(target, columns, rows, emptyText) {
  const host = $(target);
  if (!rows.length) {
    host.replaceChildren(el("p", { class: "empty" }, emptyText));
    return;
  }
  const head = el("tr", null, columns.map((c) => el("th", null, c.label)));
  const body = rows.map((row) =>
    row.group
      ? el("tr", { class: "group" }, el("td", { colspan: columns.length }, row.group))
      : el(
          "tr",
          row.attrs || null,
          columns.map((c) => {
            const value = c.value(row);
            const cls = [c.num ? "num" : "", c.sign ? signed(value) : ""].join(" ").trim();
            return el("td", { class: cls || null }, value instanceof Node ? value : text(value));
          }),
        ),
  );
  host.replaceChildren(el("div", { class: "scroll" }, el("table", null, el("thead", null, head), el("tbody", null, body))));
}

function renderHealth(h) {
  const badge = $("health");
  const engaged = h.kill_switch || h.halt;
  badge.textContent = h.healthy ? "healthy" : engaged ? "stopped" : "unhealthy";
  badge.className = `badge ${h.healthy ? "ok" : engaged ? "warn" : "bad"}`;
  $("last-cycle").textContent =
    h.last_cycle === null || h.last_cycle === undefined
      ? h.problem || "no cycle yet"
      : `cycle ${h.last_cycle}, ${text(h.last_cycle_age_s)} s ago · ${h.orders_today} orders today · ${h.unsettled} unsettled`;
  const ks = $("kill-state");
  ks.textContent = h.kill_switch ? "kill switch ENGAGED" : h.halt ? "halted" : "kill switch off";
  ks.className = `badge ${h.kill_switch || h.halt ? "bad" : "ok"}`;
  ks.title = h.kill_switch || h.halt || "";
}

function renderControls(c) {
  const ks = c.kill_switch || {};
  const button = $("kill-button");
  button.disabled = Boolean(ks.engaged) || !ks.switchable;
  button.textContent = ks.engaged ? "Kill switch engaged" : "Engage kill switch";
  button.title = ks.engaged
    ? ks.reason || ""
    : ks.switchable
      ? "stop new risk: only reduce-only orders and cancels from the next cycle"
      : "no kill_switch_file is configured (or the setting holds it): set kill_switch_file to switch it from here";
}

function fired(evaluation) {
  if (!evaluation || !Array.isArray(evaluation.rules)) return "—";
  const names = evaluation.rules.filter((r) => r.fired).map((r) => r.rule);
  return `${names.length}/${evaluation.rules.length}${names.length ? ` (${names.join(", ")})` : ""}`;
}

function renderStrategies(body) {
  const rows = list(body, "strategies");
  table(
    "strategies",
    [
      { label: "strategy", value: (s) => s.name },
      { label: "version", value: (s) => (s.version ? String(s.version).slice(0, 12) : s.version) },
      { label: "state", value: (s) => (s.active ? "loaded" : "removed") },
      { label: "last evaluation", value: (s) => when(s.last_evaluation && s.last_evaluation.ts_ms) },
      { label: "rules fired", value: (s) => fired(s.last_evaluation) },
    ],
    rows.filter((s) => s.active !== false),
    "no strategy loaded",
  );
}

function renderPositions(body) {
  const balance = (body && body.balance) || {};
  $("balance").textContent = body ? `equity ${text(balance.eq)} · unrealized ${text(balance.upl)}` : "";
  table(
    "positions",
    [
      { label: "symbol", value: (p) => p.symbol },
      { label: "side", value: (p) => p.pos_side },
      { label: "size", value: (p) => p.qty, num: true },
      { label: "entry", value: (p) => p.avg_px, num: true },
      { label: "mark", value: (p) => p.mark_px, num: true },
      { label: "unrealized", value: (p) => p.upl, num: true, sign: true },
      { label: "realized", value: (p) => p.realized, num: true, sign: true },
    ],
    list(body, "positions"),
    "no open position",
  );
  table(
    "pnl",
    [
      { label: "strategy", value: (p) => p.strategy },
      { label: "symbol", value: (p) => p.symbol },
      { label: "side", value: (p) => p.pos_side },
      { label: "size", value: (p) => p.qty, num: true },
      { label: "realized", value: (p) => p.realized, num: true, sign: true },
      { label: "unrealized", value: (p) => p.unrealized, num: true, sign: true },
      { label: "fees", value: (p) => p.fees, num: true },
      { label: "fills", value: (p) => p.fills, num: true },
    ],
    list(body, "by_strategy"),
    "no open position holds a strategy's fills",
  );
  // what the figures by strategy cover, when short of a position's opening (or still reading)
  const coverage = list(body, "coverage");
  const reading = list(body, "positions").length > 0 && coverage.length === 0;
  const short = reading || coverage.some((c) => c.complete === false);
  $("pnl-note").textContent = body && short ? text(body.by_strategy_from) : "";
}

function renderOpenOrders(body) {
  const orders = list(body, "open");
  const sorted = [...orders].sort((a, b) =>
    `${a.strategy}\u0000${a.rule}`.localeCompare(`${b.strategy}\u0000${b.rule}`),
  );
  const rows = [];
  let last = null;
  for (const o of sorted) {
    const key = o.strategy ? `${o.strategy} · ${o.rule}` : "not owned by a loaded strategy";
    if (key !== last) {
      rows.push({ group: key });
      last = key;
    }
    rows.push(o);
  }
  table(
    "open-orders",
    [
      { label: "symbol", value: (o) => o.symbol },
      { label: "side", value: (o) => o.side },
      { label: "type", value: (o) => o.type },
      { label: "price", value: (o) => o.px ?? o.price, num: true },
      { label: "size", value: (o) => o.sz ?? o.size, num: true },
      { label: "client id", value: (o) => o.cl_ord_id },
    ],
    rows,
    "no open order",
  );
}

const opened = new Set(); // the orders whose explanation the operator opened
const firstSeen = new Map(); // cl_ord_id -> the refresh that first showed it (data-first-refresh)
let feedBody = null;

const histories = new Map(); // cl_ord_id -> the order's journal events (read once, when opened)

function inputs(value) {
  if (!value || typeof value !== "object") return value;
  return Object.entries(value).map(([k, v]) => `${k} = ${typeof v === "object" ? JSON.stringify(v) : v}`).join("\n");
}

// An order's explanation: the rule and what it saw, what it asked for and what rounding made
// of it, why it was refused, and what the exchange said.
function explanation(o) {
  const items = [];
  const add = (k, v) => {
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) return;
    items.push(el("dt", null, k), el("dd", null, Array.isArray(v) ? v.join("\n") : String(v)));
  };
  add("rule", `${o.strategy} · ${o.rule} (cycle ${text(o.cycle_id)})`);
  add("inputs", inputs(o.inputs));
  add("asked", `${o.side} ${o.type} ${text(o.intent_sz)} @ ${text(o.intent_px)}${o.reduce_only ? " reduce-only" : ""}`);
  add("sent", o.sz || o.px ? `${text(o.sz)} @ ${text(o.px)}` : "");
  add("rounding", o.notes);
  add("refused because", o.reasons);
  add("state", o.state);
  add("outcome", [o.outcome, o.code, o.msg, o.error].filter((x) => x !== null && x !== undefined && x !== "").join(" · "));
  add("client order id", o.cl_ord_id);
  add("exchange order id", o.ord_id);
  const history = histories.get(o.cl_ord_id);
  if (history) add("history", history.map((e) => `${when(e.ts_ms)} ${e.kind}: ${e.text}`));
  return el("dl", { class: "kv" }, items);
}

async function loadHistory(id, body) {
  if (histories.has(id)) return;
  try {
    const answer = await call(`/api/orders/${encodeURIComponent(id)}`);
    histories.set(id, list(answer, "history"));
    renderFeed(body);
  } catch {
    // the feed's own row already explains the order; the history is a bonus
  }
}

function renderFeed(body) {
  const orders = list(body, "orders").slice(0, FEED_ROWS);
  feedBody = body;
  const host = $("feed");
  if (!orders.length) {
    host.replaceChildren(el("p", { class: "empty" }, "no order yet"));
    return;
  }
  const cols = ["time", "strategy · rule", "order", "outcome", ""];
  const rows = [];
  for (const o of orders) {
    const id = o.cl_ord_id || String(o.id);
    const isOpen = opened.has(id);
    if (!firstSeen.has(id)) firstSeen.set(id, refreshes + 1);
    const toggle = el(
      "button",
      {
        class: "link",
        "aria-expanded": isOpen ? "true" : "false",
        dataset: { explain: id },
        onclick: () => {
          if (opened.has(id)) opened.delete(id);
          else {
            opened.add(id);
            loadHistory(id, feedBody);
          }
          renderFeed(feedBody);
        },
      },
      isOpen ? "hide" : "why?",
    );
    const outcome = o.outcome || o.state || "";
    rows.push(
      el(
        "tr",
        { dataset: { order: id, firstRefresh: String(firstSeen.get(id)) } },
        el("td", null, when(o.ts_ms)),
        el("td", null, `${text(o.strategy)} · ${text(o.rule)}`),
        el("td", null, `${text(o.side)} ${text(o.sz ?? o.intent_sz)} @ ${text(o.px ?? o.intent_px)} ${text(o.symbol)}`),
        el("td", { class: /reject|fail|refus|error/i.test(outcome) ? "neg" : null }, text(outcome)),
        el("td", null, toggle),
      ),
    );
    if (isOpen) {
      rows.push(el("tr", { class: "explain", dataset: { explanation: id } }, el("td", { colspan: cols.length }, explanation(o))));
    }
  }
  host.replaceChildren(
    el("div", { class: "scroll" }, el("table", null, el("thead", null, el("tr", null, cols.map((c) => el("th", null, c)))), el("tbody", null, rows))),
  );
}

function renderProblems(ordersBody, eventsBody, health) {
  const items = [];
  for (const o of list(ordersBody, "orders")) {
    const outcome = String(o.outcome || "");
    if (/reject|fail|refus/i.test(outcome) || o.error || (o.reasons && o.reasons.length)) {
      const why = o.msg || o.error || (o.reasons || []).join("; ") || outcome;
      items.push({ ts: o.ts_ms, text: `${o.strategy} · ${o.rule}: ${outcome || "refused"} — ${why}` });
    }
  }
  const shown = new Set(list(ordersBody, "orders").map((o) => o.cl_ord_id));
  for (const e of list(eventsBody, "events")) {
    if (e.cl_ord_id && shown.has(e.cl_ord_id)) continue; // its order's line says it
    // refusals, guard trips, failed reads and reloads, stop controls switched
    if (/error|fail|refus|reject|guard|^controls$/i.test(e.kind)) {
      items.push({ ts: e.ts_ms, text: `${e.kind}: ${e.text}` });
    }
  }
  if (health && health.last_error) {
    items.push({ ts: null, text: `cycle ${text(health.last_error_cycle)}: ${health.last_error}` });
  }
  items.sort((a, b) => (b.ts || 0) - (a.ts || 0));
  const host = $("problems");
  if (!items.length) {
    host.replaceChildren(el("p", { class: "empty" }, "no refusal or error"));
    return;
  }
  host.replaceChildren(
    el("ul", { class: "problems" }, items.slice(0, FEED_ROWS).map((i) => el("li", null, el("span", { class: "when" }, when(i.ts)), i.text))),
  );
}

// --- the chart --------------------------------------------------------------------------------

let chart = null;
// The chart draws numbers; the figures themselves (tables) stay the API's exact decimals.
const num = (v) => (v === null || v === undefined ? null : Number(v));

function chartData(body) {
  const points = list(body, "samples");
  return [points.map((p) => p.ts_ms / 1000), points.map((p) => num(p.eq)), points.map((p) => num(p.upl))];
}

function chartWidth() {
  return Math.max(240, $("chart").clientWidth || 300);
}

// The time axis in one row of 24-hour labels (uPlot's default adds a second row with the date,
// whose labels run into each other at phone width); the legend shows the full time.
function timeLabels(_u, splits, _axis, _space, incr) {
  const shape =
    incr < 60
      ? { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }
      : incr < 86400
        ? { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }
        : { month: "short", day: "numeric" };
  return splits.map((s) => new Date(s * 1000).toLocaleString([], shape));
}

// What the time axis shows (position in CSS px, label), on the chart's element: the tests read it.
function noteTicks(u) {
  const axis = u.axes[0];
  const ticks = (axis._splits || []).map((s, i) => [u.valToPos(s, "x"), String(axis._values[i])]);
  u.root.dataset.xTicks = JSON.stringify({ font: axis.font[0], ticks });
}

function chartOptions(width) {
  return {
    width,
    height: 240,
    scales: {
      x: {
        time: true,
        // a single sample would span years: show a minute around it
        range: (_u, min, max) => (max - min < 1 ? [min - 30, max + 30] : [min, max]),
      },
    },
    series: [
      {},
      { label: "equity", stroke: "#2456c5", width: 2, scale: "eq" },
      { label: "unrealized PnL", stroke: "#1b7f3b", width: 1.5, dash: [6, 4], scale: "pnl" },
    ],
    axes: [
      { space: 70, values: timeLabels },
      { scale: "eq", size: 70 },
      { scale: "pnl", side: 1, size: 60, grid: { show: false } },
    ],
    hooks: { draw: [noteTicks] },
  };
}

function renderChart(body) {
  const data = chartData(body);
  if (!chart) {
    chart = new uPlot(chartOptions(chartWidth()), data, $("chart"));
  } else {
    chart.setData(data);
  }
  $("chart-note").textContent = data[0].length ? "" : "no equity figure yet";
}

// The page's chart drawn from any /api/equity answer into another element: the tests draw spans
// the live page has not lived through yet.
window.botkitDashboard = {
  drawChart: (body, host) => new uPlot(chartOptions(host.clientWidth), chartData(body), host),
};

window.addEventListener("resize", () => {
  if (chart) chart.setSize({ width: chartWidth(), height: 240 });
});

// --- refresh loop -------------------------------------------------------------------------------

let timer = null;
let refreshes = 0;
let signedIn = false;

async function get(path) {
  try {
    return { ok: true, body: await call(path) };
  } catch (error) {
    if (error instanceof Unauthorized) throw error;
    return { ok: false, error };
  }
}

async function refresh() {
  const names = Object.keys(ENDPOINTS);
  const answers = await Promise.all(names.map((n) => get(ENDPOINTS[n])));
  const got = Object.fromEntries(names.map((n, i) => [n, answers[i]]));
  const failed = names.filter((n) => !got[n].ok);
  const body = (n) => (got[n].ok ? got[n].body : null);
  if (got.health.ok) renderHealth(body("health"));
  renderStrategies(body("strategies"));
  renderPositions(body("positions"));
  if (got.equity.ok) renderChart(body("equity"));
  if (got.controls.ok) renderControls(body("controls"));
  renderOpenOrders(body("openOrders"));
  renderFeed(body("decisions"));
  renderProblems(body("decisions"), body("events"), body("health"));
  $("status-line").textContent = failed.length
    ? `could not read ${failed.map((n) => `${ENDPOINTS[n]} (${got[n].error.message})`).join(", ")}`
    : "";
  refreshes += 1;
  document.body.dataset.refreshes = String(refreshes);
  $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

async function tick() {
  timer = null;
  if (!signedIn) return;
  try {
    await refresh();
  } catch (error) {
    if (error instanceof Unauthorized) {
      showLogin("the token was refused: enter it again");
      return;
    }
    $("status-line").textContent = `refresh failed: ${error.message}`;
  }
  if (signedIn) timer = window.setTimeout(tick, POLL_MS);
}

function start() {
  signedIn = true;
  $("login").hidden = true;
  $("app").hidden = false;
  if (timer === null) tick();
}

function showLogin(message) {
  signedIn = false;
  if (timer !== null) window.clearTimeout(timer);
  timer = null;
  window.sessionStorage.removeItem(TOKEN_KEY);
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token").focus();
}

// --- controls --------------------------------------------------------------------------------

function wireKillSwitch() {
  const dialog = $("confirm-kill");
  $("kill-button").addEventListener("click", () => {
    $("kill-error").textContent = "";
    dialog.showModal();
  });
  $("kill-cancel").addEventListener("click", () => dialog.close());
  $("kill-confirm").addEventListener("click", async () => {
    const button = $("kill-confirm");
    button.disabled = true;
    try {
      await control("/api/control/kill-switch", { engage: true });
      dialog.close();
      await refresh();
    } catch (error) {
      if (error instanceof Unauthorized) {
        dialog.close();
        showLogin("the token was refused: enter it again");
      } else {
        $("kill-error").textContent = error.message;
      }
    } finally {
      button.disabled = false;
    }
  });
}

function wireLogin() {
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = $("token").value.trim();
    window.sessionStorage.setItem(TOKEN_KEY, value);
    $("token").value = "";
    try {
      await call(ENDPOINTS.health);
      start();
    } catch (error) {
      showLogin(error instanceof Unauthorized ? "that token was refused" : error.message);
    }
  });
  $("logout").addEventListener("click", () => showLogin("signed out"));
}

async function boot() {
  wireLogin();
  wireKillSwitch();
  // Ask for the token first unless this tab kept one: a request without it would only be
  // refused (and every refused request is a console error).
  if (window.sessionStorage.getItem(TOKEN_KEY) === null) {
    showLogin("");
    return;
  }
  try {
    await call(ENDPOINTS.health);
    start();
  } catch (error) {
    showLogin(error instanceof Unauthorized ? "the token was refused: enter it again" : error.message);
  }
}

boot();
