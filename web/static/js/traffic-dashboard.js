// Web traffic dashboard: fetches /api/traffic/dashboard, draws SVG charts and tables, drills
// down on click, downloads the server's multi-section CSV and builds a multi-page A4 PDF.
(function () {
  "use strict";
  const root = document.getElementById("traffic-dashboard");
  if (!root) return;
  const $ = function (id) { return document.getElementById(id); };
  const SVG = "http://www.w3.org/2000/svg";
  const FILTERS = ["country", "path", "status", "browser", "os", "method", "ip"];
  const SECTIONS = [
    ["top_pages", "Top pages", ["path"], "path"],
    ["entry_pages", "Entry pages", ["path"], null],
    ["exit_pages", "Exit pages", ["path"], null],
    ["top_visitors", "Top visitors", ["visitor_key"], "ip"],
    ["countries", "Countries", ["country", "country_code"], "country"],
    ["cities", "Cities", ["city", "region", "country_code"], null],
    ["region_breakdown", "Regions", ["region", "country_code"], null],
    ["organizations", "Organizations", ["asn_org"], null],
    ["browsers", "Browsers", ["browser"], "browser"],
    ["operating_systems", "Operating systems", ["os"], "os"],
    ["device_types", "Device types", ["device_type"], null],
    ["methods", "HTTP methods", ["method"], "method"],
    ["status_codes", "Status codes", ["status"], "status"],
    ["authenticated", "Signed in", ["authenticated"], null],
    ["ip_version_breakdown", "IP version", ["ip_version"], null],
    ["languages", "Languages", ["language"], null],
    ["referrers", "Referrers", ["referrer_domain"], null],
    ["search_engines", "Search engines", ["search_engine"], null],
    ["keyphrases", "Keyphrases", ["search_phrase", "search_engine"], null],
    ["file_types", "File types", ["file_type"], null],
    ["robots", "Robots", ["browser"], null],
    ["top_error_urls", "Top error URLs", ["path", "status"], "path"],
    ["top_error_sources", "Top error sources", ["ip", "top_path", "top_status"], "ip"],
    ["slowest_endpoints", "Slowest endpoints (at least 3 hits)", ["method", "path"], "path"],
  ];
  const SUMMARY = [
    ["hits", "Hits"], ["page_views", "Page views"], ["unique_visitors", "Unique visitors"],
    ["visits", "Visits"], ["bounce_rate", "Bounce rate %"],
    ["avg_visit_seconds", "Average visit (s)"], ["bandwidth_bytes", "Bandwidth (bytes)"],
  ];
  let filters = {};
  let data = null;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function label(row, keys) {
    return keys.map(function (k) { return row[k] === null || row[k] === undefined ? "–" : String(row[k]); }).join(" · ");
  }
  function filterValue(name, row) {
    if (name === "status") return String(row.status).charAt(0) + "xx";
    if (name === "country") return row.country_code;
    if (name === "ip") {
      const value = row.ip || row.visitor_key;
      return value && value.indexOf("/") < 0 ? value : null;
    }
    return row[name];
  }

  function query() {
    const params = new URLSearchParams();
    const days = $("td-days").value;
    if (days) params.set("days", days);
    else { params.set("start", $("td-start").value); params.set("end", $("td-end").value); }
    Object.keys(filters).forEach(function (k) { params.set(k, filters[k]); });
    return params;
  }

  async function load() {
    $("td-status").textContent = "Loading…";
    try {
      const response = await fetch("/api/traffic/dashboard?" + query().toString(), {
        credentials: "same-origin", headers: { "Accept": "application/json" },
      });
      const body = await response.json();
      if (!response.ok) throw new Error((body.error && body.error.message) || response.status);
      data = body;
      render();
      const period = body.filter_meta.period;
      $("td-status").textContent = "From " + period.start + " to " + period.end + " (UTC), " +
        period.days + " day(s).";
      $("td-content").hidden = false;
    } catch (ex) {
      $("td-status").textContent = "Could not load the dashboard: " + ex.message;
    }
  }

  function renderFilters() {
    const list = $("td-filters");
    list.replaceChildren();
    Object.keys(filters).forEach(function (name) {
      const item = el("li");
      const button = el("button", { type: "button", "data-remove": name },
        name + ": " + filters[name] + " ✕");
      button.addEventListener("click", function () { delete filters[name]; load(); });
      item.append(button);
      list.append(item);
    });
  }

  function renderSummary() {
    const box = $("td-summary");
    box.replaceChildren();
    SUMMARY.forEach(function (pair) {
      const card = el("div", { "class": "td-card", "data-key": pair[0] });
      card.append(el("span", {}, pair[1]), el("strong", {}, String(data.summary[pair[0]])),
        el("small", {}, "previous period: " + data.summary_prev[pair[0]]));
      box.append(card);
    });
    const anomalies = $("td-anomalies");
    anomalies.replaceChildren();
    (data.anomalies || []).forEach(function (item) {
      anomalies.append(el("p", { "class": "td-anomaly" }, item.kind + ": " + item.message));
    });
  }

  function renderSeries() {
    const days = data.time_series;
    const width = 720, height = 200, pad = 30;
    const top = Math.max(1, ...days.map(function (d) { return d.hits; }));
    const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "Hits per day" });
    const step = (width - 2 * pad) / Math.max(1, days.length);
    days.forEach(function (day, i) {
      const h = (height - 2 * pad) * day.hits / top;
      const bar = svg("rect", { x: pad + i * step + 1, y: height - pad - h,
        width: Math.max(1, step - 2), height: h, fill: "#4a78c2" });
      const title = svg("title");
      title.textContent = day.date + ": " + day.hits + " hits, " + day.page_views + " page views";
      bar.append(title);
      chart.append(bar);
    });
    const axis = svg("text", { x: pad, y: height - 8, "font-size": 11 });
    axis.textContent = days.length ? days[0].date + " … " + days[days.length - 1].date : "";
    chart.append(axis);
    $("td-series").replaceChildren(chart);
  }

  function renderHeatmap() {
    const grid = data.weekday_hour;
    const names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const cell = 26, left = 40;
    const top = Math.max(1, ...grid.map(function (row) { return Math.max(...row); }));
    const chart = svg("svg", { viewBox: "0 0 " + (left + 24 * cell) + " " + (7 * cell + 20),
      role: "img", "aria-label": "Hits by weekday and hour" });
    grid.forEach(function (row, d) {
      const name = svg("text", { x: 0, y: d * cell + cell * 0.7, "font-size": 11 });
      name.textContent = names[d];
      chart.append(name);
      row.forEach(function (hits, h) {
        const rect = svg("rect", { x: left + h * cell, y: d * cell, width: cell - 2,
          height: cell - 2, fill: "rgba(74,120,194," + (0.08 + 0.92 * hits / top).toFixed(3) + ")" });
        const title = svg("title");
        title.textContent = names[d] + " " + h + ":00 — " + hits + " hits";
        rect.append(title);
        chart.append(rect);
      });
    });
    for (let h = 0; h < 24; h += 3) {
      const tick = svg("text", { x: left + h * cell, y: 7 * cell + 14, "font-size": 10 });
      tick.textContent = h + ":00";
      chart.append(tick);
    }
    $("td-heatmap").replaceChildren(chart);
  }

  function renderTables() {
    const box = $("td-tables");
    box.replaceChildren();
    SECTIONS.forEach(function (section) {
      const rows = data[section[0]] || [];
      const wrap = el("section", { "data-section": section[0] });
      wrap.append(el("h2", {}, section[1]));
      const table = el("table");
      const head = el("tr");
      const count = section[0] === "slowest_endpoints" ? "avg ms" :
        (section[0] === "entry_pages" || section[0] === "exit_pages") ? "visits" :
        section[0] === "top_error_sources" ? "errors" : "hits";
      head.append(el("th", {}, section[1]), el("th", {}, count), el("th", {}, ""));
      table.append(head);
      const top = Math.max(1, ...rows.map(function (r) { return r[count === "avg ms" ? "avg_ms" : count]; }));
      rows.forEach(function (row) {
        const tr = el("tr");
        const value = row[count === "avg ms" ? "avg_ms" : count];
        const target = section[3] ? filterValue(section[3], row) : null;
        if (target !== null && target !== undefined) {
          tr.setAttribute("data-filter", section[3]);
          tr.setAttribute("data-value", target);
          tr.addEventListener("click", function () { filters[section[3]] = target; load(); });
        }
        const bar = el("div", { "class": "td-bar" });
        bar.style.width = Math.round(100 * value / top) + "%";
        const barCell = el("td");
        barCell.append(bar);
        tr.append(el("td", {}, label(row, section[2])), el("td", { "class": "num" }, String(value)), barCell);
        table.append(tr);
      });
      if (!rows.length) {
        const empty = el("tr");
        empty.append(el("td", { colspan: 3 }, "Nothing recorded."));
        table.append(empty);
      }
      wrap.append(table);
      box.append(wrap);
    });
  }

  function render() {
    renderFilters();
    renderSummary();
    renderSeries();
    renderHeatmap();
    renderTables();
  }

  // --- exports ---------------------------------------------------------------------------
  function pdfText(text) {
    return String(text).replace(/[^\x20-\x7e]/g, "?").replace(/([\\()])/g, "\\$1");
  }

  // A plain PDF 1.4 of A4 pages (595 x 842 pt) in Helvetica: the summary, then every table.
  function pdf() {
    const period = data.filter_meta.period;
    const lines = [["Web traffic " + period.start + " to " + period.end + " (UTC)", 16]];
    SUMMARY.forEach(function (pair) {
      lines.push([pair[1] + ": " + data.summary[pair[0]] + " (previous " + data.summary_prev[pair[0]] + ")", 10]);
    });
    data.time_series.forEach(function (d) {
      lines.push([d.date + "  hits " + d.hits + "  page views " + d.page_views + "  visitors " + d.visitors, 9]);
    });
    SECTIONS.forEach(function (section) {
      lines.push(["", 10], [section[1], 13]);
      (data[section[0]] || []).forEach(function (row) {
        const value = row.hits !== undefined ? row.hits : (row.visits !== undefined ? row.visits : row.errors);
        lines.push(["  " + label(row, section[2]) + "  -  " + value, 9]);
      });
    });
    const pages = [];
    let page = [], y = 800;
    lines.forEach(function (line) {
      const size = line[1];
      if (y - size * 1.4 < 40) { pages.push(page); page = []; y = 800; }
      y -= size * 1.4;
      page.push("BT /F1 " + size + " Tf 40 " + y.toFixed(1) + " Td (" + pdfText(line[0]) + ") Tj ET");
    });
    pages.push(page);
    const objects = [];
    const add = function (body) { objects.push(body); return objects.length; };
    const catalog = add(""), tree = add(""), font = add(
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    const kids = [];
    pages.forEach(function (content) {
      const stream = content.join("\n");
      const contents = add("<< /Length " + stream.length + " >>\nstream\n" + stream + "\nendstream");
      kids.push(add("<< /Type /Page /Parent " + tree + " 0 R /MediaBox [0 0 595 842] " +
        "/Resources << /Font << /F1 " + font + " 0 R >> >> /Contents " + contents + " 0 R >>"));
    });
    objects[catalog - 1] = "<< /Type /Catalog /Pages " + tree + " 0 R >>";
    objects[tree - 1] = "<< /Type /Pages /Kids [" + kids.map(function (k) { return k + " 0 R"; }).join(" ") +
      "] /Count " + kids.length + " >>";
    let out = "%PDF-1.4\n";
    const offsets = [];
    objects.forEach(function (body, i) {
      offsets.push(out.length);
      out += (i + 1) + " 0 obj\n" + body + "\nendobj\n";
    });
    const xref = out.length;
    out += "xref\n0 " + (objects.length + 1) + "\n0000000000 65535 f \n";
    offsets.forEach(function (o) { out += String(o).padStart(10, "0") + " 00000 n \n"; });
    out += "trailer\n<< /Size " + (objects.length + 1) + " /Root " + catalog + " 0 R >>\nstartxref\n" + xref + "\n%%EOF\n";
    return out;
  }

  function download(text, type, name) {
    const link = el("a", { href: URL.createObjectURL(new Blob([text], { type: type })), download: name });
    document.body.append(link);
    link.click();
    link.remove();
  }

  function stamp() { return data.filter_meta.period.start + "_" + data.filter_meta.period.end; }

  $("td-days").addEventListener("change", function () {
    const custom = !this.value;
    $("td-start").disabled = !custom;
    $("td-end").disabled = !custom;
    if (!custom) load();
  });
  $("td-period").addEventListener("submit", function (event) { event.preventDefault(); load(); });
  // The CSV is written by the server, which neutralises formula cells as the audit CSV does.
  $("td-csv").addEventListener("click", function () {
    if (data) window.location.assign("/api/traffic/dashboard.csv?" + query().toString());
  });
  $("td-pdf").addEventListener("click", function () {
    if (data) download(pdf(), "application/pdf", "traffic_" + stamp() + ".pdf");
  });
  const initial = new URLSearchParams(window.location.search);
  FILTERS.forEach(function (name) { if (initial.get(name)) filters[name] = initial.get(name); });
  load();
})();
