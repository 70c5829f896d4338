// verifymcp config scan, in the browser. The scanner is verifymcp's Go
// code compiled to WebAssembly (configscan.wasm.js holds it, gzip and
// base64, so that the page also works opened from disk); this file reads
// the files the user gives it, hands their bytes to the scanner and draws
// what comes back. It makes no request and stores nothing: every value
// from a file is put on the page as text, never as markup.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const SEVERITIES = ["critical", "high", "medium", "low", "info"];
  let scanner = null;
  let given = []; // the files read so far: {name, bytes, client}
  let last = null; // the last result: {report, sarif, errors, servers}

  // visible shows text as the CLI's table does: control, bidirectional
  // and other invisible format characters as escapes, so that a value
  // reads as what it is.
  function visible(s) {
    return String(s).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu, (c) => {
      switch (c) {
        case "\n": return "\\n";
        case "\t": return "\\t";
        case "\r": return "\\r";
      }
      const n = c.codePointAt(0);
      if (n < 0xa0) return "\\x" + n.toString(16).padStart(2, "0");
      return "\\u" + n.toString(16).padStart(4, "0");
    });
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }

  function status(text, isError) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("error", !!isError);
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  async function load() {
    if (typeof Go !== "function" || typeof globalThis.verifymcpWasmGzip !== "string") {
      throw new Error("the scanner's files are missing next to this page (wasm_exec.js, configscan.wasm.js)");
    }
    const packed = Uint8Array.from(atob(globalThis.verifymcpWasmGzip), (c) => c.charCodeAt(0));
    const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
    const module = await new Response(stream).arrayBuffer();
    const go = new Go();
    const ready = new Promise((resolve) => { globalThis.verifymcpReady = resolve; });
    const { instance } = await WebAssembly.instantiate(module, go.importObject);
    go.run(instance);
    await ready;
    return globalThis.verifymcpConfigScan;
  }

  function fillClients(s) {
    const select = $("client");
    for (const c of JSON.parse(s.clients)) {
      select.append(el("option", { value: c.id }, c.name + " (" + c.id + ")"));
    }
  }

  function fillCatalog(s) {
    const list = $("catalog");
    for (const c of JSON.parse(s.catalog)) {
      list.append(el("li", {}, el("code", {}, c.code), " (" + c.severity + "): " + c.description));
    }
  }

  function same(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  // add keeps a file for the next scan; the same name with the same bytes
  // (a file dropped again) is kept once.
  function add(name, bytes, client) {
    if (!given.some((g) => g.name === name && g.client === client && same(g.bytes, bytes))) {
      given.push({ name, bytes, client });
    }
  }

  async function addFiles(fileList) {
    const client = $("client").value;
    const unread = [];
    for (const f of fileList) {
      const name = f.webkitRelativePath || f.name;
      try {
        add(name, new Uint8Array(await f.arrayBuffer()), client);
      } catch (err) {
        unread.push(name + ": the browser could not read it (a folder?)");
      }
    }
    scan();
    if (unread.length) {
      status(unread.join("; "), true);
    }
  }

  function addPasted() {
    const text = $("paste").value;
    if (text.trim() === "") {
      status("Paste a config first.", true);
      return;
    }
    const name = $("paste-name").value.trim() || "pasted.json";
    add(name, new TextEncoder().encode(text), $("client").value);
    scan();
  }

  function scan() {
    if (!scanner || given.length === 0) return;
    const res = JSON.parse(scanner.scan(given));
    if (res.error) {
      status("The scanner failed: " + res.error, true);
      return;
    }
    last = res;
    render(res);
    // How many times the page has drawn a result: a test (or a script
    // driving the page) waits for it to move.
    document.body.dataset.scans = String(Number(document.body.dataset.scans || 0) + 1);
  }

  function clear() {
    given = [];
    last = null;
    $("results").hidden = true;
    $("errors").hidden = true;
    for (const id of ["error-list", "findings", "file-list", "server-list"]) $(id).replaceChildren();
    $("files").value = "";
    status("Ready. Nothing is read until you give it a file.");
  }

  function render(res) {
    const errors = $("error-list");
    errors.replaceChildren(...res.errors.map((e) => el("li", { class: "mono" }, visible(e))));
    $("errors").hidden = res.errors.length === 0;
    if (!res.report) {
      $("results").hidden = true;
      for (const id of ["findings", "file-list", "server-list"]) $(id).replaceChildren();
      status(plural(res.errors.length, "file", "files") + " could not be read.", true);
      return;
    }
    const rep = JSON.parse(res.report);
    const sum = rep.summary;
    const counts = SEVERITIES.map((s) => s + " " + (sum.findings[s] || 0)).join(", ");
    const total = SEVERITIES.reduce((n, s) => n + (sum.findings[s] || 0), 0);
    $("summary-line").textContent = plural(sum.files, "file", "files") + ", " + plural(sum.servers, "server", "servers") +
      ", " + plural(total, "finding", "findings") + " (" + counts + ")";
    $("statement").textContent = sum.statement;
    renderFindings(rep);
    renderFiles(rep);
    renderServers(res.servers);
    $("results").hidden = false;
    let msg = "Read " + plural(rep.files.length, "file", "files") + ": " + plural(total, "finding", "findings") + ".";
    if (res.errors.length) msg += " " + plural(res.errors.length, "file", "files") + " could not be read.";
    status(msg, res.errors.length > 0);
  }

  function renderFindings(rep) {
    const box = $("findings");
    box.replaceChildren();
    if (rep.findings.length === 0) {
      // What that means is the statement above, the CLI's own words.
      box.append(el("p", { id: "no-findings" }, "No findings."));
      return;
    }
    for (const sev of SEVERITIES) {
      const fs = rep.findings.filter((f) => f.severity === sev);
      if (fs.length === 0) continue;
      const group = el("div", { class: "severity", "data-severity": sev },
        el("h3", {}, sev.toUpperCase(), el("span", { class: "meta" }, "(" + fs.length + ")")));
      for (const f of fs) {
        const head = el("p", { class: "head" },
          el("span", { class: "sev" }, f.severity),
          el("span", { class: "pos mono" }, visible(f.file) + ":" + f.line),
          el("span", { class: "server" }, visible(f.server)),
          el("code", { class: "code" }, f.code),
          f.key ? el("span", { class: "key mono" }, visible(f.key)) : null);
        const item = el("article", { class: "finding sev-" + sev },
          head,
          el("p", { class: "message" }, visible(f.message)),
          el("p", {}, el("span", { class: "label" }, "Evidence: "), el("span", { class: "evidence mono" }, visible(f.evidence))),
          f.remediation ? el("p", { class: "fix" }, el("span", { class: "label" }, "How to fix: "), f.remediation) : null,
          f.ignored ? el("p", { class: "meta" }, "accepted by an ignore entry") : null);
        group.append(item);
      }
      box.append(group);
    }
  }

  function launch(s) {
    if (!s.command) return visible(s.url || "-");
    const parts = [visible(s.command)];
    for (let a of s.args) {
      if (a === "" || /[ "']/.test(a)) a = JSON.stringify(a);
      parts.push(visible(a));
    }
    return parts.join(" ");
  }

  function renderFiles(rep) {
    const box = $("file-list");
    box.replaceChildren();
    const names = {};
    for (const c of JSON.parse(scanner.clients)) names[c.id] = c.name;
    for (const f of rep.files) {
      const rows = f.servers.map((s) => el("tr", {},
        el("td", {}, visible(s.name)), el("td", {}, s.transport), el("td", {}, String(s.line)),
        el("td", { class: "mono" }, launch(s))));
      box.append(el("h3", { class: "mono" }, visible(f.path)),
        el("p", { class: "meta" }, "read as " + (names[f.client] || f.client) + " (" + f.client + "), " +
          plural(f.servers.length, "server", "servers")),
        el("div", { class: "table-wrap" }, el("table", { class: "files" },
          el("thead", {}, el("tr", {}, el("th", {}, "Server"), el("th", {}, "Transport"), el("th", {}, "Line"),
            el("th", {}, "Command or URL"))),
          el("tbody", {}, ...rows))));
      for (const i of f.inputs || []) {
        box.append(el("p", { class: "meta" }, "input " + visible(i.id) + " (" + visible(i.type) + ", " +
          (i.password ? "password" : "not a password") + ") line " + i.line));
      }
      for (const u of f.unknown || []) {
        box.append(el("p", { class: "meta" }, "not understood: " + visible(typeof u === "string" ? u : JSON.stringify(u))));
      }
    }
  }

  function renderServers(servers) {
    const list = $("server-list");
    list.replaceChildren();
    for (const s of servers) {
      const where = visible(s.server) + " (" + visible(s.file) + ":" + s.line + ")";
      if (s.command) {
        list.append(el("li", { "data-target": s.target }, el("strong", {}, where), " runs ",
          el("code", {}, visible(s.target)), el("pre", { class: "command" }, visible(s.command))));
      } else {
        list.append(el("li", { class: "not" }, el("strong", {}, where), ": not scanned, " + visible(s.not_scanned)));
      }
    }
  }

  // download offers text as a file. The file is made here, in memory; a
  // blob: address names it, and nothing is sent anywhere.
  function download(text, name, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = el("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    document.body.dataset.downloads = String(Number(document.body.dataset.downloads || 0) + 1);
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  function wire() {
    $("files").addEventListener("change", async (e) => {
      await addFiles([...e.target.files]);
      // So that picking the same file again (after editing it) reads it again.
      e.target.value = "";
    });
    const drop = $("drop");
    drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      addFiles(e.dataTransfer.files);
    });
    // A file dropped beside the zone must not make the browser open it.
    window.addEventListener("dragover", (e) => e.preventDefault());
    window.addEventListener("drop", (e) => e.preventDefault());
    $("paste-scan").addEventListener("click", addPasted);
    $("clear").addEventListener("click", clear);
    $("download-json").addEventListener("click", () => last && download(last.report, "verifymcp-config.json", "application/json"));
    $("download-sarif").addEventListener("click", () => last && download(last.sarif, "verifymcp-config.sarif", "application/sarif+json"));
  }

  wire();
  load().then((s) => {
    scanner = s;
    fillClients(s);
    fillCatalog(s);
    $("version").textContent = "verifymcp " + s.version + ", running in this tab.";
    document.body.dataset.ready = "true";
    status("Ready. Nothing is read until you give it a file.");
  }).catch((err) => {
    status("The scanner did not load: " + err.message, true);
  });
})();
