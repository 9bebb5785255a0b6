// The cadclip search page: talks to the JSON API of docs/HTTP_API.md only.
// The query, filters and controls live in the page's URL, so that a search
// can be linked and shared; the API key (when the server wants one) lives in
// this tab's session storage only.
"use strict";

const results = document.getElementById("results");
const statusLine = document.getElementById("status");
const appliedLine = document.getElementById("applied");
const $ = (id) => document.getElementById(id);
const K = 24;

const state = {key: sessionStorage.getItem("cadclip-key") || ""};

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.className = isError ? "error" : "";
}

function authHeaders() {
  return state.key ? {"Authorization": "Bearer " + state.key} : {};
}

async function call(url, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = Object.assign({}, authHeaders(), opts.headers || {});
  const response = await fetch(url, opts);
  let body = null;
  try { body = await response.json(); } catch (e) { /* not JSON */ }
  if (response.status === 401) $("key-form").hidden = false;
  if (!response.ok) {
    const message = body && body.error ? body.error.message : "HTTP " + response.status;
    throw new Error(message);
  }
  return body;
}

// Parts without a drawing (drawing it failed, or a prepared library without
// thumbnails) get this box instead of a broken image.
function noDrawing() {
  const none = document.createElement("div");
  none.className = "noimg";
  none.textContent = "no drawing";
  return none;
}

// An <img> cannot send the key: with one, the drawing is fetched and shown
// from memory.
function thumbnail(hit) {
  if (!hit.thumbnail) return noDrawing();
  const img = document.createElement("img");
  img.onerror = () => img.replaceWith(noDrawing());
  img.alt = "line drawing of " + hit.name;
  img.width = 200;
  img.height = 200;
  if (!state.key) {
    img.src = hit.thumbnail;
  } else {
    fetch(hit.thumbnail, {headers: authHeaders()})
        .then((r) => r.ok ? r.blob() : Promise.reject(new Error("HTTP " + r.status)))
        .then((blob) => { img.src = URL.createObjectURL(blob); })
        .catch(() => img.replaceWith(noDrawing()));
  }
  return img;
}

function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function sizeText(hit) {
  return hit.size_mm.map((v) => v.toFixed(1)).join(" × ") + " mm";
}

function clauses(filters) {
  return (filters || []).map((f) => f.clause);
}

function card(hit, filters, facts) {
  const div = element("div", "card");
  div.dataset.id = hit.id;
  div.dataset.size = JSON.stringify(hit.size_mm);
  div.dataset.type = hit.file_type || "";
  div.appendChild(thumbnail(hit));
  div.appendChild(element("div", "name", (hit.rank ? hit.rank + ". " : "") + hit.name));
  if (hit.caption) div.appendChild(element("div", "caption", hit.caption));
  const holes = hit.holes === null || hit.holes === undefined ? "holes ?"
      : hit.holes + (hit.holes === 1 ? " hole" : " holes") +
        (hit.holes ? " (Ø " + hit.hole_diameters_mm.map((d) => d.toFixed(1)).join(", ") + ")" : "");
  const meta = element("div", "meta",
                       sizeText(hit) + " · " + hit.faces + " faces · " + holes +
                       (hit.file_type ? " · " + hit.file_type : ""));
  meta.title = hit.source;
  div.appendChild(meta);
  const fields = Object.entries(hit.metadata || {});
  if (fields.length) {
    div.appendChild(element("div", "fields", fields.map(([k, v]) => k + ": " + v).join(" · ")));
  }
  // Why it is here: every filter it meets, and how alike it is.
  const met = clauses(filters);
  if (met.length) div.appendChild(element("div", "why", "meets " + met.join(" · ")));
  // The facts the words stated: which this part meets, which it misses.
  if (facts && facts.length && hit.meets) {
    const stated = element("div", "why facts");
    facts.forEach((f, i) => {
      const chip = element("span", "clause " + (hit.meets[i] ? "query" : "missed"),
                           (hit.meets[i] ? "✓ " : "✗ ") + f.because);
      chip.title = f.clause;
      stated.appendChild(chip);
    });
    div.appendChild(stated);
  }
  const row = element("div", "row");
  const score = element("span", "score", "score " + hit.score.toFixed(3));
  const bar = element("div", "score-bar");
  const fill = element("span");
  fill.style.width = Math.max(0, Math.min(1, hit.score)) * 100 + "%";
  bar.appendChild(fill);
  row.appendChild(score);
  const more = element("button", "secondary more-like-this", "more like this");
  more.type = "button";
  more.addEventListener("click", () => go({like: hit.id, name: hit.name}));
  row.appendChild(more);
  div.appendChild(row);
  div.appendChild(bar);
  return div;
}

function showApplied(filters, candidates, facts, meetingAll) {
  appliedLine.replaceChildren();
  if (filters && filters.length) {
    appliedLine.appendChild(document.createTextNode("filters applied: "));
    for (const f of filters) {
      const chip = element("span", "clause " + f.origin, f.clause);
      chip.title = f.origin === "query" ? "read from your words: “" + f.because + "”"
          : f.origin === "same_size" ? f.because : "given";
      appliedLine.appendChild(chip);
    }
    appliedLine.appendChild(document.createTextNode(candidates + " parts pass "));
  }
  if (facts && facts.length) {
    appliedLine.appendChild(document.createTextNode("ranked first by the facts you stated: "));
    for (const f of facts) {
      const chip = element("span", "clause query", f.clause);
      chip.title = "read from your words: “" + f.because + "”";
      appliedLine.appendChild(chip);
    }
    appliedLine.appendChild(document.createTextNode(meetingAll + " parts meet them all"));
  }
}

function show(body, label) {
  results.replaceChildren(...body.results.map((hit) => card(hit, body.filters, body.facts)));
  showApplied(body.filters, body.candidates, body.facts, body.meeting_all);
  let text = body.results.length + " results " + label;
  if (body.mirrored_left_out) text += " · " + body.mirrored_left_out + " mirror images left out";
  setStatus(text);
}

function showDuplicates(body) {
  appliedLine.replaceChildren();
  const boxes = body.clusters.map((c, i) => {
    const box = element("section", "cluster");
    box.dataset.kind = c.kind;
    box.appendChild(element("h3", "", "cluster " + (i + 1) + ": " + c.kind + ", " +
                                          c.members.length + " parts, lowest score " +
                                          c.min_score.toFixed(3)));
    const members = element("div", "members");
    for (const m of c.members) members.appendChild(card(m, []));
    box.appendChild(members);
    return box;
  });
  results.replaceChildren(...boxes);
  setStatus(body.clusters_total + " duplicate clusters among " + body.parts + " parts (" +
            body.parts_in_clusters.exact + " exact, " + body.parts_in_clusters.mirrored +
            " mirrored, " + body.parts_in_clusters.near + " near)");
}

// ---- filters <-> controls ---------------------------------------------------

// The clauses of a filter string, quotes kept together.
function splitClauses(text) {
  const out = [];
  let current = "", quoted = false;
  for (const ch of text || "") {
    if (ch === '"') quoted = !quoted;
    if (!quoted && /\s/.test(ch)) {
      if (current) out.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  if (current) out.push(current);
  return out;
}

const CONTROLS = [
  [/^size>=([0-9.]+)$/, "f-size-min"], [/^size<=([0-9.]+)$/, "f-size-max"],
  [/^faces>=([0-9]+)$/, "f-faces-min"], [/^faces<=([0-9]+)$/, "f-faces-max"],
  [/^holes>=([0-9]+)$/, "f-holes-min"], [/^hole=(.+)$/, "f-hole"],
  [/^type=(step|iges|brep|deepcad)$/, "f-type"],
];

function filterText() {
  const parts = [];
  const add = (id, prefix) => {
    const v = $(id).value.trim();
    if (v) parts.push(prefix + v);
  };
  add("f-size-min", "size>=");
  add("f-size-max", "size<=");
  add("f-faces-min", "faces>=");
  add("f-faces-max", "faces<=");
  add("f-holes-min", "holes>=");
  add("f-hole", "hole=");
  add("f-type", "type=");
  add("f-more", "");
  return parts.join(" ");
}

function setControls(params) {
  for (const [, id] of CONTROLS) $(id).value = "";
  const rest = [];
  for (const clause of splitClauses(params.get("filter"))) {
    const control = CONTROLS.find(([pattern, id]) => pattern.test(clause) && !$(id).value);
    if (control) $(control[1]).value = clause.match(control[0])[1];
    else rest.push(clause);
  }
  $("f-more").value = rest.join(" ");
  $("f-min-score").value = params.get("min_score") || "";
  $("f-strict").checked = params.get("strict") === "1";
  $("query").value = params.get("q") || "";
  $("s-same-size").checked = params.has("same_size");
  if (params.has("same_size")) $("s-same-size-pct").value = params.get("same_size");
  $("s-ignore-mirrored").checked = params.get("ignore_mirrored") === "1";
}

// What the controls ask, as URL parameters (shared by the page's URL and the API).
function controlParams() {
  const p = new URLSearchParams();
  const filter = filterText();
  if (filter) p.set("filter", filter);
  const minScore = $("f-min-score").value.trim();
  if (minScore) p.set("min_score", minScore);
  return p;
}

function similarityParams(p) {
  if ($("s-same-size").checked) p.set("same_size", $("s-same-size-pct").value || "10");
  if ($("s-ignore-mirrored").checked) p.set("ignore_mirrored", "1");
  return p;
}

// ---- running a search ----------------------------------------------------------

async function run(label, request, render) {
  setStatus("searching…");
  try {
    (render || show)(await request(), label);
  } catch (e) {
    results.replaceChildren();
    appliedLine.replaceChildren();
    setStatus(e.message, true);
  }
}

// Runs what `params` (the page URL's parameters) ask for.
function runParams(params) {
  const api = new URLSearchParams();
  for (const key of ["filter", "min_score"]) if (params.has(key)) api.set(key, params.get(key));
  if (params.get("view") === "duplicates") {
    api.set("limit", "50");
    return run("", () => call("/api/duplicates?" + api), showDuplicates);
  }
  api.set("k", String(K));
  if (params.has("like")) {
    for (const key of ["same_size", "ignore_mirrored"]) {
      if (params.has(key)) api.set(key, params.get(key));
    }
    const like = params.get("like");
    return run("like " + (params.get("name") || like),
               () => call("/api/similar/" + encodeURIComponent(like) + "?" + api));
  }
  const q = params.get("q");
  if (!q) return Promise.resolve();
  if (params.get("strict") === "1") api.set("strict", "1");
  api.set("q", q);
  return run("for “" + q + "”", () => call("/api/search?" + api));
}

// A new search: into the URL (so Back and a shared link give it again), then run.
function go(what) {
  const p = controlParams();
  if (what.like) {
    p.set("like", what.like);
    if (what.name) p.set("name", what.name);
    similarityParams(p);
  } else if (what.duplicates) {
    p.set("view", "duplicates");
  } else {
    p.set("q", what.q);
    if ($("f-strict").checked) p.set("strict", "1");
  }
  history.pushState(null, "", "?" + p);
  return runParams(p);
}

$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("query").value.trim();
  if (text) go({q: text});
});

$("duplicates-button").addEventListener("click", () => go({duplicates: true}));

$("upload-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const file = $("part-file").files[0];
  if (!file) { setStatus("choose a part file first", true); return; }
  const form = new FormData();
  form.append("file", file);
  const p = similarityParams(controlParams());
  p.set("k", String(K));
  run("like " + file.name, () => call("/api/search/part?" + p, {method: "POST", body: form}));
});

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.key = $("api-key").value.trim();
  sessionStorage.setItem("cadclip-key", state.key);
  $("key-form").hidden = true;
  start();
});

window.addEventListener("popstate", () => {
  const params = new URLSearchParams(location.search);
  setControls(params);
  runParams(params);
});

function start() {
  call("/api/health").then((h) => {
    if (h.api_key_required && h.parts === undefined) {
      $("key-form").hidden = false;
      setStatus("enter the API key to search", true);
      return;
    }
    $("footer").textContent =
        h.parts + " parts · index version " + h.version + " · " + h.factory + " · checkpoint " +
        h.checkpoint + (h.part_upload ? "" : " · part upload not available in this build");
    if (!h.part_upload) $("upload-form").hidden = true;
    if (h.fields && h.fields.length) {
      $("fields-hint").textContent = "catalog fields: " + h.fields.join(", ");
    }
    const params = new URLSearchParams(location.search);
    setControls(params);
    runParams(params);
  }).catch((e) => setStatus(e.message, true));
}

start();
