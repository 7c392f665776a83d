// The page talks only to this server's /api; cytoscape is vendored under /static/vendor.
let conversationId = null;
window.cy = null;

const $ = (id) => document.getElementById(id);

function text(tag, content, cls) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (cls) el.className = cls;
  return el;
}

// A server may serve several workspaces (built folders): the page asks the one picked, through
// /w/NAME/api/..., and remembers the pick. Writes (enrichment, rollback, settings) need that workspace's
// token: opened once as /#token=... (or #workspace=NAME&token=...), kept in this browser's storage, and
// taken out of the address bar.
const opened = new URLSearchParams(location.hash.slice(1));
let workspace = null;  // null: the server's only workspace, asked at /api/...
let token = null;

const tokenKey = (name) => (name ? `enrichrag-token:${name}` : "enrichrag-token");
const route = (path) => (workspace ? `/w/${encodeURIComponent(workspace)}${path}` : path);

async function pickWorkspace() {
  const listed = await (await fetch("/api/workspaces")).json();
  const names = listed.workspaces.map((w) => w.name);
  const several = names.length > 1;
  const asked = opened.get("workspace") || localStorage.getItem("enrichrag-workspace");
  workspace = several ? (names.includes(asked) ? asked : listed.default) : null;
  if (opened.get("token")) {
    localStorage.setItem(tokenKey(several ? opened.get("workspace") || listed.default : null), opened.get("token"));
    history.replaceState(null, "", location.pathname);
  }
  const select = $("workspace");
  select.replaceChildren(...listed.workspaces.map((w) => Object.assign(text("option", w.name), {value: w.name, title: w.corpus})));
  select.hidden = !several;
  useWorkspace(workspace);
}

function useWorkspace(name) {
  workspace = name;
  if (name) {
    $("workspace").value = name;
    localStorage.setItem("enrichrag-workspace", name);
  }
  token = localStorage.getItem(tokenKey(name));
  conversationId = null;
}

async function api(path, body, method) {
  const headers = token ? {Authorization: `Bearer ${token}`} : {};
  const response = await fetch(route(path), body === undefined ? {method: method || "GET", headers} : {
    method: method || "POST", headers: {...headers, "Content-Type": "application/json"}, body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// A streamed question (server-sent events): each step as it finishes, then
// the whole answer. Returns the answer; an error event throws.
async function streamQuery(body, onEvent) {
  const headers = {"Content-Type": "application/json", ...(token ? {Authorization: `Bearer ${token}`} : {})};
  const response = await fetch(route("/api/query"), {method: "POST", headers, body: JSON.stringify({...body, stream: true})});
  if (!response.ok) {
    const data = await response.json();
    throw new Error(data.error || response.statusText);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) throw new Error("the stream ended before the answer");
    buffered += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const event = JSON.parse(buffered.slice(0, end).replace(/^data: /, ""));
      buffered = buffered.slice(end + 2);
      if (event.event === "error") throw new Error(event.error);
      if (event.event === "answer") {
        window.streamLog.push({event: "answer", ms: performance.now(), answerState: $("answer").dataset.state});
        return event.answer;
      }
      onEvent(event);
    }
  }
}

// What arrived when, for the browser test and anyone timing the page: [{event, tool, ms, answerState}].
window.streamLog = [];

function showEvent(event) {
  window.streamLog.push({event: event.event, tool: event.tool, ms: performance.now(), answerState: $("answer").dataset.state});
  if (event.event === "admitted") {
    $("status").textContent = event.expected_wait_s >= 1 ? `in line, about ${Math.round(event.expected_wait_s)} s…` : "thinking…";
  }
  if (event.event === "step") {
    const item = document.createElement("li");
    item.className = "live-step";
    item.append(text("span", event.tool, "tool"), text("span", `  ${event.seconds.toFixed(2)}s`, "muted"));
    if (event.summary) item.append(text("div", event.summary, "muted"));
    $("timeline").append(item);
    $("status").textContent = `thinking… ${event.tool} done`;
  }
}

async function loadSettings() {
  showSettings(await api("/api/settings"));
  const stats = await api("/api/graph/stats");
  const by = {};
  for (const p of stats.partitions) for (const [name, n] of Object.entries(p.extractors || {})) by[name] = (by[name] || 0) + n;
  const facts = Object.entries(by).map(([name, n]) => `${n} by ${name}`).join(", ");
  $("stats").textContent = `${stats.nodes} nodes, ${stats.edges} edges (${facts}), ${stats.partitions.length} partition(s)`;
}

// The saved page settings are an overlay on params.yaml: always shown, one click to drop.
function showSettings(view) {
  $("allow-enrich").checked = Boolean(token) && view.settings.allow_enrich;
  $("allow-enrich").disabled = !token;
  $("allow-enrich").title = token ? "" : "read-only: open the address the server printed (with #token=...) to enrich";
  const saved = Object.entries(view.overlay).flatMap(([s, kv]) => Object.entries(kv).map(([k, v]) => `${s}.${k}=${v}`));
  $("overlay").textContent = saved.length ? `page settings over params.yaml: ${saved.join(", ")}` : "params.yaml settings";
  $("overlay-reset").hidden = !saved.length;
}

function renderCitations(citations) {
  const list = $("citations");
  list.replaceChildren();
  citations.forEach((c, i) => {
    const item = document.createElement("li");
    const link = text("a", c.title || c.fact || c.chunk_id);
    link.dataset.chunk = c.chunk_id;
    link.addEventListener("click", () => openChunk(c.chunk_id));
    item.append(link, text("div", c.evidence.length > 240 ? c.evidence.slice(0, 240) + "…" : c.evidence, "muted"));
    list.append(item);
  });
}

// The line that states the answer, highlighted inside its passage (a few lines of context either side);
// none: the answer is not written in what was read.
function renderQuote(quote, citations) {
  const box = $("quote");
  box.replaceChildren();
  if (!quote) {
    box.append(text("span", "No line of what was read states this answer.", "unsure"));
    return;
  }
  const cited = (citations.find((c) => c.chunk_id === quote.chunk_id) || {}).evidence || quote.text;
  const passage = cited.replace(/\s+/g, " ");  // the quote's whitespace is made single, as here
  const at = Math.max(passage.indexOf(quote.text), 0);
  const before = passage.slice(Math.max(at - 160, 0), at);
  const after = passage.slice(at + quote.text.length, at + quote.text.length + 160);
  const source = text("a", quote.doc_id, "muted");
  source.addEventListener("click", () => openChunk(quote.chunk_id));
  box.append(source, text("span", (at > 160 ? "…" : "") + before), text("mark", quote.text), text("span", after + (after.length === 160 ? "…" : "")));
}

// A planned question's hops, in order: each sub-question, its answer, whether what it read states it,
// and its passages (a click opens one).
function renderChain(chain) {
  const list = $("chain");
  list.replaceChildren();
  (chain || []).forEach((hop) => {
    const item = document.createElement("li");
    item.dataset.hop = hop.hop;
    item.append(text("span", `${hop.question} → `), text("strong", hop.answer || "(no answer)"));
    item.append(text("span", hop.grounded ? " (read in its passage)" : " (not found in what it read)", hop.grounded ? "muted" : "unsure"));
    if (hop.learned) item.append(text("span", ` (learned earlier: fact ${hop.learned})`, "learned"));
    hop.chunk_ids.forEach((chunkId) => {
      const link = text("a", ` [${chunkId}]`);
      link.dataset.chunk = chunkId;
      link.addEventListener("click", () => openChunk(chunkId));
      item.append(link);
    });
    list.append(item);
  });
}

async function openChunk(chunkId) {
  const view = $("chunk-view");
  try {
    const chunk = await api(`/api/chunk/${encodeURIComponent(chunkId)}`);
    view.textContent = `${chunk.title}\n\n${chunk.text}`;
    view.dataset.chunk = chunkId;
    view.classList.remove("muted");
  } catch (err) {
    view.textContent = err.message;
  }
}

// The evidence tree the reader read: entities (the question's own orange), the facts and links between
// them, and as squares exactly the passages in the reader's context (a click opens the passage).
const STRUCTURAL = new Set(["structural", "mention"]);

function renderGraph(subgraph, citations) {
  const entries = new Set(subgraph.entry_ids || []);
  const read = new Set(subgraph.fact_lines || []);
  const nodes = subgraph.nodes.map((n) => ({data: n.kind === "passage"
    ? {id: n.id, label: n.name, chunk: n.chunk_id, passage: 1}
    : {id: n.id, label: n.name, entry: entries.has(n.id) ? 1 : 0}}));
  const edges = subgraph.edges.map((e, i) => ({data: {id: `e${i}`, source: e.src, target: e.dst,
    label: e.kind === "relation" ? e.relation : "", structural: STRUCTURAL.has(e.kind) ? 1 : 0,
    link: e.kind === "title" ? 1 : 0, read: read.has(e.id) ? 1 : 0, deep: e.extractor === "llm" ? 1 : 0}}));
  if (window.cy) window.cy.destroy();
  window.cy = cytoscape({
    container: $("graph"),
    elements: [...nodes, ...edges],
    layout: {name: "cose", animate: false, fit: true, padding: 20},
    style: [
      {selector: "node", style: {label: "data(label)", "font-size": 10, "background-color": "#7a8bd6", width: 16, height: 16}},
      {selector: "node[entry = 1]", style: {"background-color": "#e08a2c"}},
      {selector: "node[passage = 1]", style: {shape: "round-rectangle", "background-color": "#9fc5a8", "font-size": 9,
                                              color: "#2f5f3a", width: 14, height: 14}},
      {selector: "edge", style: {label: "data(label)", "font-size": 8, "curve-style": "bezier", "target-arrow-shape": "triangle",
                                 width: 1.5, "line-color": "#aab", "target-arrow-color": "#aab", color: "#556"}},
      {selector: "edge[deep = 1]", style: {"line-color": "#8a5cc2", "target-arrow-color": "#8a5cc2"}},
      {selector: "edge[read = 1]", style: {"line-color": "#e08a2c", "target-arrow-color": "#e08a2c", width: 2.2}},
      {selector: "edge[structural = 1]", style: {width: 0.8, "line-style": "dashed", "target-arrow-shape": "none", opacity: 0.5}},
      {selector: "edge[link = 1]", style: {width: 0.8, "line-color": "#cde3d2", "target-arrow-shape": "none"}},
    ],
  });
  window.cy.on("tap", "node[passage = 1]", (event) => openChunk(event.target.data("chunk")));
  $("graph").dataset.nodes = String(nodes.length);
}

function renderTimeline(trace) {
  const list = $("timeline");
  list.replaceChildren();
  for (const step of trace.steps) {
    const item = document.createElement("li");
    item.append(text("span", step.tool, "tool"), text("span", `  ${step.seconds.toFixed(2)}s`, "muted"));
    const out = step.outputs || {};
    const details = [];
    if (out.perplexity !== undefined) details.push(`perplexity ${out.perplexity}`);
    if (out.answer) details.push(`answer "${out.answer}"`);
    if (out.decision) details.push(`decision ${out.decision}`);
    if (out.reason) details.push(out.reason);
    if (out.facts !== undefined) details.push(`${out.facts} evidence`);
    if (out.kind) details.push(`${out.kind}: ${(out.entities || []).join(", ")}`);
    if (out.expansion_query) details.push(`search "${out.expansion_query}"`);
    if (details.length) item.append(text("div", details.join(" · "), "muted"));
    if (out.partition) item.append(text("span", `partition ${out.partition}`, "partition"));
    list.append(item);
  }
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  $("status").textContent = "thinking…";
  $("answer").dataset.state = "pending";
  $("answer").textContent = "";
  $("quote").replaceChildren();
  $("confidence").textContent = "";
  $("timeline").replaceChildren();
  window.streamLog = [];
  try {
    const data = await streamQuery({question, allow_enrich: $("allow-enrich").checked, conversation_id: conversationId}, showEvent);
    conversationId = data.conversation_id;
    window.lastAnswer = data;
    $("answer").textContent = data.answer || "(no answer)";
    $("answer").classList.toggle("unsure", !data.sure);
    $("confidence").textContent = data.confidence == null ? "" : `confidence: ${data.confidence.toFixed(2)} (${data.sure ? "sure" : "unsure"})`;
    $("resolved").textContent = data.resolved_question !== question ? `asked as: ${data.resolved_question}` : "";
    renderChain(data.chain);
    renderQuote(data.quote, data.citations);
    renderCitations(data.citations);
    renderGraph(data.subgraph, data.citations);
    renderTimeline(data.trace);
    const queued = (data.queued || []).length ? `; enrichment queued (${data.queued.join(", ")}): the graph grows after this answer` : "";
    const recalled = data.trace.steps.filter((s) => s.tool === "Recall" && s.outputs.use !== "gone" && s.inputs.query === data.question);
    const learned = recalled.length ? `; answered from a learned fact (${recalled[0].outputs.fact}, learned in ${recalled[0].outputs.partition})` : "";
    $("status").textContent = `${data.trace.seconds.toFixed(1)}s, ${data.trace.partitions_written.length} partition(s) written${queued}${learned}`;
    $("answer").dataset.state = "done";
    loadSettings();
  } catch (err) {
    $("status").textContent = `error: ${err.message}`;
    $("answer").dataset.state = "error";
  }
}

$("ask-form").addEventListener("submit", ask);
$("allow-enrich").addEventListener("change", (e) => api("/api/settings", {allow_enrich: e.target.checked}).then(showSettings).catch(() => {}));
$("overlay-reset").addEventListener("click", () => api("/api/settings", undefined, "DELETE").then(showSettings).catch(() => {}));
$("new-conversation").addEventListener("click", () => { conversationId = null; $("resolved").textContent = ""; });
$("workspace").addEventListener("change", (e) => {
  useWorkspace(e.target.value);
  for (const id of ["answer", "quote", "citations", "chain", "timeline", "confidence", "resolved"]) $(id).replaceChildren();
  $("answer").dataset.state = "empty";
  $("status").textContent = "";
  loadSettings().catch((err) => { $("status").textContent = `error: ${err.message}`; });
});
pickWorkspace().then(loadSettings).catch((err) => { $("status").textContent = `error: ${err.message}`; });
