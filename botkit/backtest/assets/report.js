// The interactive backtest report (botkit/backtest/report_page.py writes the data block).
// Lightweight Charts draws the panes on one time axis; the tables are paged here.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  // the tables come by column (report_page._pack): back to one array per row
  const unpack = (p) => {
    const cols = p.c.map((c, j) => {
      if (p.k[j] === "k") return c.i.map((i) => c.d[i]);
      if (p.k[j] === "t") { let at = 0; return c.map((x) => (at += x)); }
      return c;
    });
    const rows = new Array(p.n);
    for (let r = 0; r < p.n; r++) rows[r] = cols.map((col) => col[r]);
    return rows;
  };
  D.fills = unpack(D.fills);
  D.orders = unpack(D.orders);
  D.trades = unpack(D.trades);
  const LC = window.LightweightCharts;
  const VISIBLE = D.visible;
  const PAGE = 50;
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  const LINE_COLORS = ["#e6a100", "#7b3fbf", "#008b8b", "#c2185b", "#5d7f00", "#0057b8"];

  const iso = (ms) => new Date(ms).toISOString().replace(".000Z", "Z");
  const ruleColor = (i) => PALETTE[i % PALETTE.length];
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  const fmtDur = (ms) => {
    let s = Math.round(ms / 1000);
    const d = Math.floor(s / 86400); s -= d * 86400;
    const h = Math.floor(s / 3600); s -= h * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    const parts = [];
    if (d) parts.push(d + "d");
    if (h) parts.push(h + "h");
    if (m) parts.push(m + "m");
    if (s || !parts.length) parts.push(s + "s");
    return parts.slice(0, 2).join(" ");
  };
  const fmtWidth = (s) => s % 604800 === 0 ? s / 604800 + "w" : s % 86400 === 0 ? s / 86400 + "d"
    : s % 3600 === 0 ? s / 3600 + "h" : s % 60 === 0 ? s / 60 + "m" : s + "s";
  // first index i with arr[i] >= x (arr sorted)
  const lowerBound = (arr, x, key) => {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (key(arr[mid]) < x) lo = mid + 1; else hi = mid; }
    return lo;
  };

  document.getElementById("summary").textContent = D.summary;
  const orderByClOrdId = new Map();
  D.orders.forEach((o, i) => { if (!orderByClOrdId.has(o[2])) orderByClOrdId.set(o[2], i); });

  // ---- chart -------------------------------------------------------------------------------
  const box = document.getElementById("chart");
  const chart = LC.createChart(box, {
    autoSize: true,
    layout: { background: { color: "#ffffff" }, textColor: "#1d2733", fontSize: 11 },
    grid: { vertLines: { color: "#eef1f4" }, horzLines: { color: "#eef1f4" } },
    timeScale: { timeVisible: true, secondsVisible: false, rightOffset: 2 },
    crosshair: { mode: 0 },
  });
  const candles = chart.addSeries(LC.CandlestickSeries, {
    upColor: "#26a69a", downColor: "#ef5350", borderVisible: false,
    wickUpColor: "#26a69a", wickDownColor: "#ef5350", title: D.symbol,
  }, 0);
  const markers = LC.createSeriesMarkers(candles, []);
  const overlays = [];
  const oscillators = [];
  let pane = 1;
  D.indicators.forEach((ind, i) => {
    const color = LINE_COLORS[i % LINE_COLORS.length];
    const opts = { color, lineWidth: 1, title: ind.overlay ? "" : ind.label, priceLineVisible: false, lastValueVisible: false };
    if (ind.overlay) overlays.push({ ind, series: chart.addSeries(LC.LineSeries, opts, 0) });
    else oscillators.push({ ind, series: chart.addSeries(LC.LineSeries, opts, pane++) });
  });
  const posPane = pane, eqPane = pane + 1, ddPane = pane + 2;
  const position = chart.addSeries(LC.LineSeries, { color: "#455a64", lineWidth: 1, lineType: 1, title: "position", priceLineVisible: false }, posPane);
  const equity = chart.addSeries(LC.LineSeries, { color: "#2c5d8f", lineWidth: 1, title: "equity " + D.currency, priceLineVisible: false }, eqPane);
  const drawdown = chart.addSeries(LC.BaselineSeries, {
    baseValue: { type: "price", price: 0 }, topLineColor: "#d73027", bottomLineColor: "#d73027",
    bottomFillColor1: "rgba(215,48,39,0.35)", bottomFillColor2: "rgba(215,48,39,0.35)",
    topFillColor1: "rgba(0,0,0,0)", topFillColor2: "rgba(0,0,0,0)", lineWidth: 1, title: "drawdown %",
    priceLineVisible: false,
  }, ddPane);
  const panes = chart.panes();
  panes[0].setStretchFactor(3);
  for (let i = 1; i < panes.length; i++) panes[i].setStretchFactor(i < posPane ? 0.8 : 1);
  document.getElementById("pane-names").textContent =
    [...oscillators.map((o) => o.ind.label), "position (net contracts)", "equity", "drawdown (% below the peak)"].join(", ");

  const legend = document.getElementById("legend");
  legend.innerHTML = D.rules.map((r, i) => `<span><i style="background:${ruleColor(i)}"></i>${esc(r)}</span>`).join("")
    + overlays.concat(oscillators).map((o) => `<span><i style="background:${o.series.options().color}"></i>${esc(o.ind.label)}</span>`).join("");
  const notes = document.getElementById("notes");
  notes.innerHTML = D.notes.map((n) => `<li>${esc(n)}</li>`).join("");

  let current = -1;
  let selected = new Set();  // fill indexes of the selected trade
  const thinCache = new Map();

  function thin(points, w) {  // one point per bucket of the level (the last)
    const out = [];
    for (const [t, v] of points) {
      const k = t - (t % w);
      if (out.length && out[out.length - 1].time === k) out[out.length - 1].value = v;
      else out.push({ time: k, value: v });
    }
    return out;
  }

  function buildMarkers(L) {
    const w = L.w;
    const groups = new Map();
    D.fills.forEach((f, i) => {
      if (f[9] !== D.symbol) return;  // a portfolio's account page: the chart is one symbol's
      const t = Math.floor(f[0] / 1000);
      const k = t - (t % w);
      const sel = selected.has(i);
      const key = k + "|" + f[3] + "|" + f[1] + "|" + (sel ? 1 : 0);
      let g = groups.get(key);
      if (!g) { g = { time: k, side: f[3], rule: f[1], n: 0, pxq: 0, q: 0, sel }; groups.set(key, g); }
      const q = Number(f[5]);
      g.n += 1; g.pxq += Number(f[4]) * q; g.q += q;
    });
    // at the file's own candles a marker sits at its fill's price; on wider candles (each
    // covering many fills) under (buys) and over (sells) the candle, so the price stays visible
    const exact = w <= D.interval;
    const out = [];
    for (const g of groups.values()) {
      const buy = g.side.toUpperCase() === "BUY";
      out.push({
        time: g.time,
        position: exact ? (buy ? "atPriceTop" : "atPriceBottom") : (buy ? "belowBar" : "aboveBar"),
        price: g.q ? g.pxq / g.q : 0,
        shape: g.sel ? "circle" : buy ? "arrowUp" : "arrowDown",
        color: g.sel ? "#000000" : ruleColor(g.rule),
        size: g.sel ? 1.4 : 0.8,
      });
    }
    out.sort((a, b) => a.time - b.time || (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    return out;
  }

  function setLevel(i, range) {
    current = i;
    const L = D.levels[i];
    const n = L.t.length;
    const bars = new Array(n), eq = new Array(n), dd = new Array(n), pos = new Array(n);
    for (let j = 0; j < n; j++) {
      const time = L.t[j];
      bars[j] = { time, open: L.o[j], high: L.h[j], low: L.l[j], close: L.c[j] };
      eq[j] = { time, value: L.eq[j] };
      dd[j] = { time, value: L.dd[j] };
      pos[j] = { time, value: L.pos[j] };
    }
    candles.setData(bars);
    equity.setData(eq);
    drawdown.setData(dd);
    position.setData(pos);
    for (const o of overlays.concat(oscillators)) {
      const key = o.ind.label + "@" + L.w;
      if (!thinCache.has(key)) thinCache.set(key, thin(o.ind.points, L.w));
      o.series.setData(thinCache.get(key));
    }
    markers.setMarkers(buildMarkers(L));
    document.getElementById("level").textContent = `candles of ${fmtWidth(L.w)} (${n.toLocaleString("en")} at this level; `
      + (i > 0 ? `zoom in for finer ones, down to ${fmtWidth(D.levels[0].w)})` : "the finest kept)");
    if (range) chart.timeScale().setVisibleRange(range);
  }

  function wanted(span) {  // the finest level with at most VISIBLE candles in span seconds
    for (let i = 0; i < D.levels.length; i++) if (span / D.levels[i].w <= VISIBLE) return i;
    return D.levels.length - 1;
  }

  let switching = false;
  let pending = false;
  function checkLevel() {
    pending = false;
    const range = chart.timeScale().getVisibleRange();
    if (!range || switching) return;
    const span = range.to - range.from;
    const count = span / D.levels[current].w;
    const target = wanted(span);
    if ((count > VISIBLE * 2 && target > current) || (count < VISIBLE / 8 && target < current)) {
      switching = true;
      try { setLevel(target, range); } finally { switching = false; }
    }
  }
  chart.timeScale().subscribeVisibleTimeRangeChange(() => {
    if (switching || pending) return;
    pending = true;
    requestAnimationFrame(checkLevel);
  });

  function fitAll() {
    const L0 = D.levels[0];
    if (!L0.t.length) { setLevel(0); return; }
    const span = L0.t[L0.t.length - 1] + L0.w - L0.t[0];
    switching = true;
    try { setLevel(wanted(span)); chart.timeScale().fitContent(); } finally { switching = false; }
  }
  document.getElementById("fit").addEventListener("click", fitAll);

  function showRange(fromMs, toMs) {
    const pad = Math.max((toMs - fromMs) * 0.25, D.interval * 1000 * 30);
    const from = Math.floor((fromMs - pad) / 1000), to = Math.ceil((toMs + pad) / 1000);
    switching = true;
    try { setLevel(wanted(to - from), { from, to }); } finally { switching = false; }
  }

  // ---- hover ---------------------------------------------------------------------------------
  const tip = document.getElementById("tip");
  chart.subscribeCrosshairMove((param) => {
    if (!param.time || !param.point || current < 0) { tip.hidden = true; return; }
    const L = D.levels[current];
    const t = param.time;
    const j = lowerBound(L.t, t, (x) => x);
    if (j >= L.t.length || L.t[j] !== t) { tip.hidden = true; return; }
    const from = lowerBound(D.fills, t * 1000, (f) => f[0]);
    const to = lowerBound(D.fills, (t + L.w) * 1000, (f) => f[0]);
    const here = [];
    for (let i = from; i < to; i++) if (D.fills[i][9] === D.symbol) here.push(i);
    const a = 0, b = here.length;
    let html = `<b>${iso(t * 1000)}</b> (${fmtWidth(L.w)}) O ${L.o[j]} H ${L.h[j]} L ${L.l[j]} C ${L.c[j]}<br>`
      + `position ${L.pos[j]} · equity ${L.eq[j]} · drawdown ${L.dd[j]} %`;
    if (b > a) {
      html += `<br><b>${b - a} fill${b - a > 1 ? "s" : ""}</b><table>`;
      for (let i = a; i < Math.min(b, a + 8); i++) {
        const f = D.fills[here[i]];
        const oi = orderByClOrdId.get(f[2]);
        const o = oi === undefined ? null : D.orders[oi];
        html += `<tr><td style="color:${ruleColor(f[1])}">■ ${esc(D.rules[f[1]])}</td><td>${esc(f[3])} ${esc(f[5])} @ ${esc(f[4])}</td>`
          + `<td>fee ${esc(f[6])} ${esc(f[7])}</td></tr><tr><td colspan="3" class="muted">${iso(f[0])} · order ${esc(f[2])}`
          + (o ? ` · ${esc(o[4])} ${esc(o[3])} ${esc(o[6])} @ ${esc(o[5] || "market")} placed ${iso(o[0])} (${esc(o[7])})` : "")
          + `</td></tr>`;
      }
      html += "</table>";
      if (b - a > 8) html += `<span class="muted">and ${b - a - 8} more (fill list)</span>`;
    }
    tip.innerHTML = html;
    tip.hidden = false;
    const bw = box.clientWidth;
    const x = param.point.x + 16;
    tip.style.left = (x + 470 > bw ? Math.max(0, param.point.x - 486) : x) + "px";
    tip.style.top = Math.max(0, param.point.y - 10) + "px";
  });

  // ---- tables --------------------------------------------------------------------------------
  function makeTable(el, columns, rows, opts) {
    const state = { sort: null, dir: 1, filter: "", only: null, page: 0, order: null };
    el.innerHTML = `<div class="tools"><input type="search" placeholder="filter: any text of a row">`
      + `<span class="chip" hidden></span><button type="button" class="all" hidden>show all</button>`
      + `<span class="count muted"></span><button type="button" class="first">«</button><button type="button" class="prev">‹</button>`
      + `<span class="pageno"></span><button type="button" class="next">›</button><button type="button" class="last">»</button></div>`
      + `<table><thead><tr>${columns.map((c) => `<th>${esc(c.name)}</th>`).join("")}</tr></thead><tbody></tbody></table>`;
    const input = el.querySelector("input"), tbody = el.querySelector("tbody");
    const chip = el.querySelector(".chip"), all = el.querySelector(".all");
    const ths = [...el.querySelectorAll("th")];
    let text = null;
    const rowText = (i) => {
      if (!text) text = rows.map((r) => columns.map((c) => c.show(r)).join(" ").toLowerCase());
      return text[i];
    };
    function compute() {
      let idx = state.only ? state.only.slice() : rows.map((_, i) => i);
      const words = state.filter.toLowerCase().split(/\s+/).filter(Boolean);
      if (words.length) idx = idx.filter((i) => words.every((w) => rowText(i).includes(w)));
      if (state.sort !== null) {
        const c = columns[state.sort], dir = state.dir;
        idx.sort((a, b) => {
          const x = c.key(rows[a]), y = c.key(rows[b]);
          return (x < y ? -dir : x > y ? dir : 0) || a - b;
        });
      }
      state.order = idx;
    }
    function render() {
      const idx = state.order;
      const pages = Math.max(1, Math.ceil(idx.length / PAGE));
      state.page = Math.min(Math.max(0, state.page), pages - 1);
      const start = state.page * PAGE;
      const shown = idx.slice(start, start + PAGE);
      tbody.innerHTML = shown.map((i) => `<tr data-row="${i}"${opts.click ? ' class="click"' : ""}>`
        + columns.map((c) => `<td${c.num ? ' class="n"' : ""}>${esc(c.show(rows[i]))}</td>`).join("") + "</tr>").join("");
      el.querySelector(".count").textContent = idx.length
        ? `rows ${(start + 1).toLocaleString("en")}–${(start + shown.length).toLocaleString("en")} of ${idx.length.toLocaleString("en")}`
          + (idx.length < rows.length ? ` (of ${rows.length.toLocaleString("en")})` : "")
        : `no row of ${rows.length.toLocaleString("en")}`;
      el.querySelector(".pageno").textContent = `page ${state.page + 1} / ${pages}`;
      ths.forEach((th, k) => { th.className = state.sort === k ? (state.dir > 0 ? "asc" : "desc") : ""; });
      if (opts.mark) tbody.querySelectorAll("tr").forEach((tr) => { if (opts.mark(+tr.dataset.row)) tr.classList.add("sel"); });
    }
    const update = () => { compute(); render(); };
    input.addEventListener("input", () => { state.filter = input.value; state.page = 0; update(); });
    ths.forEach((th, k) => th.addEventListener("click", () => {
      if (state.sort === k) state.dir = -state.dir; else { state.sort = k; state.dir = 1; }
      update();
    }));
    el.querySelector(".first").addEventListener("click", () => { state.page = 0; render(); });
    el.querySelector(".prev").addEventListener("click", () => { state.page -= 1; render(); });
    el.querySelector(".next").addEventListener("click", () => { state.page += 1; render(); });
    el.querySelector(".last").addEventListener("click", () => { state.page = 1e9; render(); });
    all.addEventListener("click", () => api.restrict(null, ""));
    if (opts.click) tbody.addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) opts.click(+tr.dataset.row);
    });
    const api = {
      restrict(only, label) {
        state.only = only; state.page = 0;
        chip.hidden = all.hidden = !only; chip.textContent = label;
        update();
      },
      refresh: render,
      visibleRows: () => [...tbody.querySelectorAll("tr")].map((tr) => +tr.dataset.row),
    };
    update();
    return api;
  }

  const num = (i) => (r) => Number(r[i]);
  const str = (i) => (r) => String(r[i]);
  const T = D.trades;
  let selectedTrade = -1;
  const fillsTable = makeTable(document.getElementById("fills"), [
    { name: "time", show: (r) => iso(r[0]), key: num(0) },
    { name: "rule", show: (r) => D.rules[r[1]], key: (r) => D.rules[r[1]] },
    { name: "clOrdId", show: str(2), key: str(2) },
    { name: "side", show: str(3), key: str(3) },
    { name: "px", show: str(4), key: num(4), num: true },
    { name: "qty", show: str(5), key: num(5), num: true },
    { name: "fee", show: str(6), key: num(6), num: true },
    { name: "role", show: str(7), key: str(7) },
    { name: "posSide", show: str(8), key: str(8) },
    { name: "symbol", show: str(9), key: str(9) },
  ], D.fills, {
    click: (i) => showRange(D.fills[i][0], D.fills[i][0]),
    mark: (i) => selected.has(i),
  });
  const tradesTable = makeTable(document.getElementById("trades"), [
    { name: "#", show: str(0), key: num(0), num: true },
    { name: "side", show: str(1), key: str(1) },
    { name: "status", show: str(2), key: str(2) },
    { name: "opened by", show: str(3), key: str(3) },
    { name: "closed by", show: (r) => r[4] || "-", key: str(4) },
    { name: "entry", show: (r) => iso(r[5]), key: num(5) },
    { name: "exit", show: (r) => iso(r[6]), key: num(6) },
    { name: "holding", show: (r) => fmtDur(r[6] - r[5]), key: (r) => r[6] - r[5], num: true },
    { name: "qty", show: str(7), key: num(7), num: true },
    { name: "entry px", show: str(8), key: num(8), num: true },
    { name: "exit px", show: str(9), key: num(9), num: true },
    { name: "fills", show: str(10), key: num(10), num: true },
    { name: "fees", show: str(11), key: num(11), num: true },
    { name: "net PnL", show: str(12), key: num(12), num: true },
    { name: "symbol", show: str(14), key: str(14) },
  ], T, {
    click: (i) => selectTrade(i),
    mark: (i) => i === selectedTrade,
  });
  makeTable(document.getElementById("orders"), [
    { name: "time", show: (r) => iso(r[0]), key: num(0) },
    { name: "rule", show: (r) => D.rules[r[1]], key: (r) => D.rules[r[1]] },
    { name: "clOrdId", show: str(2), key: str(2) },
    { name: "side", show: str(3), key: str(3) },
    { name: "type", show: str(4), key: str(4) },
    { name: "px", show: str(5), key: num(5), num: true },
    { name: "sz", show: str(6), key: num(6), num: true },
    { name: "outcome", show: str(7), key: str(7) },
    { name: "code / reasons", show: str(8), key: str(8) },
  ], D.orders, { click: (i) => showRange(D.orders[i][0], D.orders[i][0]) });
  document.getElementById("trades-title").textContent = `Trades (${T.length.toLocaleString("en")})`;
  document.getElementById("fills-title").textContent = `Fills (${D.fills.length.toLocaleString("en")})`;
  document.getElementById("orders-title").textContent = `Orders (${D.orders.length.toLocaleString("en")})`;

  function selectTrade(i) {
    selectedTrade = i;
    const own = D.tradeFills[i] || [];
    selected = new Set(own);
    fillsTable.restrict(own.slice(), `the ${own.length} fill${own.length === 1 ? "" : "s"} of trade #${T[i][0]}`);
    tradesTable.refresh();
    showRange(T[i][5], T[i][6]);
    document.getElementById("fills-title").scrollIntoView({ block: "nearest" });
  }

  fitAll();
  window.botkitReport = {
    chart,
    level: () => D.levels[current].w,
    levels: () => D.levels.map((L) => L.w),
    visibleRange: () => chart.timeScale().getVisibleRange(),
    selectTrade,
    fillRows: () => fillsTable.visibleRows(),
    tradeFills: (i) => D.tradeFills[i],
    markers: () => markers.markers(),
    trade: (i) => ({ number: T[i][0], entry_ms: T[i][5], exit_ms: T[i][6] }),
    fill: (i) => {
      const w = D.levels[current].w, t = Math.floor(D.fills[i][0] / 1000);
      return { clOrdId: D.fills[i][2], time_ms: D.fills[i][0], bucket: t - (t % w) };
    },
    count: (name) => ({ orders: D.orders.length, fills: D.fills.length, trades: T.length })[name],
  };
})();
