// Zone catalog page: the info panel, upload and reload, and the catalog search.
(function () {
  "use strict";
  const infoPanel = document.getElementById("zone-info");
  if (!infoPanel) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const TYPE_LABELS = { public: "Public", marine: "Marine", fire: "Fire" };
  const PAGE_SIZE = 25;

  // JSON call; a FormData body goes as multipart (the browser sets the boundary).
  async function call(method, url, body) {
    const headers = { "Accept": "application/json" };
    if (method !== "GET") headers["X-CSRF-Token"] = csrf;
    const response = await fetch(url, { method: method, credentials: "same-origin", headers: headers, body: body });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) {
      throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    }
    return data;
  }

  function node(tag, className, text) {
    const el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function number(value) {
    return value === null || value === undefined ? "—" : Number(value).toLocaleString("en-US");
  }

  // Same wording as Jinja's filesizeformat(binary=True), used when the page is rendered.
  function fileSize(value) {
    if (value === null || value === undefined) return "—";
    if (value === 1) return "1 Byte";
    if (value < 1024) return value + " Bytes";
    const prefixes = ["KiB", "MiB", "GiB", "TiB"];
    for (let i = 0; i < prefixes.length; i++) {
      const unit = Math.pow(1024, i + 2);
      if (value < unit || i === prefixes.length - 1) return (1024 * value / unit).toFixed(1) + " " + prefixes[i];
    }
    return String(value);
  }

  function utcMinute(iso) {
    const when = new Date(iso);
    return isNaN(when) ? String(iso) : when.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  function codeOrText(cell, code, prefix, suffix) {
    cell.replaceChildren();
    if (prefix) cell.append(prefix);
    cell.append(node("code", "", code));
    if (suffix) cell.append(suffix);
  }

  // --- info panel --------------------------------------------------------------------------

  function renderInfo(data) {
    const families = data.families || [];
    families.forEach(function (info) {
      const table = infoPanel.querySelector('table[data-family="' + info.family + '"]');
      if (!table) return;
      const cell = function (name) { return table.querySelector('[data-info="' + name + '"]'); };
      const badge = cell("state");
      badge.textContent = info.database_rows ? "loaded" : "not loaded";
      badge.classList.toggle("muted", !info.database_rows);
      if (info.active_path) codeOrText(cell("active_path"), info.active_path);
      else cell("active_path").textContent = "none found";
      cell("file_size").textContent = fileSize(info.file_size);
      cell("dbf_records").textContent = number(info.dbf_records);
      cell("database_rows").textContent = number(info.database_rows);
      cell("cache_entries").textContent = number(info.cache_entries);
      if (info.applied_file) codeOrText(cell("applied"), info.applied_file, null, " at " + utcMinute(info.applied_at));
      else cell("applied").textContent = "never";
    });
    const empty = !families.some(function (info) { return info.database_rows; });
    const noFiles = !families.some(function (info) { return info.active_path; });
    document.getElementById("zone-info-empty").hidden = !empty;
    document.getElementById("zone-info-empty-files").hidden = noFiles;
    document.getElementById("zone-families").hidden = empty && noFiles;
    infoPanel.querySelector('[data-info="cache_size"]').textContent = number(data.cache_size);
  }

  function refreshInfo() {
    return call("GET", "/admin/zones/info").then(renderInfo);
  }

  // --- upload and reload -------------------------------------------------------------------

  const form = document.getElementById("zone-upload-form");
  const fileInput = document.getElementById("zone-file");
  const uploadButton = document.getElementById("zone-upload-button");
  const reloadButton = document.getElementById("zone-reload");
  const progress = document.getElementById("zone-progress");
  const status = document.getElementById("zone-admin-status");
  const canConfigure = !reloadButton.disabled;
  const maxBytes = Number(form.dataset.maxBytes) || 64 * 1024 * 1024;

  function busy(on) {
    progress.hidden = !on;
    if (!canConfigure) return;
    [fileInput, uploadButton, reloadButton].forEach(function (control) { control.disabled = on; });
  }

  function say(headline, lines, kind) {
    const items = (lines || []).map(function (line) { return node("li", "", line); });
    const list = node("ul");
    list.append.apply(list, items);
    status.replaceChildren(node("p", "", headline));
    if (items.length) status.append(list);
    status.classList.toggle("error", kind === "error");
    status.classList.toggle("ok", kind === "ok");
  }

  // After a change: the info panel, the search results and every picker show the new catalog.
  function afterChange() {
    const pickers = window.AlertStation && window.AlertStation.ZonePicker;
    if (pickers) pickers.refresh();
    runSearch(0);
    return refreshInfo().catch(function (err) {
      say("Applied, but the info panel could not be refreshed: " + err.message, [], "error");
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const file = fileInput.files[0];
    if (!file) { say("Choose a .dbf file first.", [], "error"); fileInput.focus(); return; }
    if (!/\.dbf$/i.test(file.name)) { say(file.name + " is not a .dbf file.", [], "error"); return; }
    if (file.size > maxBytes) {
      say(file.name + " is " + fileSize(file.size) + ", over the " + fileSize(maxBytes) + " limit.", [], "error");
      return;
    }
    const body = new FormData();
    body.append("file", file, file.name);
    busy(true);
    say("Uploading " + file.name + " (" + fileSize(file.size) + ") and applying it…", [], "");
    call("POST", "/admin/zones/upload", body)
      .then(function (data) {
        say("Uploaded " + data.saved + " as the " + data.family + " file and applied it.", data.summary, "ok");
        form.reset();
        return afterChange();
      })
      .catch(function (err) { say("Upload failed: " + err.message, [], "error"); })
      .finally(function () { busy(false); });
  });

  reloadButton.addEventListener("click", function () {
    busy(true);
    say("Reloading the catalog from the zone files…", [], "");
    call("POST", "/admin/zones/reload")
      .then(function (data) {
        say("Reloaded the catalog.", data.summary, "ok");
        return afterChange();
      })
      .catch(function (err) { say("Reload failed: " + err.message, [], "error"); })
      .finally(function () { busy(false); });
  });

  // --- catalog search ----------------------------------------------------------------------

  const searchForm = document.getElementById("zone-search-form");
  const query = document.getElementById("zone-q");
  const typeSelect = document.getElementById("zone-type");
  const stateInput = document.getElementById("zone-state");
  const summary = document.getElementById("zone-search-summary");
  const table = document.getElementById("zone-results");
  const emptyNote = document.getElementById("zone-results-empty");
  const pager = document.getElementById("zone-pager");
  const prev = document.getElementById("zone-prev");
  const next = document.getElementById("zone-next");
  const pageLabel = document.getElementById("zone-page-label");
  let offset = 0;
  let total = 0;
  let latest = 0;
  let timer = null;

  function filtered() {
    return Boolean(query.value.trim() || typeSelect.value || stateInput.value.trim());
  }

  function row(zone) {
    const tr = node("tr");
    const code = node("td");
    code.append(node("code", "", zone.zone_code));
    tr.append(code, node("td", "", TYPE_LABELS[zone.zone_type] || zone.zone_type),
      node("td", "", zone.name), node("td", "", zone.state_code), node("td", "", zone.cwa || "—"));
    return tr;
  }

  function showResults(data, from) {
    total = data.total;
    offset = from;
    const rows = data.zones.map(row);
    const body = table.tBodies[0];
    body.replaceChildren.apply(body, rows);
    table.hidden = rows.length === 0;
    emptyNote.hidden = rows.length !== 0;
    if (rows.length === 0) {
      emptyNote.firstElementChild.textContent = filtered()
        ? "No zones match. Search by the start of a code (VAZ0, GMZ) or any part of a name; clear the type and state filters to widen the search."
        : "The catalog is empty: upload a zone DBF above, or reload from the files.";
    }
    const last = Math.min(from + rows.length, total);
    summary.textContent = total === 0 ? "No zones found."
      : (total === 1 ? "1 zone" : number(total) + " zones") + (filtered() ? " match" : " in the catalog") +
        (total > rows.length ? "; showing " + number(from + 1) + "–" + number(last) + "." : ".");
    pager.hidden = total <= PAGE_SIZE;
    prev.disabled = from === 0;
    next.disabled = from + PAGE_SIZE >= total;
    pageLabel.textContent = "Page " + (Math.floor(from / PAGE_SIZE) + 1) + " of " + Math.max(1, Math.ceil(total / PAGE_SIZE));
  }

  function runSearch(from) {
    window.clearTimeout(timer);
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(from) });
    const q = query.value.trim();
    const state = stateInput.value.trim().toUpperCase();
    if (q) params.set("q", q);
    if (typeSelect.value) params.set("type", typeSelect.value);
    if (state.length === 2) params.set("state", state);
    const ticket = ++latest;
    return call("GET", "/api/zones?" + params.toString())
      .then(function (data) { if (ticket === latest) showResults(data, from); })
      .catch(function (err) {
        if (ticket !== latest) return;
        summary.textContent = "Search failed: " + err.message;
      });
  }

  function searchSoon() {
    window.clearTimeout(timer);
    timer = window.setTimeout(function () { runSearch(0); }, 300);
  }

  searchForm.addEventListener("submit", function (event) { event.preventDefault(); runSearch(0); });
  query.addEventListener("input", searchSoon);
  stateInput.addEventListener("input", searchSoon);
  typeSelect.addEventListener("change", function () { runSearch(0); });
  prev.addEventListener("click", function () { runSearch(Math.max(0, offset - PAGE_SIZE)); });
  next.addEventListener("click", function () { if (offset + PAGE_SIZE < total) runSearch(offset + PAGE_SIZE); });

  // The page is rendered before this worker's cache is warm; the first search warms it, so
  // read the panel again afterwards to show real cache counts.
  runSearch(0).then(refreshInfo).catch(function (err) {
    say("Could not refresh the info panel: " + err.message, [], "error");
  });
})();
