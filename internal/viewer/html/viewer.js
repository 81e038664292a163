// The viewer: a summary of run folders, then filters, sortable lists and
// transcripts over the episodes and items of the runs ticked. Its data
// comes two ways: the HTML report carries the index and every run's rows
// as JSON in the page (parsed with JSON.parse, much faster than a script
// literal of the same size); `feedrun view` serves the page empty, the
// index at api/runs and a run's rows at api/runs/N, fetched when the run
// is first ticked. Every text from a run is set as text (textContent,
// text nodes), never as markup, so a reply that holds a script element or
// an HTML comment shows as written and runs nothing. The address's hash
// holds the view (runs, filters, sort, the episode open, the comparison)
// and is rewritten on every change, so a link restores it.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const PAGE = 200;
  const embedded = $("feedrun-data") ? JSON.parse($("feedrun-data").textContent) : null;
  let INDEX = null;
  const loaded = [];   // run number → its view, once fetched
  const loading = [];  // run number → the promise of it
  const ticked = new Set();

  // el builds an element; strings among the children become text nodes.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "onclick") e.addEventListener("click", v);
      else if (k === "onchange") e.addEventListener("change", v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function status(msg) { $("status").textContent = msg; }

  // How the runs being fetched are getting on: a batch counts the runs
  // asked for since none was pending, and counted[i] says how far the
  // server has gone making run i (a CodeRepair run under --contexts takes
  // minutes), as api/runs/N/progress tells it.
  const batch = { asked: 0, read: 0 };
  const counted = [];
  function pending() { return INDEX.runs.map((_, i) => i).filter((i) => loading[i] && !loaded[i]); }
  function showLoading() {
    const left = pending();
    if (left.length === 0) return;
    const making = left.filter((i) => counted[i]).map((i) => INDEX.runs[i].name + ": " + counted[i]);
    status("Loading runs: " + batch.read + " of " + batch.asked + " read" + (making.length ? " (" + making.join("; ") + ")" : "") + "…");
  }

  function load(i) {
    if (loaded[i]) return Promise.resolve(loaded[i]);
    if (!loading[i]) {
      if (pending().length === 0) { batch.asked = 0; batch.read = 0; }
      batch.asked++;
      let poll = null;
      if (!embedded) {
        poll = setInterval(() => fetch("api/runs/" + i + "/progress").then((r) => (r.ok ? r.json() : null)).then((p) => {
          if (p && p.total > 0 && !loaded[i]) { counted[i] = p.counted + " of " + p.total + " problems made into items"; showLoading(); }
        }).catch(() => {}), 500);
      }
      const done = () => { if (poll) clearInterval(poll); };
      loading[i] = (embedded ? Promise.resolve(embedded.runs[i]) : fetch("api/runs/" + i).then((r) => {
        if (!r.ok) throw new Error("run " + INDEX.runs[i].name + ": " + r.status + " " + r.statusText);
        return r.json();
      })).then((v) => { done(); loaded[i] = v; batch.read++; showLoading(); return v; },
        (err) => { done(); loading[i] = null; throw err; });
    }
    return loading[i];
  }

  // ---- state: filters, sort, what is open, all mirrored in the hash ----

  const filterIDs = ["model", "env", "harness", "task", "seed", "outcome", "repeats", "loops", "step", "q"];
  let cell = null; // the table cell clicked last: {target, model, env, harness, pick, label}
  const sort = { runs: null, episodes: null, items: null }; // {key, desc}
  let openEp = null; // key of the episode shown
  let openItem = null; // key of the item shown
  let compare = []; // keys of the episodes shown beside the open one
  let lastOpened = "episodes";
  // Runs a link named that are not here: kept in the address, and said on
  // the page, until the reader ticks or unticks a run.
  let unknownRuns = [];

  function filters() {
    const v = (id) => $("f-" + id).value.trim();
    return {
      model: v("model"), env: v("env"), harness: v("harness"), task: v("task").toLowerCase(),
      seed: v("seed") === "" ? null : Number(v("seed")), outcome: v("outcome"), repeats: v("repeats"),
      loops: $("f-loops").checked, step: v("step") === "" ? null : Number(v("step")), q: v("q").toLowerCase(),
    };
  }

  // fits says whether run r is of the model and env the filters choose.
  const fits = (r, f) => (!f.model || r.models.includes(f.model)) && (!f.env || r.env === f.env);

  // viewed are the runs whose episodes and items are listed: those
  // ticked, or, where a model or env is chosen and no ticked run is of it,
  // every run of it. It is worked out from the ticks and the filters as
  // they stand and never kept, so that the same choices list the same
  // runs whatever order they were made in.
  function viewed() {
    const f = filters();
    if ((!f.model && !f.env) || [...ticked].some((i) => fits(INDEX.runs[i], f))) return ticked;
    return new Set(INDEX.runs.map((_, i) => i).filter((i) => fits(INDEX.runs[i], f)));
  }

  const epKey = (e) => [INDEX.runs[e.run].name, e.harness, e.task, e.seed].join("|");
  const itemKey = (i) => [INDEX.runs[i.run].name, i.harness, i.id].join("|");
  const runByName = (name) => INDEX.runs.findIndex((r) => r.name === name);

  function writeHash() {
    const h = new URLSearchParams();
    // The report opens with every run ticked, the server with none: the
    // hash names the runs ticked where that differs.
    const names = [...ticked].sort((a, b) => a - b).map((i) => INDEX.runs[i].name).concat(unknownRuns);
    if (embedded ? ticked.size < INDEX.runs.length || unknownRuns.length > 0 : names.length > 0) h.set("runs", names.join(","));
    for (const id of filterIDs) {
      const input = $("f-" + id);
      if (input.type === "checkbox") { if (input.checked) h.set(id, "1"); } else if (input.value !== "") h.set(id, input.value);
    }
    for (const [list, s] of Object.entries(sort)) if (s) h.set("sort-" + list, (s.desc ? "-" : "") + s.key);
    if (cell) h.set("cell", [cell.target, cell.model, cell.env, cell.harness, cell.pick, cell.label].join("|"));
    if (openEp) h.set("ep", openEp);
    if (compare.length) h.set("cmp", compare.join(","));
    if (openItem) h.set("item", openItem);
    const text = h.toString();
    if (location.hash.slice(1) !== text) history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }

  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    // Links made before the hash was written name filters the same way;
    // open=N opens the Nth episode listed.
    for (const id of filterIDs) {
      const input = $("f-" + id), v = h.get(id);
      if (input.type === "checkbox") input.checked = v === "1";
      else if (v !== null && input.tagName === "SELECT" && ![...input.options].some((o) => o.value === v)) input.append(el("option", {}, v)), input.value = v;
      else input.value = v === null ? "" : v;
    }
    for (const list of Object.keys(sort)) {
      const s = h.get("sort-" + list);
      sort[list] = s ? { key: s.replace(/^-/, ""), desc: s.startsWith("-") } : null;
    }
    const c = h.get("cell");
    if (c) { const [target, model, env, hn, pick, label] = c.split("|"); cell = { target, model, env, harness: hn, pick, label }; } else cell = null;
    openEp = h.get("ep");
    openItem = h.get("item");
    compare = h.get("cmp") ? h.get("cmp").split(",") : [];
    const runs = h.get("runs");
    unknownRuns = [];
    if (runs !== null) {
      ticked.clear();
      for (const name of runs.split(",")) { const i = runByName(name); if (i >= 0) ticked.add(i); else if (name) unknownRuns.push(name); }
    } else if (embedded) {
      INDEX.runs.forEach((_, i) => ticked.add(i));
    }
    return h;
  }

  // ---- selection ----

  const episodePicks = {
    all: () => true,
    exact: (e) => e.exact > 0,
    near: (e) => e.near > 0,
    loop: (e) => e.looped,
    finished: (e) => e.finished,
    passed: (e) => e.passed,
    failed_step: (e) => e.failed_step,
    recovered: (e) => e.failed_step && e.passed,
    gave_up: (e) => e.failed_step && e.gave_up,
  };
  const itemPicks = {
    all: () => true,
    inverted: (i) => i.inverted,
    banned: (i) => i.banned,
    greedy_pre: (i) => i.greedy_pre,
    greedy_post: (i) => i.greedy_post,
    near_post: (i) => i.near_post,
  };

  function inCell(x, target) {
    if (!cell) return true;
    if (cell.target !== target) return false;
    const pick = (target === "episodes" ? episodePicks : itemPicks)[cell.pick] || (() => true);
    return x.model === cell.model && x.env === cell.env && x.harness === cell.harness && pick(x);
  }

  // What text search reads of an episode or item, lower-cased once.
  const hay = new WeakMap();
  function haystack(x, parts) {
    let s = hay.get(x);
    if (s === undefined) { s = parts(x).join("\n").toLowerCase(); hay.set(x, s); }
    return s;
  }
  const episodeText = (e) => e.transcript.flatMap((s) => [s.reply, s.ran || "", s.dropped || "", s.obs]);
  function itemText(i) {
    const c = i.ctx >= 0 ? loaded[i.run].contexts[i.ctx] : null;
    return [i.pre, i.post].concat(c ? [c.failed_action, c.obs] : []);
  }

  // The same selection as report.Filter, with task as a substring and
  // text search: outcome, loops, seed and step concern episodes, so
  // setting one selects no probe items.
  function episodeSelected(e, f) {
    if (f.model && e.model !== f.model) return false;
    if (f.env && INDEX.runs[e.run].env !== f.env) return false;
    if (f.harness && e.harness !== f.harness) return false;
    if (f.task && !e.task.toLowerCase().includes(f.task)) return false;
    if (f.seed !== null && e.seed !== f.seed) return false;
    if (f.outcome === "passed" && !e.passed) return false;
    if (f.outcome === "failed" && e.passed) return false;
    if (f.repeats === "exact" && e.exact === 0) return false;
    if (f.repeats === "near" && e.near === 0) return false;
    if (f.loops && !e.looped) return false;
    if (f.step !== null && f.step >= e.steps) return false;
    if (f.q && !haystack(e, episodeText).includes(f.q)) return false;
    return inCell(e, "episodes");
  }

  function itemSelected(i, f) {
    if (f.outcome || f.loops || f.seed !== null || f.step !== null) return false;
    if (f.model && i.model !== f.model) return false;
    if (f.env && INDEX.runs[i.run].env !== f.env) return false;
    if (f.harness && i.harness !== f.harness) return false;
    if (f.task && !i.id.toLowerCase().includes(f.task)) return false;
    if (f.repeats === "exact" && !i.greedy_post) return false;
    if (f.repeats === "near" && !i.greedy_post && !i.near_post) return false;
    if (f.q && !haystack(i, itemText).includes(f.q)) return false;
    return inCell(i, "items");
  }

  function outcome(e) {
    const o = e.passed ? "passed" : e.finished ? "finished, not passed" : "did not finish";
    return e.failed_because ? o + ": " + e.failed_because : o;
  }
  const pct = (n, d) => (d ? (100 * n / d).toFixed(1) + "%" : "");
  const runLabel = (x) => INDEX.runs[x.run].name;

  // ---- lists: columns with a sort key each ----

  const columns = {
    runs: [
      { key: "view", label: "view", value: (r) => (r.viewed ? 0 : 1),
        cell: (r) => el("input", { type: "checkbox", class: "tick", "data-run": r.i, "aria-label": "view " + r.name, ...(r.viewed ? { checked: "" } : {}) }) },
      { key: "run", label: "run", value: (r) => r.name },
      { key: "model", label: "model", value: (r) => r.models.join(", ") },
      { key: "env", label: "env", value: (r) => r.env },
      { key: "setting", label: "setting", value: (r) => r.setting },
      { key: "harnesses", label: "harnesses", value: (r) => r.harnesses.length },
      { key: "episodes", label: "episodes", value: (r) => r.episodes || r.sweep, cell: (r) => (r.episodes || r.sweep ? String(r.episodes || r.sweep) : "") },
      { key: "passed", label: "passed", value: (r) => (r.episodes ? r.passed / r.episodes : null), cell: (r) => pct(r.passed, r.episodes) },
      { key: "repeated", label: "exact repeat", value: (r) => (r.episodes ? r.repeated / r.episodes : null), cell: (r) => pct(r.repeated, r.episodes) },
      { key: "looped", label: "looped", value: (r) => (r.episodes ? r.looped / r.episodes : null), cell: (r) => pct(r.looped, r.episodes) },
      { key: "items", label: "probe items", value: (r) => r.items, cell: (r) => (r.items ? String(r.items) : "") },
      { key: "greedy_post", label: "greedy repeat", value: (r) => (r.items ? r.greedy_post / r.items : null), cell: (r) => pct(r.greedy_post, r.items) },
      { key: "inverted", label: "G < 0", value: (r) => (r.items ? r.inverted / r.items : null), cell: (r) => pct(r.inverted, r.items) },
      { key: "provenance", label: "provenance", value: (r) => r.provenance,
        cell: (r) => el("details", {}, el("summary", {}, "show"), el("div", { class: "prov" }, r.dir + ": " + r.provenance)) },
    ],
    episodes: [
      { key: "run", label: "run", value: runLabel },
      { key: "model", label: "model, env", value: (e) => e.model + ", " + e.env },
      { key: "harness", label: "harness", value: (e) => INDEX.harnesses.indexOf(e.harness) },
      { key: "task", label: "task", value: (e) => e.task, cell: (e) => e.task },
      { key: "seed", label: "seed", value: (e) => e.seed },
      { key: "steps", label: "steps", value: (e) => e.steps },
      { key: "outcome", label: "outcome", value: (e) => (e.passed ? 2 : e.finished ? 1 : 0), cell: outcome },
      { key: "exact", label: "exact", value: (e) => e.exact },
      { key: "near", label: "near", value: (e) => e.near },
      { key: "looped", label: "looped", value: (e) => (e.looped ? 1 : 0), cell: (e) => (e.looped ? "yes" : "") },
    ],
    items: [
      { key: "run", label: "run", value: runLabel },
      { key: "model", label: "model, env", value: (i) => i.model + ", " + i.env },
      { key: "harness", label: "harness", value: (i) => i.harness },
      { key: "id", label: "item", value: (i) => i.id },
      { key: "kind", label: "failure", value: (i) => i.kind },
      // Sorted by G as a number; a banned action has none.
      { key: "figures", label: "figures", value: (i) => i.g, cell: (i) => i.figures },
    ],
  };
  for (const cols of Object.values(columns)) for (const c of cols) c.cell = c.cell || c.value;
  // The harness column shows the name, sorts in report order.
  columns.episodes[2].cell = (e) => e.harness;

  function compareBy(list) {
    const s = sort[list];
    if (!s) return null;
    const col = columns[list].find((c) => c.key === s.key);
    if (!col) return null;
    const dir = s.desc ? -1 : 1;
    // Numbers compare as numbers; a row with no value (null: no episodes,
    // a banned action's G) goes last whichever way the list is sorted.
    return (a, b) => {
      const x = col.value(a), y = col.value(b);
      if (x === null || x === undefined || y === null || y === undefined) return (x === null || x === undefined) - (y === null || y === undefined);
      return dir * (typeof x === "number" && typeof y === "number" ? (x > y) - (x < y) : String(x).localeCompare(String(y), undefined, { numeric: true }));
    };
  }

  function head(list, table) {
    const s = sort[list];
    table.tHead.replaceChildren(el("tr", {}, ...columns[list].map((c) => {
      const mark = s && s.key === c.key ? (s.desc ? " ▼" : " ▲") : "";
      return el("th", { "data-key": c.key, class: "sortable", tabindex: "0", "aria-sort": s && s.key === c.key ? (s.desc ? "descending" : "ascending") : "none" }, c.label + mark);
    })));
  }

  function sortBy(list, key) {
    const s = sort[list];
    sort[list] = s && s.key === key ? (s.desc ? null : { key, desc: true }) : { key, desc: false };
    if (list === "runs") drawRuns(); else update();
    writeHash();
  }

  // ---- the run summary ----

  function drawRuns() {
    const f = filters(), v = viewed();
    let runs = INDEX.runs.map((r, i) => Object.assign({ i, viewed: v.has(i) }, r));
    runs = runs.filter((r) => fits(r, f));
    const by = compareBy("runs");
    if (by) runs.sort(by);
    head("runs", $("run-list"));
    $("run-list").tBodies[0].replaceChildren(...runs.map((r) => el("tr", { "data-run": r.i, class: r.viewed ? "selected" : "" },
      ...columns.runs.map((c) => el("td", {}, c.cell(r))))));
    $("run-count").textContent = v.size + " of " + INDEX.runs.length + " viewed" + (runs.length < INDEX.runs.length ? ", " + runs.length + " shown" : "");
  }

  // ---- episode and item lists ----

  const lists = {
    episodes: { matches: [], shown: PAGE, all: () => [...viewed()].flatMap((i) => (loaded[i] ? loaded[i].episodes : [])), selected: episodeSelected,
      key: epKey, open: (e) => showEpisode(e) },
    items: { matches: [], shown: PAGE, all: () => [...viewed()].flatMap((i) => (loaded[i] ? loaded[i].items : [])), selected: itemSelected,
      key: itemKey, open: (i) => showItem(i) },
  };

  function update() {
    const f = filters();
    drawRuns();
    for (const [name, l] of Object.entries(lists)) {
      const all = l.all();
      l.total = all.length;
      l.matches = all.filter((x) => l.selected(x, f));
      const by = compareBy(name);
      if (by) l.matches.sort(by);
      l.shown = PAGE;
      draw(name);
    }
    $("f-cell").hidden = !cell;
    $("f-cell-text").textContent = cell ? cell.label : "";
    const v = viewed();
    $("episodes").hidden = v.size > 0 && lists.episodes.total === 0 && lists.items.total > 0;
    $("items").hidden = v.size > 0 && lists.items.total === 0;
    if (v.size === 0) status("No run ticked: tick runs in the table above, or choose a model.");
    else status("");
  }

  function draw(name) {
    const l = lists[name], single = name.slice(0, -1), table = $(single + "-list");
    head(name, table);
    table.tBodies[0].replaceChildren(...l.matches.slice(0, l.shown).map((x, n) => {
      const tr = el("tr", { "data-n": n }, ...columns[name].map((c) => el("td", {}, c.cell(x))));
      if ((name === "episodes" ? openEp : openItem) === l.key(x)) tr.classList.add("selected");
      return tr;
    }));
    const count = $(single + "-count");
    count.dataset.count = String(l.matches.length);
    count.textContent = l.matches.length + " of " + l.total + (l.matches.length > l.shown ? " (first " + l.shown + " listed)" : "");
    $(single + "-more").hidden = l.matches.length <= l.shown;
  }

  // ---- transcripts ----

  function text(label, value, cls) {
    return el("div", {}, el("span", { class: "label" }, label), el("pre", cls ? { class: cls } : {}, value));
  }

  // statement is the task as the environment stated it, the system
  // prompt folded away.
  function statement(e) {
    const v = loaded[e.run], msgs = v.tasks[e.task];
    if (!msgs) {
      return el("p", { class: "hint" }, "Task statement not shown: " + (v.tasks_missing || "the environment here has no task " + e.task) + ".");
    }
    const box = el("div", { class: "statement" });
    for (const [role, content] of msgs) {
      if (role === "system") box.append(el("details", {}, el("summary", {}, "system prompt"), el("pre", {}, content)));
      else box.append(text(role === "user" ? "task" : role, content));
    }
    return box;
  }

  // why is what a reader can know of an episode's outcome from its
  // folder: a failed step says why in its observation, and the final
  // check which of its conditions failed (failed_because), in runs made
  // since the column.
  function why(e) {
    if (e.passed) return "";
    const because = e.failed_because ? " Failed because: " + e.failed_because + "." : "";
    if (e.finished) return "Finished, but the environment's check of the result failed." + (because || " (The run folder was made before it recorded which condition.)");
    return "Did not finish within its steps." + because;
  }

  function transcript(e, only) {
    const box = el("div", { class: "transcript" },
      el("h3", {}, e.model + ", " + e.env + " · " + e.harness + " · task " + e.task + " · seed " + e.seed),
      el("div", { class: "label" }, e.summary + " · " + INDEX.runs[e.run].dir),
      why(e) && el("div", { class: "why" }, why(e)),
      statement(e));
    if (e.transcript.length === 0) box.append(el("p", {}, "No steps: the run folder has no rollout_steps.csv."));
    if (e.unrecorded) box.append(el("p", { class: "hint" }, "What the harness showed between replies is not shown: " + e.unrecorded + "."));
    for (const s of e.transcript) {
      if (only !== null && s.n !== only) continue;
      box.append(stepBox(s, null));
    }
    return box;
  }

  // stepBox is one step; ref, when given, is the step of another episode
  // it is compared with, and words not in it are marked.
  function stepBox(s, ref) {
    const step = el("div", { class: "step" });
    // What the harness showed before this reply, where it is not the
    // previous reply and its observation as they were.
    if (s.shown !== undefined) {
      if (s.shown.length === 0) step.append(text("shown before this reply", "(nothing added: the previous turn is not in the context)"));
      for (const [role, content] of s.shown) step.append(text("shown before this reply (" + role + ")", content));
    }
    step.append(el("span", { class: "label" }, "[" + s.n + "] reply"), diffPre(s.reply, ref && ref.reply));
    if (s.ran !== undefined) step.append(el("span", { class: "label" }, "ran (differs from the reply)"), diffPre(s.ran, ref && (ref.ran === undefined ? ref.reply : ref.ran), "ran"));
    if (s.dropped) step.append(text("dropped (not run)", s.dropped, "ran"));
    step.append(el("span", { class: "label" }, "observation"), diffPre(s.obs, ref && ref.obs, s.failed ? "failed" : ""));
    if (s.marks) step.append(el("div", {}, ...s.marks.map((m) => el("span", { class: "mark" }, m))));
    return step;
  }

  // diffPre shows text with the words that are not in ref marked (ref
  // null: nothing to compare with). Words are runs of letters and digits,
  // each other character standing alone, so that a changed argument is
  // marked and not the whole call. The marking is a longest common
  // subsequence of words, whose table grows as the product of the two
  // lengths: past wordPairs it would stall the page, and the texts are
  // compared line by line instead (lineDiff), with a note saying so.
  const wordPairs = 400000;
  function diffPre(text, ref, cls) {
    const pre = el("pre", cls ? { class: cls } : {});
    if (ref === null || ref === undefined || ref === text) { pre.append(text); return pre; }
    const words = (t) => t.split(/(\s+|[^\w\s])/).filter((w) => w !== "");
    const a = words(ref), b = words(text);
    if (a.length * b.length > wordPairs) {
      const lines = (t) => t.split(/(?<=\n)/);
      const byLine = lineDiff(pre, lines(ref), lines(text));
      return el("div", {}, el("span", { class: "why diff-note" }, byLine
        ? "too long to compare word by word: the lines that differ are marked"
        : "too long to compare word by word, and too unlike to compare line by line: all of it is marked"), pre);
    }
    const n = a.length, m = b.length, L = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      L[i * (m + 1) + j] = a[i] === b[j] ? L[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(L[(i + 1) * (m + 1) + j], L[i * (m + 1) + j + 1]);
    }
    let i = 0, j = 0, same = "", diff = "";
    const flush = () => {
      if (same) pre.append(same);
      if (diff) pre.append(el("mark", {}, diff));
      same = diff = "";
    };
    while (j < m) {
      if (i < n && a[i] === b[j]) { if (diff) flush(); same += b[j]; i++; j++; }
      else if (i < n && L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1]) i++;
      else { if (same) { pre.append(same); same = ""; } diff += b[j]; j++; }
    }
    flush();
    return pre;
  }

  // lineDiff marks in pre the lines of b that are not in a shortest edit
  // script from a (Myers's O((n+m)D) algorithm, quick where few lines
  // differ, as in two long replies that share most of their text). Past
  // maxEdits edits it marks all of b and returns false.
  const maxEdits = 1000;
  function lineDiff(pre, a, b) {
    const n = a.length, m = b.length, max = Math.min(n + m, maxEdits), off = max + 1;
    const v = new Int32Array(2 * max + 3), trace = [];
    let found = false;
    for (let d = 0; d <= max && !found; d++) {
      trace.push(v.slice());
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && a[x] === b[y]) { x++; y++; }
        v[off + k] = x;
        if (x >= n && y >= m) { found = true; break; }
      }
    }
    if (!found) { pre.append(el("mark", {}, b.join(""))); return false; }
    const same = new Uint8Array(m);
    let x = n, y = m;
    for (let d = trace.length - 1; d >= 0; d--) {
      const w = trace[d], k = x - y;
      const pk = k === -d || (k !== d && w[off + k - 1] < w[off + k + 1]) ? k + 1 : k - 1;
      const px = w[off + pk], py = px - pk;
      while (x > px && y > py) { x--; y--; same[y] = 1; }
      x = px; y = py;
    }
    let run = "", marked = false;
    const flush = () => { if (run) pre.append(marked ? el("mark", {}, run) : run); run = ""; };
    for (let j = 0; j < m; j++) {
      if (!same[j] !== marked) { flush(); marked = !same[j]; }
      run += b[j];
    }
    flush();
    return true;
  }

  function highlight(name) {
    const single = name.slice(0, -1), l = lists[name], open = name === "episodes" ? openEp : openItem;
    for (const tr of $(single + "-list").tBodies[0].rows) tr.classList.toggle("selected", l.key(l.matches[Number(tr.dataset.n)]) === open);
  }

  // step moves the open episode (or item) by d in its sorted list.
  function step(d) {
    const l = lists[lastOpened], key = lastOpened === "episodes" ? openEp : openItem;
    if (l.matches.length === 0) return;
    let n = l.matches.findIndex((x) => l.key(x) === key);
    n = n < 0 ? (d > 0 ? 0 : l.matches.length - 1) : Math.min(l.matches.length - 1, Math.max(0, n + d));
    if (n >= l.shown) { l.shown = n + PAGE; draw(lastOpened); }
    if (lastOpened === "episodes") compare = [];
    l.open(l.matches[n]);
  }

  function nav(name) {
    const l = lists[name], key = name === "episodes" ? openEp : openItem;
    const n = l.matches.findIndex((x) => l.key(x) === key);
    return el("div", { class: "nav" },
      el("button", { type: "button", id: name.slice(0, -1) + "-prev", onclick: () => { lastOpened = name; step(-1); } }, "← previous (k)"),
      el("span", { class: "label" }, n < 0 ? "not in the list" : (n + 1) + " of " + l.matches.length),
      el("button", { type: "button", id: name.slice(0, -1) + "-next", onclick: () => { lastOpened = name; step(1); } }, "next (j) →"));
  }

  function findEpisode(key) {
    const [run, h, task, seed] = key.split("|");
    const i = runByName(run);
    if (i < 0 || !loaded[i]) return null;
    return loaded[i].episodes.find((e) => e.harness === h && e.task === task && String(e.seed) === seed) || null;
  }

  function showEpisode(e) {
    openEp = epKey(e);
    lastOpened = "episodes";
    highlight("episodes");
    drawEpisode();
    writeHash();
  }

  function drawEpisode() {
    const view = $("episode-view");
    const e = openEp && findEpisode(openEp);
    if (!e) { view.replaceChildren(); return; }
    const others = compare.map(findEpisode).filter((x) => x);
    view.replaceChildren(nav("episodes"), compareControls(e),
      others.length ? sideBySide([e, ...others]) : transcript(e, filters().step));
    view.scrollIntoView({ block: "start" });
  }

  // compareControls choose what to set beside the open episode: its task
  // and seed under other harnesses of its run, or the same task, seed and
  // harness in another run of its environment (another model, or free
  // against grammar decoding).
  function compareControls(e) {
    const box = el("div", { class: "compare", id: "compare" }, el("span", { class: "label" }, "Side by side with:"));
    const same = loaded[e.run].episodes.filter((x) => x !== e && x.task === e.task && x.seed === e.seed && x.model === e.model);
    for (const x of same) {
      const k = epKey(x);
      box.append(el("label", {}, el("input", { type: "checkbox", "data-harness": x.harness, ...(compare.includes(k) ? { checked: "" } : {}),
        onchange: (ev) => { compare = ev.target.checked ? compare.concat(k) : compare.filter((c) => c !== k); drawEpisode(); writeHash(); } }), " " + x.harness));
    }
    const runs = INDEX.runs.map((r, i) => ({ r, i })).filter(({ r, i }) => i !== e.run && r.kind === "rollout" && r.env === INDEX.runs[e.run].env);
    if (runs.length) {
      const sel = el("select", { id: "compare-run", onchange: (ev) => {
        const i = Number(ev.target.value);
        if (ev.target.value === "") return;
        load(i).then((v) => {
          const x = v.episodes.find((y) => y.task === e.task && y.seed === e.seed && y.harness === e.harness);
          if (!x) { status("Run " + INDEX.runs[i].name + " has no episode of task " + e.task + ", seed " + e.seed + " under " + e.harness + "."); ev.target.value = ""; return; }
          status("");
          if (!compare.includes(epKey(x))) compare = compare.concat(epKey(x));
          drawEpisode(); writeHash();
        }).catch((err) => status(String(err)));
      } }, el("option", { value: "" }, "another run…"), ...runs.map(({ r, i }) => el("option", { value: i }, r.name + " (" + r.models.join(", ") + (r.setting ? ", " + r.setting : "") + ")")));
      box.append(el("label", {}, " or ", sel));
    }
    return box;
  }

  // sideBySide sets episodes in columns, a row per step number, so that
  // step n of each is level with step n of the first; words of a step
  // that differ from the first episode's same step are marked.
  function sideBySide(eps) {
    const first = eps[0];
    const table = el("table", { class: "side" });
    table.append(el("thead", {}, el("tr", {}, el("th", {}, "step"), ...eps.map((x, n) => el("th", {},
      el("div", {}, x.model + " · " + x.harness), el("div", { class: "label" }, INDEX.runs[x.run].name + " · " + x.summary),
      n > 0 && el("button", { type: "button", class: "drop", onclick: () => { compare = compare.filter((c) => c !== epKey(x)); drawEpisode(); writeHash(); } }, "remove"))))));
    const body = el("tbody");
    table.append(body);
    body.append(el("tr", {}, el("th", {}, "task"), ...eps.map((x) => el("td", {}, statement(x)))));
    const steps = Math.max(...eps.map((x) => x.transcript.length));
    const only = filters().step;
    for (let n = 0; n < steps; n++) {
      if (only !== null && n !== only) continue;
      const ref = first.transcript.find((s) => s.n === n) || null;
      body.append(el("tr", { class: "aligned" }, el("th", {}, String(n)), ...eps.map((x, k) => {
        const s = x.transcript.find((t) => t.n === n);
        return el("td", {}, s ? stepBox(s, k === 0 ? null : ref ? ref : { reply: "", obs: "" }) : el("span", { class: "label" }, "(no step " + n + ")"));
      })));
    }
    return el("div", { class: "scroll" }, el("h3", {}, "Task " + first.task + ", seed " + first.seed + ": " + eps.length + " episodes; words that differ from the first column's step are marked"), table);
  }

  // terms is G's decomposition (docs/methodology.md): −G = Δcopy + Δsem,
  // and Δsem = Δquote + Δvalence where the run measured the quoteless
  // context; nothing for a banned action, which has no G.
  function terms(x) {
    if (x.g === null || x.g === undefined) return null;
    const f = (v) => (v === null || v === undefined ? "n/a" : v.toFixed(3));
    let t = "Δcopy " + f(x.d_copy) + " · Δsem " + f(x.d_sem);
    if (x.d_quote !== null && x.d_quote !== undefined) t += " (Δquote " + f(x.d_quote) + ", Δvalence " + f(x.d_valence) + ")";
    return el("div", { class: "label terms" }, t + " nats");
  }

  // after is what harness x showed after the failure, where the item's
  // context was made: the failed turn as it showed it (verbatim: the raw
  // observation; abstract: the description; scrub: the task with its
  // rule-out), message by message.
  function after(x) {
    if (!x.after) return [];
    if (x.after.length === 0) return [text("shown after the failure", "(nothing: the harness leaves the failure out)")];
    return x.after.map(([role, content]) => text("shown after the failure (" + role + ")", content, "after"));
  }

  function showItem(it) {
    openItem = itemKey(it);
    lastOpened = "items";
    highlight("items");
    drawItem();
    writeHash();
  }

  function findItem(key) {
    const [run, h, id] = key.split("|");
    const i = runByName(run);
    if (i < 0 || !loaded[i]) return null;
    return loaded[i].items.find((x) => x.harness === h && x.id === id) || null;
  }

  function drawItem() {
    const view = $("item-view");
    const it = openItem && findItem(openItem);
    if (!it) { view.replaceChildren(); return; }
    const v = loaded[it.run];
    const same = v.items.filter((x) => x.model === it.model && x.env === it.env && x.id === it.id);
    const box = el("div", { class: "transcript" },
      el("h3", {}, it.model + ", " + it.env + " · item " + it.id + (it.kind ? " (" + it.kind + ")" : "")),
      el("div", { class: "label" }, INDEX.runs[it.run].dir));
    if (it.ctx >= 0) {
      const c = v.contexts[it.ctx];
      for (const [role, content] of c.messages) {
        box.append(role === "system" ? el("details", {}, el("summary", {}, "system prompt"), el("pre", {}, content)) : text(role, content));
      }
      box.append(text("failed action", c.failed_action, "ran"), text("observation", c.obs, "failed"));
    } else {
      box.append(el("p", {}, "Context not shown: the run has no context record (made before feedrun kept one) and the item was not made again here (CodeRepair's need --contexts; an on-policy run needs its onpolicy_attempts.csv)."));
    }
    box.append(el("div", { class: "side-items" }, ...same.map((x) => el("div", { class: "transcript" },
      el("h3", {}, x.harness), el("div", { class: "label" }, x.figures), terms(x), ...after(x),
      text("greedy before the failure", x.pre || "(not kept in this run)"),
      text("greedy after the failure", x.post || "(not kept in this run)", x.greedy_post ? "failed" : "")))));
    view.replaceChildren(nav("items"), box);
    view.scrollIntoView({ block: "start" });
  }

  // ---- wiring ----

  // tick ticks or unticks run i as the reader does in the table. Where the
  // runs viewed are a model's or env's (no run ticked is of it), they
  // become the ticked ones first, so that the box the reader clicked is
  // the only one that changes.
  function tick(i, on) {
    const v = viewed();
    if (v !== ticked) { ticked.clear(); for (const j of v) ticked.add(j); }
    unknownRuns = [];
    if (on) ticked.add(i); else ticked.delete(i);
    return on ? load(i) : Promise.resolve();
  }

  // refresh loads the ticked runs (and those the open episode and the
  // comparison name), then draws.
  function refresh() {
    const need = new Set(viewed());
    for (const k of [openEp, openItem, ...compare]) if (k) { const i = runByName(k.split("|")[0]); if (i >= 0) need.add(i); }
    const all = Promise.all([...need].map(load));
    // The table of runs needs none of their rows: it is drawn at once.
    drawRuns();
    showLoading();
    return all.then(() => {
      update();
      drawEpisode();
      drawItem();
      writeHash();
      notice();
    }).catch((err) => status(String(err)));
  }

  // notice says on the page what the address names that is not here: a
  // run, an episode, a comparison or an item, each by the name the link
  // gives it, until the address changes.
  function notice() {
    const msgs = [];
    if (unknownRuns.length) msgs.push("The link names " + (unknownRuns.length > 1 ? "runs" : "a run") + " not served here: " + unknownRuns.map((n) => "“" + n + "”").join(", ") + ".");
    const missing = (what, key, find) => {
      if (!key || find(key)) return;
      const [run, h, x, seed] = key.split("|");
      const i = runByName(run);
      if (i < 0) msgs.push("The link's " + what + " “" + key + "” is of a run not served here, “" + run + "”.");
      else if (loaded[i]) msgs.push("Run " + run + " has no " + (what === "item" ? "item " + x + " under " + h : "episode of task " + x + ", seed " + seed + " under " + h) + " (the link's " + what + " “" + key + "”).");
    };
    missing("episode", openEp, findEpisode);
    for (const k of compare) missing("comparison", k, findEpisode);
    missing("item", openItem, findItem);
    $("notice").textContent = msgs.join(" ");
    $("notice").hidden = msgs.length === 0;
  }

  function fillSelect(id, values) {
    const s = $(id), cur = s.value;
    s.replaceChildren(el("option", { value: "" }, "any"), ...values.map((v) => el("option", {}, v)));
    s.value = cur;
  }

  function start(index) {
    INDEX = index;
    fillSelect("f-model", [...new Set(INDEX.runs.flatMap((r) => r.models))].sort());
    fillSelect("f-env", [...new Set(INDEX.runs.map((r) => r.env))].sort());
    fillSelect("f-harness", INDEX.harnesses);
    // The report shows every run at once; the server, none until asked
    // (readHash).
    const h = readHash();
    refresh().then(() => {
      const open = h.get("open");
      if (open !== null && !openEp && lists.episodes.matches.length > Number(open)) showEpisode(lists.episodes.matches[Number(open)]);
    });

    $("run-list").tBodies[0].addEventListener("change", (ev) => {
      const box = ev.target.closest("input.tick");
      if (!box) return;
      tick(Number(box.dataset.run), box.checked);
      refresh();
    });
    for (const t of ["run-list", "episode-list", "item-list"]) {
      const list = t === "run-list" ? "runs" : t === "episode-list" ? "episodes" : "items";
      $(t).tHead.addEventListener("click", (ev) => { const th = ev.target.closest("th[data-key]"); if (th) sortBy(list, th.dataset.key); });
      $(t).tHead.addEventListener("keydown", (ev) => { const th = ev.target.closest("th[data-key]"); if (th && ev.key === "Enter") sortBy(list, th.dataset.key); });
    }
    for (const [name, l] of Object.entries(lists)) {
      const single = name.slice(0, -1);
      $(single + "-list").tBodies[0].addEventListener("click", (ev) => {
        const tr = ev.target.closest("tr");
        if (!tr) return;
        if (name === "episodes") compare = [];
        l.open(l.matches[Number(tr.dataset.n)]);
      });
      $(single + "-more").addEventListener("click", () => { l.shown += PAGE; draw(name); });
    }
    for (const id of filterIDs) {
      // A model (or env) with no run of it ticked views its runs
      // (viewed), which refresh loads.
      $("f-" + id).addEventListener("input", refresh);
    }
    $("f-cell-clear").addEventListener("click", () => { cell = null; refresh(); });
    $("f-reset").addEventListener("click", () => {
      for (const id of filterIDs) { const input = $("f-" + id); if (input.type === "checkbox") input.checked = false; else input.value = ""; }
      cell = null;
      refresh();
    });
    $("f-link").addEventListener("click", () => {
      writeHash();
      if (navigator.clipboard) navigator.clipboard.writeText(location.href).then(() => status("Link copied."), () => status(location.href));
      else status(location.href);
    });
    for (const td of document.querySelectorAll("td.pick")) {
      const click = () => {
        const tr = td.closest("tr"), table = td.closest(".table");
        const heading = td.closest("table").querySelectorAll("thead th")[td.cellIndex];
        cell = { target: table.dataset.target, model: tr.dataset.model, env: tr.dataset.env, harness: tr.dataset.harness, pick: td.dataset.pick,
          label: tr.dataset.model + ", " + tr.dataset.env + " · " + tr.dataset.harness + " × " + (heading ? heading.textContent : "") };
        refresh().then(() => $(table.dataset.target).scrollIntoView());
      };
      td.addEventListener("click", click);
      td.addEventListener("keydown", (ev) => { if (ev.key === "Enter") click(); });
    }
    document.addEventListener("keydown", (ev) => {
      if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.closest("input, select, textarea")) return;
      if (ev.key === "j") step(1);
      else if (ev.key === "k") step(-1);
    });
    window.addEventListener("hashchange", () => { readHash(); refresh(); });
  }

  if (embedded) start(embedded.index);
  else fetch("api/runs").then((r) => { if (!r.ok) throw new Error("api/runs: " + r.status); return r.json(); }).then(start).catch((err) => status(String(err)));
})();
