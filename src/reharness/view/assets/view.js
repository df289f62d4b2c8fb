// reharness view: renders the page's embedded data. State lives in the URL hash
// (#tab=…&code=…&type=…&harness=…&outcome=…&ep=…&cmp=…&pair=…), so every view can be linked and reloaded.
"use strict";
(function () {
  const errorsBox = document.getElementById("errors");
  window.addEventListener("error", (e) => {
    errorsBox.hidden = false;
    errorsBox.textContent += (e.message || String(e)) + "\n";
  });

  const DATA = JSON.parse(document.getElementById("page-data").textContent);
  const ROWS = DATA.rows;
  const C = {};
  DATA.columns.forEach((name, i) => { C[name] = i; });
  const PAGE_SIZE = 100;
  let detailsText = null;
  const detailCache = new Map();

  // ------------------------------------------------------------------ helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const escapeAttr = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const pct = (x) => (100 * x).toFixed(1) + "%";
  const fmt = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(3)) : String(x ?? ""));
  function state() { return Object.fromEntries(new URLSearchParams(location.hash.slice(1))); }
  function link(changes) {
    const s = state();
    for (const [k, v] of Object.entries(changes)) { if (v === null || v === "") delete s[k]; else s[k] = v; }
    return "#" + new URLSearchParams(s).toString();
  }
  function go(changes) { location.hash = link(changes); }
  function detail(row) {
    if (!detailCache.has(row)) {
      if (detailsText === null) detailsText = document.getElementById("episode-details").textContent;
      detailCache.set(row, JSON.parse(detailsText.slice(DATA.offsets[row], DATA.offsets[row + 1])));
    }
    return detailCache.get(row);
  }
  function outcomeOf(r) { return r[C.infra] ? "err" : (r[C.success] ? "ok" : "fail"); }
  function runLabel(r) { return DATA.runs[r[C.run]].label; }

  // ------------------------------------------------------------------ filters
  function filtered(s) {
    return ROWS.map((r, i) => i).filter((i) => {
      const r = ROWS[i];
      return (!s.code || r[C.codes].includes(s.code)) && (!s.type || r[C.type] === s.type)
        && (!s.harness || runLabel(r) === s.harness) && (!s.outcome || outcomeOf(r) === s.outcome);
    });
  }
  function select(id, label, key, values, current) {
    const box = el("select", { id, onchange: (e) => go({ [key]: e.target.value, ep: null, page: null }) },
      el("option", { value: "" }, "all"),
      values.map((v) => el("option", { value: v, selected: v === current }, v)));
    return el("label", {}, label + " ", box);
  }
  function filterBar(s) {
    const uniq = (col) => [...new Set(ROWS.map((r) => r[col]))].sort();
    const codes = [...new Set(ROWS.flatMap((r) => r[C.codes]))].sort();
    return el("div", { class: "filters", id: "filters" },
      select("f-code", "failure code", "code", codes, s.code),
      select("f-type", "task type", "type", uniq(C.type), s.type),
      select("f-harness", "harness", "harness", DATA.runs.map((r) => r.label), s.harness),
      select("f-outcome", "outcome", "outcome", ["ok", "fail", "err"], s.outcome),
      el("a", { href: link({ code: null, type: null, harness: null, outcome: null, ep: null, page: null }) }, "clear"));
  }

  // ------------------------------------------------------------------ run page
  function summary(indices) {
    const n = indices.length || 1;
    const sum = (col) => indices.reduce((a, i) => a + Number(ROWS[i][col]), 0);
    return el("div", { class: "cards", id: "summary" },
      el("div", { class: "card" }, el("b", { id: "n-episodes" }, indices.length), el("span", {}, "episodes")),
      el("div", { class: "card" }, el("b", { id: "success-rate" }, pct(sum(C.success) / n)), el("span", {}, "success")),
      el("div", { class: "card" }, el("b", {}, (sum(C.score) / n).toFixed(3)), el("span", {}, "mean score")),
      el("div", { class: "card" }, el("b", {}, (sum(C.steps) / n).toFixed(1)), el("span", {}, "mean steps")),
      el("div", { class: "card" }, el("b", {}, DATA.runs.length), el("span", {}, "runs")));
  }
  function codeChart(indices, s) {
    const counts = {};
    for (const i of indices) for (const c of ROWS[i][C.codes]) counts[c] = (counts[c] || 0) + 1;
    const codes = Object.keys(counts).sort((a, b) => counts[b] - counts[a] || a.localeCompare(b));
    const top = Math.max(1, ...Object.values(counts));
    if (!codes.length) return el("p", { class: "muted", id: "codes-chart" }, "no failure codes");
    return el("div", { class: "chart", id: "codes-chart" }, codes.map((c) =>
      el("div", { class: "bar-row" + (s.code === c ? " selected" : ""), "data-code": c, title: DATA.all_codes[c] || "",
        onclick: () => go({ code: s.code === c ? null : c, ep: null, page: null }) },
        el("span", {}, c), el("div", { class: "bar", style: `width:${(100 * counts[c]) / top}%` }),
        el("span", { class: "count" }, counts[c]))));
  }
  function grid(indices, s) {
    const box = el("div", { id: "grid" });
    const parts = indices.map((i) => {
      const r = ROWS[i];
      const cur = String(i) === s.ep ? " current" : "";
      const tip = `${r[C.task]} · ${r[C.type]} · ${r[C.termination]} · ${r[C.codes].join(", ")}`;
      return `<div class="cell ${outcomeOf(r)}${cur}" data-row="${i}" title="${escapeAttr(tip)}"></div>`;
    });
    box.innerHTML = parts.join("");  // one assignment: fast for 10,000 cells
    box.addEventListener("click", (e) => { const row = e.target.dataset.row; if (row) go({ ep: row }); });
    return box;
  }
  function episodeTable(indices, s) {
    const shown = Number(s.page || 1) * PAGE_SIZE;
    const table = el("table", { id: "episodes" }, el("tr", {},
      ["#", "run", "task", "type", "outcome", "score", "steps", "termination", "failure codes"].map((h) => el("th", {}, h))));
    for (const i of indices.slice(0, shown)) {
      const r = ROWS[i];
      table.append(el("tr", { class: "clickable episode-row" + (String(i) === s.ep ? " selected" : ""), "data-row": i,
        onclick: () => go({ ep: String(i) }) },
        el("td", {}, r[C.index]), el("td", {}, runLabel(r)), el("td", {}, r[C.task]), el("td", {}, r[C.type]),
        el("td", {}, el("span", { class: "tag " + outcomeOf(r) }, outcomeOf(r))), el("td", {}, fmt(r[C.score])),
        el("td", {}, r[C.steps]), el("td", {}, r[C.termination]),
        el("td", {}, r[C.codes].map((c) => el("span", { class: "tag" }, c))))); 
    }
    const more = indices.length > shown
      ? el("div", { class: "more" }, el("a", { href: link({ page: String(Number(s.page || 1) + 1) }) },
        `show ${Math.min(PAGE_SIZE, indices.length - shown)} more of ${indices.length - shown}`)) : null;
    return el("div", {}, table, more);
  }

  // ------------------------------------------------------------------ one episode
  function effectBox(effect, dropped) {
    const point = effect.point || "?";
    const what = effect.action ?? effect.message ?? effect.text ?? JSON.stringify(effect);
    return el("div", { class: `effect point-${point}` + (dropped ? " dropped" : "") },
      el("b", {}, point), ` ${effect.kind || effect.type || ""}${dropped ? " (dropped)" : ""}: `,
      el("span", { class: "code" }, String(what)), effect.overlay ? el("span", { class: "muted" }, `  ${effect.overlay}`) : null);
  }
  function stepBox(d, step, k, marks) {
    const history = d.steps.slice(Math.max(0, k - 5), k);
    const context = el("details", { class: "context" },
      el("summary", {}, `context shown to the model (digest ${step.ctx || "—"})`),
      el("div", { class: "field" }, el("label", {}, "task"), el("pre", {}, d.instruction)),
      k <= 5 ? el("div", { class: "field" }, el("label", {}, "initial observation"), el("pre", {}, d.initial)) : null,
      history.map((h) => el("div", { class: "field" }, el("label", {}, `step ${h.i}: ${h.action ?? h.parsed ?? "(no action)"}`),
        el("pre", {}, h.obs || ""))));
    const byPoint = {};
    for (const e of step.effects || []) (byPoint[e.point] = byPoint[e.point] || []).push(e);
    const cls = "step" + (marks.diverge === k ? " diverge" : "");
    return el("section", { class: cls, "data-step": step.i },
      el("h4", {}, `step ${step.i} · ${step.src}`, step.replayed ? el("span", { class: "tag" }, "replayed") : null,
        ` · reward ${fmt(step.rew)}`, step.term ? " · terminated" : "", step.trunc ? " · truncated" : "",
        (step.flags || []).map((f) => el("span", { class: "tag flag" }, f)),
        marks.diverge === k ? el("span", { class: "marker" }, "  ◆ first divergence") : null),
      context,
      step.raw !== undefined ? el("div", { class: "field raw" }, el("label", {}, "raw output"), el("pre", {}, step.raw)) : null,
      step.calls ? el("div", { class: "field" }, el("label", {}, "tool calls"), el("pre", {}, JSON.stringify(step.calls, null, 1))) : null,
      step.perr_model ? el("div", { class: "hook-error" }, "model error: " + step.perr_model) : null,
      el("div", { class: "field parsed" }, el("label", {}, "parsed action"),
        el("pre", {}, step.parsed ?? (step.perr ? "parse error: " + step.perr : "—"))),
      Object.entries(byPoint).map(([p, list]) => el("div", { class: "effects", "data-point": p }, list.map((e) => effectBox(e, false)))),
      (step.dropped || []).map((e) => effectBox(e, true)),
      step.action !== undefined && step.action !== step.parsed
        ? el("div", { class: "field action" }, el("label", {}, "executed action"), el("pre", {}, step.action)) : null,
      (step.herr || []).map((h) => el("div", { class: "hook-error" }, `hook error at ${h.point} (${h.overlay}): ${h.error_type}: ${h.message}`)),
      el("div", { class: "field obs" }, el("label", {}, "observation"), el("pre", {}, step.obs || "")));
  }
  function episodeHeader(row) {
    const r = ROWS[row], d = detail(row);
    return el("div", {},
      el("h2", {}, `episode ${r[C.index]} · ${r[C.task]} `, el("span", { class: "tag " + outcomeOf(r) }, outcomeOf(r))),
      el("div", { class: "muted" }, `run ${runLabel(r)} · type ${r[C.type]} · score ${fmt(r[C.score])} · ${r[C.steps]} steps · `
        + `${r[C.termination]} · seed ${d.seed} · harness ${d.harness_id}`),
      r[C.codes].length ? el("div", {}, r[C.codes].map((c) => el("span", { class: "tag fail", title: DATA.all_codes[c] || "" }, c))) : null,
      d.error ? el("div", { class: "hook-error" }, d.error) : null,
      el("div", { class: "field" }, el("label", {}, "task"), el("pre", {}, d.instruction)));
  }
  function episodeView(row) {
    const d = detail(row);
    return el("section", { class: "block", id: "episode", "data-row": row }, episodeHeader(row),
      el("div", { id: "steps" }, d.steps.map((st, k) => stepBox(d, st, k, {}))));
  }

  function runTab(s) {
    const indices = filtered(s);
    const app = el("div", {});
    app.append(el("section", { class: "block" }, el("h2", {}, "summary"), summary(indices)));
    app.append(el("section", { class: "block" }, el("h2", {}, "failure codes"), codeChart(indices, s)));
    app.append(filterBar(s));
    app.append(el("div", { id: "count", class: "muted" }, `${indices.length} of ${ROWS.length} episodes`));
    if (s.ep !== undefined && ROWS[Number(s.ep)]) app.append(episodeView(Number(s.ep)));
    app.append(el("section", { class: "block" }, el("h2", {}, "tasks"), grid(indices, s)));
    app.append(el("section", { class: "block" }, el("h2", {}, "episodes"), episodeTable(indices, s)));
    return app;
  }

  // ------------------------------------------------------------------ paired view (improve)
  const KEYWORDS = /^(def|return|if|elif|else|for|while|in|not|and|or|is|None|True|False|import|from|as|lambda|try|except|finally|with|pass|break|continue|raise|global|yield|class)$/;
  function highlight(code) {
    const pre = el("pre", { class: "code patch-code" });
    const token = /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;
    let last = 0, m;
    while ((m = token.exec(code)) !== null) {
      pre.append(code.slice(last, m.index));
      const cls = m[1] ? "com" : m[2] ? "str" : m[3] ? "num" : KEYWORDS.test(m[4]) ? "kw" : null;
      pre.append(cls ? el("span", { class: cls }, m[0]) : m[0]);
      last = token.lastIndex;
    }
    pre.append(code.slice(last));
    return pre;
  }
  function candidateTable(imp, s) {
    const cols = ["id", "round", "status", "valid", "delta", "rescued", "broken", "accepted", "description"];
    const table = el("table", { id: "candidates" }, el("tr", {}, cols.map((c) => el("th", {}, c))));
    for (const c of imp.candidates) {
      const has = imp.comparisons.some((x) => x.label === c.id);
      table.append(el("tr", { class: "cand" + (has ? " clickable" : "") + (s.cmp === c.id ? " selected" : ""), "data-id": c.id,
        onclick: has ? () => go({ cmp: c.id, pair: null }) : null },
        cols.map((k) => el("td", {}, k === "description" ? String(c[k] || c.reason || "").slice(0, 160) : fmt(c[k])))));
    }
    return table;
  }
  function pairColumn(row, diverge) {
    if (row === null || row === undefined) return [];
    const d = detail(row);
    return d.steps.map((st, k) => stepBox(d, st, k, { diverge }));
  }
  function pairView(cmp, pair) {
    const base = detail(pair.base), patched = detail(pair.patched);
    const n = Math.max(base.steps.length, patched.steps.length);
    const g = el("div", { class: "pair-grid", id: "pair" },
      el("div", { class: "colhead" }, `baseline · ${DATA.runs[ROWS[pair.base][C.run]].label} `, el("span", { class: "tag " + outcomeOf(ROWS[pair.base]) }, outcomeOf(ROWS[pair.base]))),
      el("div", { class: "colhead" }, `patched · ${cmp.label} `, el("span", { class: "tag " + outcomeOf(ROWS[pair.patched]) }, outcomeOf(ROWS[pair.patched]))));
    const left = pairColumn(pair.base, pair.diverge), right = pairColumn(pair.patched, pair.diverge);
    for (let k = 0; k < n; k++) {
      g.append(el("div", { class: "side base" }, left[k] || el("div", { class: "empty" }, "(episode ended)")));
      g.append(el("div", { class: "side patched" }, right[k] || el("div", { class: "empty" }, "(episode ended)")));
    }
    return el("section", { class: "block", id: "pair-view" },
      el("h2", {}, `task ${pair.task} · `, el("span", { class: "tag " + pair.outcome }, pair.outcome),
        pair.diverge === null ? " · identical" : ` · diverges at step ${pair.diverge}`),
      el("div", { class: "field" }, el("label", {}, "task"), el("pre", {}, base.instruction)), g);
  }
  function pairedTab(s) {
    const imp = DATA.improve;
    const app = el("div", {});
    const h = imp.heldout;
    app.append(el("section", { class: "block" }, el("h2", {}, "result"), el("div", { class: "cards" },
      imp.rounds.map((r) => el("div", { class: "card" }, el("b", {}, `${pct(r.baseline_success)}`), el("span", {}, `round ${r.round} baseline · accepted ${r.accepted ?? "none"}`))),
      h ? el("div", { class: "card", id: "heldout" }, el("b", {}, `${pct(h.baseline_success)} → ${pct(h.patched_success)}`),
        el("span", {}, `held-out (${h.n} tasks), Δ ${fmt(h.delta)} [${fmt(h.ci_low)}, ${fmt(h.ci_high)}]`)) : null)));
    app.append(el("section", { class: "block" }, el("h2", {}, "candidates"), candidateTable(imp, s)));
    const cmps = imp.comparisons;
    if (!cmps.length) { app.append(el("p", { class: "muted" }, "no paired runs found")); return app; }
    const cmp = cmps.find((c) => c.label === s.cmp) || cmps.find((c) => c.label === "heldout") || cmps[0];
    app.append(el("nav", { id: "comparisons" }, "comparison: ", cmps.map((c) =>
      el("a", { href: link({ cmp: c.label, pair: null }), class: c === cmp ? "active" : null, "data-label": c.label }, c.label))));
    const patch = imp.patches[cmp.patch];
    if (patch) {
      app.append(el("section", { class: "block", id: "patch" }, el("h2", {}, `patch ${cmp.patch}`),
        el("p", { class: "muted" }, patch.description),
        Object.entries(patch.hooks).map(([point, code]) => el("div", { class: "field" }, el("label", {}, point), highlight(code)))));
    }
    const by = (o) => cmp.pairs.filter((p) => p.outcome === o);
    const taskList = (id, title, list) => el("div", { class: "block" }, el("h2", {}, `${title} (${list.length})`),
      el("ul", { id }, list.map((p) => el("li", {}, el("a", { href: link({ cmp: cmp.label, pair: p.task }) }, p.task)))));
    app.append(el("div", { class: "cards" }, taskList("rescued", "rescued", by("rescued")), taskList("broken", "broken", by("broken"))));
    const table = el("table", { id: "pairs" }, el("tr", {}, ["task", "outcome", "first divergent step"].map((c) => el("th", {}, c))));
    for (const p of cmp.pairs) {
      table.append(el("tr", { class: "clickable pair-row" + (s.pair === p.task ? " selected" : ""), "data-task": p.task,
        onclick: () => go({ cmp: cmp.label, pair: p.task }) },
        el("td", {}, p.task), el("td", {}, el("span", { class: "tag " + p.outcome }, p.outcome)),
        el("td", {}, p.diverge === null ? "—" : p.diverge)));
    }
    app.append(el("section", { class: "block" }, el("h2", {}, "pairs"), table));
    const chosen = cmp.pairs.find((p) => p.task === s.pair)
      || (s.pair === undefined ? (by("rescued")[0] || by("broken")[0] || cmp.pairs[0]) : null);
    if (chosen) app.append(pairView(cmp, chosen));
    return app;
  }

  // ------------------------------------------------------------------ tables and charts (pool, training)
  function heat(v, max) { return `background: rgba(46,157,85,${Math.max(0, Math.min(1, v / (max || 1))) * 0.6})`; }
  function tableBlock(t) {
    const nums = t.rows.flat().filter((v) => typeof v === "number");
    const max = Math.max(0, ...nums);
    const table = el("table", { class: t.heat ? "heat data" : "data", "data-title": t.title },
      el("tr", {}, t.columns.map((c) => el("th", {}, c))));
    for (const row of t.rows) {
      table.append(el("tr", {}, row.map((v, j) => {
        const isNum = typeof v === "number";
        const href = t.links && t.links[j] && v !== null ? t.links[j].replace("{}", encodeURIComponent(v)) : null;
        return el("td", { class: isNum ? "v" : null, style: t.heat && isNum ? heat(v, max) : null },
          href ? el("a", { href }, fmt(v)) : fmt(v));
      })));
    }
    return el("section", { class: "block" }, el("h2", {}, t.title), t.note ? el("p", { class: "muted" }, t.note) : null, table);
  }
  function lineChart(ch) {
    const W = 520, H = 200, P = 34, NS = "http://www.w3.org/2000/svg";
    const pts = ch.series.flatMap((s) => s.points);
    if (!pts.length) return el("p", { class: "muted" }, `${ch.title}: no points`);
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(0, ...ys), Math.max(...ys, 1e-9)];
    const X = (x) => P + ((x - x0) / (x1 - x0 || 1)) * (W - 2 * P), Y = (y) => H - P + ((y0 - y) / (y1 - y0 || 1)) * (H - 2 * P);
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("class", "line-chart"); svg.setAttribute("width", W); svg.setAttribute("height", H);
    const colors = ["#3567c7", "#d1495b", "#2e9d55", "#d9822b", "#7b5ea7", "#555"];
    const add = (tag, attrs, text) => { const n = document.createElementNS(NS, tag); for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v); if (text !== undefined) n.textContent = text; svg.append(n); return n; };
    add("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: "#999" });
    add("line", { x1: P, y1: P, x2: P, y2: H - P, stroke: "#999" });
    add("text", { x: 2, y: P }, fmt(y1)); add("text", { x: 2, y: H - P }, fmt(y0));
    add("text", { x: P, y: H - 8 }, fmt(x0)); add("text", { x: W - P - 20, y: H - 8 }, fmt(x1));
    ch.series.forEach((s, i) => {
      const d = s.points.map((p, j) => `${j ? "L" : "M"}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ");
      add("path", { d, fill: "none", stroke: colors[i % colors.length], "stroke-width": 1.6, class: "series", "data-name": s.name });
      add("text", { x: W - P - 118, y: P + 12 * i, style: `fill:${colors[i % colors.length]}` }, s.name);
    });
    return el("section", { class: "block chart-block", "data-title": ch.title }, el("h2", {}, ch.title), svg);
  }
  function sectionsTab() {
    const app = el("div", {});
    for (const item of DATA.sections || []) app.append(item.chart ? lineChart(item.chart) : tableBlock(item.table));
    return app;
  }

  // ------------------------------------------------------------------ shell
  const TABS = [];
  if (DATA.kind === "improve") TABS.push(["paired", "paired view", pairedTab]);
  if (DATA.sections) TABS.push([DATA.kind, DATA.kind, sectionsTab]);
  if (DATA.kind !== "improve" && DATA.improve && DATA.improve.comparisons.length) TABS.push(["paired", "paired view", pairedTab]);
  if (ROWS.length || !TABS.length) TABS.push(["episodes", "episodes", runTab]);
  function render() {
    const s = state();
    const tab = TABS.find((t) => t[0] === s.tab) || TABS[0];
    document.getElementById("title").textContent = DATA.title;
    document.getElementById("source").textContent = DATA.source;
    const nav = document.getElementById("tabs");
    nav.replaceChildren(...TABS.map((t) => el("a", { href: "#tab=" + t[0], class: t === tab ? "active" : null, "data-tab": t[0] }, t[1])));
    document.getElementById("app").replaceChildren(tab[2](s));
    document.body.dataset.tab = tab[0];
    document.body.dataset.ready = "1";
  }
  window.addEventListener("hashchange", render);
  render();
})();
