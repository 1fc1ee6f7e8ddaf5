// Web traffic dashboard: fetches /api/traffic/dashboard, draws SVG charts (with axis values and
// legends) and tables, drills down on a chosen value (mouse or keyboard), keeps the period and the
// filters in the address bar, downloads the server's multi-section CSV and builds a multi-page A4
// PDF titled with the server's report title (the period and every active filter).
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
    ["avg_visit_seconds", "Average visit (s)"], ["bandwidth_bytes", "Bandwidth"],
  ];
  const FILTER_WORDS = { country: "country", path: "path", status: "status", browser: "browser",
    os: "OS", method: "method", ip: "visitor" };
  const COLOURS = { hits: "#2f5fa7", page_views: "#d9822b", bytes: "#3d8b5a" };
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
  // 1536 -> "1.5 KB": bytes in binary multiples, written KB, MB, GB, TB.
  function human(bytes) {
    const units = ["bytes", "KB", "MB", "GB", "TB"];
    let value = Number(bytes) || 0, unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    if (unit === 0) return value + " " + (value === 1 ? "byte" : "bytes");
    return (value >= 100 ? value.toFixed(0) : value.toFixed(1)) + " " + units[unit];
  }
  function shown(key, value) {
    return key === "bandwidth_bytes" ? human(value) : String(value);
  }
  // Round axis steps: 1, 2 or 5 times a power of ten, at most about four ticks.
  function ticks(top) {
    const raw = Math.max(1, top) / 4;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(function (m) { return m * power; })
      .find(function (s) { return s >= raw; });
    const values = [];
    for (let v = 0; v < top + step; v += step) values.push(Math.round(v * 1000) / 1000);
    return values;
  }
  function label(row, keys) {
    return keys.map(function (k) { return row[k] === null || row[k] === undefined ? "–" : String(row[k]); }).join(" · ");
  }
  function filterValue(name, row) {
    if (name === "status") return String(row.status);
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

  // Read the period and the filters from the address bar (a reload, a bookmark, Back).
  function fromAddress() {
    const params = new URLSearchParams(window.location.search);
    const select = $("td-days");
    const days = params.get("days");
    const custom = !days && params.get("start") && params.get("end");
    if (custom) {
      select.value = "";
      $("td-start").value = params.get("start");
      $("td-end").value = params.get("end");
    } else if (days) {
      if (!Array.prototype.some.call(select.options, function (o) { return o.value === days; })) {
        select.insertBefore(el("option", { value: days }, "Last " + days + " days"),
          select.querySelector('option[value=""]'));
      }
      select.value = days;
    } else {
      select.value = "7";
    }
    $("td-start").disabled = !custom;
    $("td-end").disabled = !custom;
    filters = {};
    FILTERS.forEach(function (name) { if (params.get(name)) filters[name] = params.get(name); });
  }
  // Write them back, so that a reload shows the same view; a new view is a new history entry.
  function toAddress(replace) {
    const search = "?" + query().toString();
    if (search === window.location.search) return;
    const url = window.location.pathname + search;
    if (replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
  }

  async function load(replace) {
    toAddress(replace);
    $("td-status").textContent = "Loading…";
    try {
      const response = await fetch("/api/traffic/dashboard?" + query().toString(), {
        credentials: "same-origin", headers: { "Accept": "application/json" },
      });
      const body = await response.json();
      if (!response.ok) throw new Error((body.error && body.error.message) || response.status);
      data = body;
      render();
      $("td-title").textContent = body.filter_meta.title;
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
      const button = el("button", { type: "button", "data-remove": name,
        "aria-label": "Remove the filter " + FILTER_WORDS[name] + " " + filters[name] },
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
      card.append(el("span", {}, pair[1]), el("strong", {}, shown(pair[0], data.summary[pair[0]])),
        el("small", {}, "previous period: " + shown(pair[0], data.summary_prev[pair[0]])));
      box.append(card);
    });
    const anomalies = $("td-anomalies");
    anomalies.replaceChildren();
    (data.anomalies || []).forEach(function (item) {
      anomalies.append(el("p", { "class": "td-anomaly" }, item.kind + ": " + item.message));
    });
  }

  // A bar chart of one or two daily series, with a value axis, date labels and a legend.
  function barChart(target, captionId, series, format) {
    const days = data.time_series;
    const width = 720, height = 230, left = 64, right = 10, top = 12, bottom = 44;
    const peak = Math.max(1, ...days.map(function (d) {
      return Math.max(...series.map(function (s) { return d[s[0]]; }));
    }));
    const scale = ticks(peak);
    const ceiling = scale[scale.length - 1];
    const plot = height - top - bottom;
    const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-labelledby": captionId });
    scale.forEach(function (value) {
      const y = top + plot - plot * value / ceiling;
      chart.append(svg("line", { x1: left, x2: width - right, y1: y, y2: y, stroke: "#dde" }));
      const text = svg("text", { x: left - 6, y: y + 4, "font-size": 11, "text-anchor": "end",
        "class": "td-axis-y" });
      text.textContent = format(value);
      chart.append(text);
    });
    const slot = (width - left - right) / Math.max(1, days.length);
    const bar = Math.max(1, (slot - 2) / series.length);
    days.forEach(function (day, i) {
      series.forEach(function (s, j) {
        const h = plot * day[s[0]] / ceiling;
        const rect = svg("rect", { x: left + i * slot + 1 + j * bar, y: top + plot - h,
          width: bar, height: h, fill: COLOURS[s[0]] });
        const title = svg("title");
        title.textContent = day.date + ": " + s[1] + " " + format(day[s[0]]);
        rect.append(title);
        chart.append(rect);
      });
    });
    const every = Math.max(1, Math.ceil(days.length / 8));
    days.forEach(function (day, i) {
      if (i % every && i !== days.length - 1) return;
      const text = svg("text", { x: left + i * slot + slot / 2, y: height - bottom + 16,
        "font-size": 10, "text-anchor": "middle", "class": "td-axis-x" });
      text.textContent = day.date.slice(5);
      chart.append(text);
    });
    const legend = el("ul", { "class": "td-legend", "aria-label": "Legend" });
    series.forEach(function (s) {
      const item = el("li");
      const swatch = el("span", { "class": "td-swatch", "aria-hidden": "true" });
      swatch.style.background = COLOURS[s[0]];
      item.append(swatch, document.createTextNode(s[1]));
      legend.append(item);
    });
    $(target).replaceChildren(chart, legend);
  }

  function renderSeries() {
    barChart("td-series", "td-series-caption", [["hits", "Hits"], ["page_views", "Page views"]],
      function (v) { return String(v); });
    barChart("td-bandwidth", "td-bandwidth-caption", [["bytes", "Data sent"]], human);
  }

  function renderHeatmap() {
    const grid = data.weekday_hour;
    const names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const cell = 26, left = 40;
    const top = Math.max(1, ...grid.map(function (row) { return Math.max(...row); }));
    const chart = svg("svg", { viewBox: "0 0 " + (left + 24 * cell) + " " + (7 * cell + 20),
      role: "img", "aria-labelledby": "td-heatmap-caption" });
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
    const legend = el("p", { "class": "td-legend" },
      "Lighter: fewer hits (0); darker: more (" + top + " at most in one hour).");
    $("td-heatmap").replaceChildren(chart, legend);
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
      const withBytes = rows.length > 0 && rows[0].bytes !== undefined;
      head.append(el("th", {}, section[1]), el("th", {}, count));
      if (withBytes) head.append(el("th", {}, "data"));
      const share = el("th");
      share.append(el("span", { "class": "visually-hidden" }, "share of the largest"));
      head.append(share);
      table.append(head);
      const top = Math.max(1, ...rows.map(function (r) { return r[count === "avg ms" ? "avg_ms" : count]; }));
      rows.forEach(function (row) {
        const tr = el("tr");
        const value = row[count === "avg ms" ? "avg_ms" : count];
        const target = section[3] ? filterValue(section[3], row) : null;
        const name = el("td");
        if (target !== null && target !== undefined) {
          tr.setAttribute("data-filter", section[3]);
          tr.setAttribute("data-value", target);
          // The button takes Tab and Enter or Space; a click anywhere on the row does the same.
          name.append(el("button", { type: "button", "class": "td-drill",
            "aria-label": label(row, section[2]) + ": show only " + FILTER_WORDS[section[3]] + " " + target },
            label(row, section[2])));
          tr.addEventListener("click", function () { filters[section[3]] = String(target); load(); });
        } else {
          name.textContent = label(row, section[2]);
        }
        const bar = el("div", { "class": "td-bar" });
        bar.style.width = Math.round(100 * value / top) + "%";
        const barCell = el("td");
        barCell.append(bar);
        tr.append(name, el("td", { "class": "num" }, String(value)));
        if (withBytes) tr.append(el("td", { "class": "num" }, human(row.bytes)));
        tr.append(barCell);
        table.append(tr);
      });
      if (!rows.length) {
        const empty = el("tr");
        empty.append(el("td", { colspan: 4 }, "Nothing recorded."));
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
    const title = data.filter_meta.title;
    const lines = [[title, 13]];
    const chosen = Object.keys(data.filter_meta.filters).filter(function (k) {
      return data.filter_meta.filters[k] !== null;
    });
    lines.push([chosen.length ? "Filters: " + chosen.map(function (k) {
      return FILTER_WORDS[k] + " " + data.filter_meta.filters[k];
    }).join(", ") : "Filters: none (all traffic from " + period.start + " to " + period.end + ")", 10]);
    SUMMARY.forEach(function (pair) {
      lines.push([pair[1] + ": " + shown(pair[0], data.summary[pair[0]]) + " (previous " +
        shown(pair[0], data.summary_prev[pair[0]]) + ")", 10]);
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
    const info = add("<< /Title (" + pdfText(title) + ") /Producer (Alert Station) >>");
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
    out += "trailer\n<< /Size " + (objects.length + 1) + " /Root " + catalog + " 0 R /Info " + info + " 0 R >>\nstartxref\n" + xref + "\n%%EOF\n";
    return out;
  }

  function download(text, type, name) {
    const link = el("a", { href: URL.createObjectURL(new Blob([text], { type: type })), download: name });
    document.body.append(link);
    link.click();
    link.remove();
  }

  function stamp() {
    const meta = data.filter_meta;
    const filtered = Object.keys(meta.filters).some(function (k) { return meta.filters[k] !== null; });
    return meta.period.start + "_" + meta.period.end + (filtered ? "_filtered" : "");
  }

  async function loadGeoip() {
    const panel = $("td-geoip");
    if (!panel) return;
    try {
      const response = await fetch("/api/traffic/geoip", { credentials: "same-origin",
        headers: { "Accept": "application/json" } });
      const body = await response.json();
      if (!response.ok) throw new Error((body.error && body.error.message) || response.status);
      const found = Object.keys(body.databases).filter(function (k) { return body.databases[k]; });
      $("td-geoip-help").hidden = found.length > 0;
      $("td-geoip-state").textContent = found.length ? found.map(function (slot) {
        const db = body.databases[slot];
        return (slot === "asn" ? "Organizations: " : "Places: ") + db.database_type + " (" +
          human(db.size) + (db.build_date ? ", built " + String(db.build_date).slice(0, 10) : "") + ")";
      }).join("; ") + (body.reader_available ? "." : ". The geoip2 package is missing, so lookups stay empty.")
        : "No GeoIP database is installed (looked for " + body.paths.location + " and " +
          body.paths.asn + ").";
    } catch (ex) {
      $("td-geoip-state").textContent = "Could not list the GeoIP databases: " + ex.message;
    }
  }
  const upload = $("td-geoip-upload");
  if (upload) {
    upload.addEventListener("submit", async function (event) {
      event.preventDefault();
      const meta = document.querySelector('meta[name="csrf-token"]');
      const form = new FormData();
      form.append("file", $("td-geoip-file").files[0]);
      $("td-geoip-result").textContent = "Uploading…";
      try {
        const response = await fetch("/api/traffic/geoip/upload", { method: "POST", body: form,
          credentials: "same-origin",
          headers: { "Accept": "application/json", "X-CSRF-Token": meta ? meta.content : "" } });
        const body = await response.json();
        if (!response.ok) throw new Error((body.error && body.error.message) || response.status);
        $("td-geoip-result").textContent = "Installed a " + body.type + " database." +
          (body.note ? " " + body.note : "");
        loadGeoip();
      } catch (ex) {
        $("td-geoip-result").textContent = "Not installed: " + ex.message;
      }
    });
  }

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
  window.addEventListener("popstate", function () { fromAddress(); load(true); });
  fromAddress();
  load(true);
  loadGeoip();
})();
