// The cadclip search page: talks to the JSON API of docs/HTTP_API.md only.
"use strict";

const results = document.getElementById("results");
const statusLine = document.getElementById("status");

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.className = isError ? "error" : "";
}

async function call(url, options) {
  const response = await fetch(url, options);
  let body = null;
  try { body = await response.json(); } catch (e) { /* not JSON */ }
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

function card(hit) {
  const div = document.createElement("div");
  div.className = "card";
  div.dataset.id = hit.id;
  if (hit.thumbnail) {
    const img = document.createElement("img");
    img.onerror = () => img.replaceWith(noDrawing());
    img.src = hit.thumbnail;
    img.alt = "line drawing of " + hit.name;
    img.width = 200;
    img.height = 200;
    div.appendChild(img);
  } else {
    div.appendChild(noDrawing());
  }
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = hit.rank + ". " + hit.name;
  div.appendChild(name);
  if (hit.caption) {
    const caption = document.createElement("div");
    caption.className = "caption";
    caption.textContent = hit.caption;
    div.appendChild(caption);
  }
  const meta = document.createElement("div");
  meta.className = "meta";
  const size = hit.size_mm.map((v) => v.toFixed(1)).join(" × ");
  meta.textContent = size + " mm, " + hit.faces + " faces";
  meta.title = hit.source;
  div.appendChild(meta);
  const row = document.createElement("div");
  row.className = "row";
  const score = document.createElement("span");
  score.className = "score";
  score.textContent = "score " + hit.score.toFixed(3);
  row.appendChild(score);
  const more = document.createElement("button");
  more.className = "secondary more-like-this";
  more.type = "button";
  more.textContent = "more like this";
  more.addEventListener("click", () => similar(hit.id, hit.name));
  row.appendChild(more);
  div.appendChild(row);
  return div;
}

function show(body, label) {
  results.replaceChildren(...body.results.map(card));
  setStatus(body.results.length + " results " + label);
}

async function run(label, request) {
  setStatus("searching…");
  try {
    show(await request(), label);
  } catch (e) {
    results.replaceChildren();
    setStatus(e.message, true);
  }
}

function search(text) {
  return run("for “" + text + "”",
             () => call("/api/search?k=24&q=" + encodeURIComponent(text)));
}

function similar(id, name) {
  return run("like " + name, () => call("/api/similar/" + encodeURIComponent(id) + "?k=24"));
}

document.getElementById("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = document.getElementById("query").value.trim();
  if (text) search(text);
});

document.getElementById("upload-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const file = document.getElementById("part-file").files[0];
  if (!file) { setStatus("choose a part file first", true); return; }
  const form = new FormData();
  form.append("file", file);
  run("like " + file.name, () => call("/api/search/part?k=24", {method: "POST", body: form}));
});

call("/api/health").then((h) => {
  document.getElementById("footer").textContent =
      h.parts + " parts · index " + h.factory + " · checkpoint " + h.checkpoint +
      (h.part_upload ? "" : " · part upload not available in this build");
  if (!h.part_upload) document.getElementById("upload-form").hidden = true;
}).catch((e) => setStatus(e.message, true));
