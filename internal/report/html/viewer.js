// The report's viewer: filters, lists and transcripts over the episodes and
// items the report was made from, which the page carries as JSON (parsed
// with JSON.parse, much faster than a script literal of the same size). Every text from a run is
// set as text (textContent, text nodes), never as markup, so a reply that
// holds a script element or an HTML comment shows as written and runs
// nothing.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("feedrun-data").textContent);
  const PAGE = 200;
  const $ = (id) => document.getElementById(id);

  // el builds an element; strings among the children become text nodes.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "onclick") e.addEventListener("click", v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  // The cell clicked last, if any: {target, model, env, harness, pick, label}.
  let cell = null;

  function filters() {
    const seed = $("f-seed").value, step = $("f-step").value;
    return {
      harness: $("f-harness").value,
      task: $("f-task").value.trim(),
      seed: seed === "" ? null : Number(seed),
      outcome: $("f-outcome").value,
      repeats: $("f-repeats").value,
      loops: $("f-loops").checked,
      step: step === "" ? null : Number(step),
    };
  }

  // The same selection as report.Filter: outcome, loops, seed and step
  // concern episodes, so setting one selects no probe items.
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
    if (!cell || cell.target !== target) return true;
    const pick = (target === "episodes" ? episodePicks : itemPicks)[cell.pick] || (() => true);
    return x.model === cell.model && x.env === cell.env && x.harness === cell.harness && pick(x);
  }

  function episodeSelected(e, f) {
    if (f.harness && e.harness !== f.harness) return false;
    if (f.task && e.task !== f.task) return false;
    if (f.seed !== null && e.seed !== f.seed) return false;
    if (f.outcome === "passed" && !e.passed) return false;
    if (f.outcome === "failed" && e.passed) return false;
    if (f.repeats === "exact" && e.exact === 0) return false;
    if (f.repeats === "near" && e.near === 0) return false;
    if (f.loops && !e.looped) return false;
    if (f.step !== null && f.step >= e.steps) return false;
    return inCell(e, "episodes");
  }

  function itemSelected(i, f) {
    if (f.outcome || f.loops || f.seed !== null || f.step !== null) return false;
    if (f.harness && i.harness !== f.harness) return false;
    if (f.task && i.id !== f.task) return false;
    if (f.repeats === "exact" && !i.greedy_post) return false;
    if (f.repeats === "near" && !i.greedy_post && !i.near_post) return false;
    return inCell(i, "items");
  }

  function outcome(e) {
    return e.passed ? "passed" : e.finished ? "finished, not passed" : "did not finish";
  }

  const lists = {
    episodes: { data: D.episodes, selected: episodeSelected, shown: PAGE, matches: [],
      row: (e, idx) => el("tr", { "data-index": idx }, el("td", {}, e.model + ", " + e.env), el("td", {}, e.harness), el("td", {}, e.task),
        el("td", {}, e.seed), el("td", {}, e.steps), el("td", {}, outcome(e)), el("td", {}, e.exact), el("td", {}, e.near), el("td", {}, e.looped ? "yes" : "")),
      open: (idx) => showEpisode(idx) },
    items: { data: D.items, selected: itemSelected, shown: PAGE, matches: [],
      row: (i, idx) => el("tr", { "data-index": idx }, el("td", {}, i.model + ", " + i.env), el("td", {}, i.harness), el("td", {}, i.id), el("td", {}, i.kind), el("td", {}, i.figures)),
      open: (idx) => showItem(idx) },
  };

  function update() {
    const f = filters();
    for (const [name, l] of Object.entries(lists)) {
      l.matches = [];
      l.data.forEach((x, idx) => { if (l.selected(x, f)) l.matches.push(idx); });
      l.shown = PAGE;
      draw(name);
    }
    $("f-cell").hidden = !cell;
    $("f-cell-text").textContent = cell ? cell.label : "";
  }

  function draw(name) {
    const l = lists[name], single = name.slice(0, -1);
    const body = document.querySelector("#" + single + "-list tbody");
    const rows = l.matches.slice(0, l.shown).map((idx) => l.row(l.data[idx], idx));
    body.replaceChildren(...rows);
    const count = $(single + "-count");
    count.dataset.count = String(l.matches.length);
    count.textContent = l.matches.length + " of " + l.data.length + (l.matches.length > l.shown ? " (first " + l.shown + " listed)" : "");
    $(single + "-more").hidden = l.matches.length <= l.shown;
  }

  function text(label, value, cls) {
    return el("div", {}, el("span", { class: "label" }, label), el("pre", cls ? { class: cls } : {}, value));
  }

  function transcript(e, only) {
    const box = el("div", { class: "transcript" },
      el("h3", {}, e.model + ", " + e.env + " · " + e.harness + " · task " + e.task + " · seed " + e.seed),
      el("div", { class: "label" }, e.summary + " · " + D.runs[e.run]));
    if (e.transcript.length === 0) box.append(el("p", {}, "No steps: the run folder has no rollout_steps.csv."));
    for (const s of e.transcript) {
      if (only !== null && s.n !== only) continue;
      const step = el("div", { class: "step" }, text("[" + s.n + "] reply", s.reply));
      if (s.ran !== undefined) step.append(text("ran (differs from the reply)", s.ran, "ran"));
      if (s.dropped) step.append(text("dropped (not run)", s.dropped, "ran"));
      step.append(text("observation", s.obs, s.failed ? "failed" : ""));
      if (s.marks) step.append(el("div", {}, ...s.marks.map((m) => el("span", { class: "mark" }, m))));
      box.append(step);
    }
    return box;
  }

  function select(name, idx) {
    const single = name.slice(0, -1);
    for (const tr of document.querySelectorAll("#" + single + "-list tr.selected")) tr.classList.remove("selected");
    const tr = document.querySelector("#" + single + "-list tr[data-index='" + idx + "']");
    if (tr) tr.classList.add("selected");
  }

  function showEpisode(idx) {
    const e = D.episodes[idx];
    select("episodes", idx);
    const view = $("episode-view");
    const side = el("button", { type: "button", id: "side-by-side", onclick: () => sideBySide(e) }, "this task and seed across harnesses");
    view.replaceChildren(side, transcript(e, filters().step));
    view.scrollIntoView({ block: "nearest" });
  }

  // sideBySide shows one task and seed under every harness, in columns.
  function sideBySide(e) {
    const same = D.episodes.filter((x) => x.model === e.model && x.env === e.env && x.task === e.task && x.seed === e.seed);
    $("episode-view").replaceChildren(el("h3", {}, "Task " + e.task + ", seed " + e.seed + " across " + same.length + " harnesses"),
      el("div", { class: "side" }, ...same.map((x) => transcript(x, filters().step))));
  }

  function showItem(idx) {
    const it = D.items[idx];
    select("items", idx);
    const same = D.items.filter((x) => x.run === it.run && x.model === it.model && x.env === it.env && x.id === it.id);
    const box = el("div", { class: "transcript" },
      el("h3", {}, it.model + ", " + it.env + " · item " + it.id + (it.kind ? " (" + it.kind + ")" : "")),
      el("div", { class: "label" }, D.runs[it.run]));
    if (it.ctx >= 0) {
      const c = D.contexts[it.ctx];
      for (const [role, content] of c.messages) box.append(text(role, content));
      box.append(text("failed action", c.failed_action, "ran"), text("observation", c.obs, "failed"));
    } else {
      box.append(el("p", {}, "Context not shown: the item was not made again when the report was written (CodeRepair's need report --contexts; an on-policy run needs its onpolicy_attempts.csv)."));
    }
    box.append(el("div", { class: "side" }, ...same.map((x) => el("div", { class: "transcript" },
      el("h3", {}, x.harness), el("div", { class: "label" }, x.figures),
      text("greedy before the failure", x.pre || "(not kept in this run)"),
      text("greedy after the failure", x.post || "(not kept in this run)", x.greedy_post ? "failed" : "")))));
    $("item-view").replaceChildren(box);
    $("item-view").scrollIntoView({ block: "nearest" });
  }

  for (const [name, l] of Object.entries(lists)) {
    const single = name.slice(0, -1);
    document.querySelector("#" + single + "-list tbody").addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) l.open(Number(tr.dataset.index));
    });
    $(single + "-more").addEventListener("click", () => { l.shown += PAGE; draw(name); });
  }

  function clickCell(td) {
    const tr = td.closest("tr"), table = td.closest("article");
    const heading = table.querySelectorAll("thead th")[td.cellIndex];
    cell = { target: table.dataset.target, model: tr.dataset.model, env: tr.dataset.env, harness: tr.dataset.harness, pick: td.dataset.pick,
      label: tr.dataset.model + ", " + tr.dataset.env + " · " + tr.dataset.harness + " × " + (heading ? heading.textContent : "") };
    update();
    $(table.dataset.target).scrollIntoView();
  }
  for (const td of document.querySelectorAll("td.pick")) {
    td.addEventListener("click", () => clickCell(td));
    td.addEventListener("keydown", (ev) => { if (ev.key === "Enter") clickCell(td); });
  }

  for (const id of ["f-harness", "f-task", "f-seed", "f-outcome", "f-repeats", "f-loops", "f-step"]) {
    $(id).addEventListener("input", update);
  }
  $("f-cell-clear").addEventListener("click", () => { cell = null; update(); });
  $("f-reset").addEventListener("click", () => {
    for (const id of ["f-harness", "f-task", "f-seed", "f-outcome", "f-repeats", "f-step"]) $(id).value = "";
    $("f-loops").checked = false;
    cell = null;
    update();
  });
  // A report without episodes or without items has no list of them.
  $("episodes").hidden = D.episodes.length === 0;
  $("items").hidden = D.items.length === 0;

  // A link can carry a view: #harness=ban&loops=1&open=0 sets the
  // filters and opens the first matching episode (open=N: the Nth).
  const hash = new URLSearchParams(location.hash.slice(1));
  for (const [key, value] of hash) {
    const input = $("f-" + key);
    if (!input) continue;
    if (input.type === "checkbox") input.checked = value === "1";
    else input.value = value;
  }
  update();
  const open = hash.get("open");
  if (open !== null && lists.episodes.matches.length > Number(open)) {
    showEpisode(lists.episodes.matches[Number(open)]);
  }
})();
