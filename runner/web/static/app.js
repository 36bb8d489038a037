// hookline's inbox and trace pages: plain DOM, no framework, no build step.
// Everything a run contains is put on the page as text (textContent), never as HTML.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

function notice(message, isError) {
  const box = document.getElementById("notice");
  box.textContent = message;
  box.className = isError ? "notice error" : "notice";
  box.hidden = !message;
}

async function getJSON(path) {
  const response = await fetch(path, { credentials: "same-origin" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// ---- the inbox -------------------------------------------------------------------

function fieldFor(name, schema, value, required) {
  const type = schema && schema.type;
  const label = el("label", {}, el("span", { text: name + (required ? " *" : "") + " " }));
  let input;
  if (type === "boolean") {
    input = el("input", { type: "checkbox", "data-field": name, "data-type": "boolean" });
    input.checked = Boolean(value);
  } else if (type === "integer" || type === "number") {
    input = el("input", { type: "number", step: type === "integer" ? "1" : "any",
                          "data-field": name, "data-type": type });
    if (value !== undefined && value !== null) input.value = String(value);
  } else if (type === "string") {
    input = el("input", { type: "text", "data-field": name, "data-type": "string" });
    if (value !== undefined && value !== null) input.value = String(value);
  } else {
    input = el("textarea", { rows: 2, "data-field": name, "data-type": "json" });
    if (value !== undefined) input.value = JSON.stringify(value);
  }
  label.append(input);
  return label;
}

function schemaForm(schema, values) {
  const form = el("div", { className: "form" });
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const names = Object.keys(properties);
  if (names.length === 0) {
    form.append(fieldFor("(value as JSON)", null, values || {}, false));
  }
  for (const name of names) {
    form.append(fieldFor(name, properties[name], values ? values[name] : undefined,
                         required.has(name)));
  }
  return form;
}

function readForm(form) {
  const value = {};
  for (const input of form.querySelectorAll("[data-field]")) {
    const name = input.getAttribute("data-field");
    const type = input.getAttribute("data-type");
    if (name === "(value as JSON)") return JSON.parse(input.value || "{}");
    if (type === "boolean") value[name] = input.checked;
    else if (input.value === "") continue;
    else if (type === "integer" || type === "number") value[name] = Number(input.value);
    else if (type === "json") value[name] = JSON.parse(input.value);
    else value[name] = input.value;
  }
  return value;
}

const LABELS = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Answer" };

function requestCard(run, request) {
  const card = el("div", { className: "request", "data-request": request.id });
  card.append(el("div", { className: "reason", text: request.reason || "(no reason given)" }));
  const who = request.paused_by
    ? "paused by " + request.paused_by
    : request.chain.length
      ? "paused by one of the before_tool chain: " + request.chain.join(", ")
      : "paused by a before_tool hook";
  card.append(el("div", { className: "muted",
    text: `${request.kind === "input" ? "question from" : "call of"} ${request.tool}` +
          ` (call ${request.call_id}, agent ${request.agent}) · ${who}` }));
  if (request.hidden) {
    card.append(el("div", { className: "muted", text: "arguments hidden: content capture is off" }));
  } else {
    card.append(el("pre", { text: JSON.stringify(request.args, null, 2) }));
  }
  const choices = el("div", { className: "choices" });
  const extra = el("div");
  for (const kind of request.allowed) {
    const input = el("input", { type: "radio", name: "decision-" + request.id, value: kind });
    input.addEventListener("change", () => {
      extra.replaceChildren();
      if (kind === "edit") {
        extra.append(schemaForm(request.args_schema, request.args));
      } else if (kind === "respond") {
        extra.append(schemaForm(request.schema, null));
      } else if (kind === "reject") {
        const box = el("div", { className: "form" });
        box.append(el("label", {}, "message ", el("input", { type: "text", "data-message": "" })));
        extra.append(box);
      }
    });
    choices.append(el("label", {}, input, " " + (LABELS[kind] || kind)));
  }
  card.append(choices, extra);
  return card;
}

function decisionOf(card, request) {
  const chosen = card.querySelector(`input[name="decision-${request.id}"]:checked`);
  if (!chosen) throw new Error(`choose a decision for: ${request.reason}`);
  const kind = chosen.value;
  if (kind === "approve") return { kind };
  if (kind === "reject") {
    const message = card.querySelector("[data-message]");
    return { kind, message: (message && message.value) || "rejected" };
  }
  const form = card.querySelector(".form");
  try {
    const value = readForm(form);
    return kind === "edit" ? { kind, args: value } : { kind, value };
  } catch (error) {
    throw new Error(`the form for "${request.reason}" is not valid JSON: ${error.message}`);
  }
}

async function submit(run, section) {
  const result = section.querySelector(".result");
  const button = section.querySelector("button[data-submit]");
  const decisions = {};
  try {
    for (const request of run.pending) {
      const card = section.querySelector(`[data-request="${request.id}"]`);
      decisions[request.id] = decisionOf(card, request);
    }
  } catch (error) {
    result.textContent = error.message;
    return;
  }
  button.disabled = true;
  result.textContent = "resuming…";
  const response = await fetch(`/api/runs/${encodeURIComponent(run.run_id)}/decide`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-hookline-csrf": cookie("hookline_csrf") },
    body: JSON.stringify({ decisions }),
  });
  const body = await response.json();
  if (response.status === 202) {
    result.replaceChildren("decided: the run goes on · ",
      el("a", { className: "trace-link", href: body.trace, text: "watch it in the trace" }));
    section.setAttribute("data-decided", "");
  } else {
    button.disabled = response.status === 409;
    result.textContent = `${response.status}: ${body.error}`;
    section.setAttribute("data-refused", String(response.status));
  }
}

function runSection(run) {
  const section = el("section", { className: "run", "data-run": run.run_id });
  const when = run.time ? new Date(run.time * 1000).toLocaleString() : "unknown";
  section.append(el("h2", { text: `Run ${run.run_id.slice(0, 12)} · agent ${run.agent}` }));
  section.append(el("div", { className: "muted",
    text: `user ${run.user_id} · session ${run.session_id} · paused ${when} · ` }),
    el("a", { href: `/trace/${encodeURIComponent(run.run_id)}`, text: "trace" }));
  for (const request of run.pending) section.append(requestCard(run, request));
  const button = el("button", { type: "button", "data-submit": run.run_id, text: "Submit decisions" });
  button.addEventListener("click", () => submit(run, section));
  section.append(el("p", {}, button, el("span", { className: "result" })));
  return section;
}

const POLL_MS = 3000; // how often the inbox asks for runs paused (or decided) elsewhere

async function refreshInbox(box) {
  const body = await getJSON("/api/paused");
  if (!body.content) notice("Content capture is off: arguments and results are hidden.", false);
  const waiting = new Set(body.runs.map((run) => run.run_id));
  for (const section of box.querySelectorAll("section[data-run]")) {
    const gone = !waiting.has(section.getAttribute("data-run"));
    if (gone && !section.hasAttribute("data-decided") && !section.hasAttribute("data-gone")) {
      section.setAttribute("data-gone", "");
      section.querySelector("button[data-submit]").disabled = true;
      section.querySelector(".result").textContent = "decided elsewhere: it no longer waits";
    }
  }
  for (const run of body.runs) {
    if (!box.querySelector(`section[data-run="${CSS.escape(run.run_id)}"]`)) {
      box.append(runSection(run));
    }
  }
  const empty = box.querySelector(".empty");
  const shown = box.querySelectorAll("section[data-run]:not([data-gone]):not([data-decided])");
  if (shown.length === 0 && !empty) {
    box.append(el("p", { className: "muted empty", text: "Nothing waits." }));
  } else if (shown.length > 0 && empty) {
    empty.remove();
  }
}

async function inbox() {
  const box = document.getElementById("runs");
  box.replaceChildren();
  const poll = async () => {
    try {
      await refreshInbox(box);
    } catch (error) {
      notice(error.message, true);
    }
    setTimeout(poll, POLL_MS);
  };
  await poll();
}

// ---- the trace -------------------------------------------------------------------

function hookLine(record) {
  const who = record.callback ? ` · ${record.callback}` : "";
  const took = record.duration !== undefined ? ` · ${(record.duration * 1000).toFixed(2)} ms` : "";
  const error = record.error ? ` · ${record.error.type}` : "";
  return el("li", { className: "hook" }, `${record.point}${who} → `,
    el("span", { className: "tag " + record.outcome, text: record.outcome }),
    `${took}${error}${record.attempt > 1 ? " · attempt " + record.attempt : ""}`);
}

function eventLine(text) {
  return el("li", { className: "event", text });
}

function newNode(label, meta) {
  return { label, meta: meta || "", lines: [], start: null, end: null, children: [] };
}

function buildTree(records) {
  const branches = new Map();
  let finished = null;
  const sorted = [...records].sort((a, b) => (a.time - b.time) || (a.seq - b.seq));
  for (const r of sorted) {
    if (r.kind === "finished" || r.kind === "failed") { finished = r; continue; }
    if (r.kind === "started") continue;
    if (!branches.has(r.branch)) {
      const made = { agent: r.agent, branch: r.branch, items: [], calls: new Map(),
                     model: null, lastTool: null, nested: false };
      branches.set(r.branch, made);
      // a sub-agent's turn sits under the parent's latest call of the tool named after it
      const cut = r.branch.lastIndexOf("/");
      const parent = cut > 0 ? branches.get(r.branch.slice(0, cut)) : undefined;
      const host = parent && [...parent.calls.values()].reverse().find((n) => n.name === r.agent);
      if (host) { host.children.push(made); made.nested = true; }
    }
    const b = branches.get(r.branch);
    const tool = (id) => {
      if (!b.calls.has(id)) {
        const node = newNode("tool call " + id);
        node.call = id;
        b.calls.set(id, node);
        b.items.push(node);
      }
      b.lastTool = b.calls.get(id);
      return b.lastTool;
    };
    const model = () => {
      if (!b.model) { b.model = newNode("model step"); b.items.push(b.model); }
      return b.model;
    };
    const at = (node) => {
      if (node.start === null) node.start = r.time;
      node.end = r.time;
      return node;
    };
    switch (r.kind) {
      case "hook":
        if (r.call_id) {
          const node = at(tool(r.call_id));
          if (r.tool) node.name = r.tool;
          node.lines.push(hookLine(r));
        }
        else if (r.point === "before_model" || r.point === "wrap_model") {
          // a model step starts with its before hooks; its attempt joins the same node
          if (!b.model || b.model.attempted || r.point === "before_model") {
            b.model = newNode("model step");
            b.items.push(b.model);
          }
          at(b.model).lines.push(hookLine(r));
        } else if (r.point.includes("model") || r.point.includes("output")) at(model()).lines.push(hookLine(r));
        else b.items.push(hookLine(r));
        break;
      case "user":
        b.items.push(eventLine("asked" + (r.hidden ? "" : ": " + r.message.content)));
        break;
      case "model_attempt":
        if (!b.model || b.model.attempted) {
          b.model = newNode("model step");
          b.items.push(b.model);
        }
        b.model.attempted = true;
        b.model.label = `model step · attempt ${r.attempt}`;
        at(b.model); // stored records keep no request messages: say how many only when sent
        if (r.messages.length) b.model.lines.push(eventLine(`called with ${r.messages.length} messages`));
        break;
      case "model_response": {
        const node = at(model());
        const usage = r.usage ? ` · ${r.usage.input_tokens} in / ${r.usage.output_tokens} out tokens` : "";
        const calls = r.tool_calls.map((c) => c.name).join(", ");
        node.lines.push(eventLine(`answered${calls ? " with calls: " + calls : ""}` +
          `${r.hidden ? "" : r.text ? ": " + r.text : ""}${usage}`));
        break;
      }
      case "tool_call": {
        const node = at(tool(r.call_id));
        node.label = `tool ${r.call.name} (call ${r.call_id})`;
        node.name = r.call.name;
        if (!r.hidden) node.lines.push(el("li", {}, el("pre", { text: JSON.stringify(r.call.args) })));
        break;
      }
      case "tool_attempt":
        if (r.tool) tool(r.call_id).name = r.tool;
        at(tool(r.call_id)).lines.push(eventLine(`ran · attempt ${r.attempt}` +
          (r.hidden ? "" : " with " + JSON.stringify(r.args))));
        break;
      case "tool_result":
        at(tool(r.call_id)).lines.push(eventLine((r.is_error ? "error result" : "result") +
          (r.hidden ? "" : ": " + r.content)));
        break;
      case "pause":
        at(tool(r.call_id)).lines.push(eventLine(`paused: ${r.request.reason}`));
        break;
      case "error": {
        const node = r.operation === "tool" && b.lastTool ? b.lastTool : r.operation === "model" ? model() : null;
        const line = eventLine(`${r.operation} failed (attempt ${r.attempt}): ${r.error.type}` +
          (r.error.message ? ": " + r.error.message : ""));
        (node ? at(node).lines : b.items).push(line);
        break;
      }
      case "retry":
      case "fallback": {
        const node = r.operation === "tool" && b.lastTool ? b.lastTool : r.operation === "model" ? model() : null;
        const line = eventLine(r.kind === "retry"
          ? `retry → attempt ${r.attempt} after ${r.delay}s${r.changed ? " (changed)" : ""}`
          : `fallback for attempt ${r.attempt}`);
        (node ? at(node).lines : b.items).push(line);
        break;
      }
      case "discarded":
        at(model()).lines.push(eventLine(`attempt ${r.attempt} discarded (${r.reason})`));
        break;
      case "shadow": {
        const line = eventLine(`shadow ${r.callback} at ${r.point}: live ${r.live}, would ${r.would}`);
        (r.call_id ? at(tool(r.call_id)).lines : b.items).push(line);
        break;
      }
      case "stop":
        b.items.push(eventLine(`stopped: ${r.reason}`));
        break;
      default:
        b.items.push(eventLine(r.kind));
    }
  }
  return { branches: [...branches.values()], finished };
}

function renderNode(node) {
  const took = node.start !== null && node.end > node.start
    ? ` · ${((node.end - node.start) * 1000).toFixed(1)} ms` : "";
  return el("li", { className: "node", "data-call": node.call },
    el("span", { className: "label", text: node.label }),
    el("span", { className: "meta", text: took }),
    el("ul", {}, ...node.lines, ...node.children.map(renderBranch)));
}

function renderBranch(b) {
  return el("li", { className: "node", "data-branch": b.branch },
    el("span", { className: "label", text: `agent ${b.agent}${b.nested ? " (sub-agent)" : ""}` }),
    el("span", { className: "meta", text: b.branch }),
    el("ul", {}, ...b.items.map((item) => (item.lines ? renderNode(item) : item))));
}

function renderTrace(records) {
  const { branches, finished } = buildTree(records);
  const tree = el("ul", { className: "tree" });
  for (const b of branches) {
    if (!b.nested) tree.append(renderBranch(b));
  }
  document.getElementById("tree").replaceChildren(tree);
  const status = document.getElementById("status");
  if (finished) {
    const state = finished.kind === "failed" ? "failed" : finished.status;
    const usage = finished.usage ? ` · ${finished.usage.input_tokens} in / ${finished.usage.output_tokens} out tokens` : "";
    const output = finished.output ? ` · ${finished.output}` : "";
    status.textContent = (finished.kind === "failed" ? `failed: ${finished.error}` : `finished: ${state}`) +
      usage + output;
    status.className = "status " + state;
  }
}

function trace() {
  const runId = decodeURIComponent(location.pathname.split("/").pop());
  document.getElementById("run-id").textContent = runId;
  const status = document.getElementById("status");
  const records = [];
  const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events`);
  source.addEventListener("open", () => {
    if (!records.length) status.textContent = "waiting for records…";
  });
  source.addEventListener("record", (message) => {
    records.push(JSON.parse(message.data));
    if (status.className === "status") status.textContent = "running…";
    renderTrace(records);
  });
  source.addEventListener("end", () => {
    source.close();
    if (status.className !== "status") return;
    // a stored run's records end with its events: its last root answer says how it ended
    // (a final answer asks for no tool call; without one, a pause means it waits)
    const last = records.filter((r) => r.kind === "model_response" && !r.branch.includes("/") &&
                                       r.tool_calls.length === 0).pop();
    const paused = !last && records.some((r) => r.kind === "pause");
    status.textContent = "recorded run, not running here" +
      (paused ? " · paused" : last ? ` · answered${last.hidden ? "" : ": " + last.text}` : "");
    status.className = "status recorded";
  });
  source.addEventListener("error", () => {
    source.close();
    if (!records.length) notice("no records of this run here", true);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.getAttribute("data-page");
  if (page === "inbox") inbox();
  else if (page === "trace") trace();
});
