// Security Center: the overview card and tiles, an accessible tablist kept in the URL, and the
// four tabs (Traffic, Malicious Logins, Banned IPs, Host Firewall). Changes go to the ban list
// and host firewall routes with the CSRF token; a 409 lockout_risk asks before resending.
(function () {
  "use strict";
  const root = document.getElementById("security-center");
  if (!root) return;

  const SVG = "http://www.w3.org/2000/svg";
  const KINDS = ["login_failure", "malicious_request", "flood", "api_abuse", "stream_abuse", "auto_ban"];
  const KIND_LABELS = {
    login_failure: "Failed login", malicious_request: "Malicious request", flood: "Flood",
    api_abuse: "API abuse", stream_abuse: "Stream abuse", auto_ban: "Automatic ban",
  };
  const REASONS = {
    invalid_credentials: "Wrong password or unknown account",
    login_not_allowed: "Not on the login allowlist",
  };
  const OVERVIEW_EVERY_MS = 60000;

  const canManage = root.dataset.canManage === "true";
  const isAdmin = root.dataset.isAdmin === "true";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const tabs = Array.from(root.querySelectorAll('[role="tab"]'));
  const tabIds = tabs.map(function (tab) { return tab.dataset.tab; });
  const state = { tab: null, days: root.dataset.days === "7" ? 7 : 1, overview: null, firewallLoaded: false };
  const sequence = {};

  // --- requests ----------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, body) {
      const error = body && body.error ? body.error : {};
      super(error.message || "Request failed (" + status + ")");
      this.name = "ApiError";
      this.status = status;
      this.code = error.code || "";
      this.details = error.details || {};
    }
  }

  async function api(method, url, body) {
    const headers = { "Accept": "application/json" };
    if (method !== "GET") headers["X-CSRF-Token"] = csrf;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }

  // Run ``load`` for ``name``; drop its answer when a newer load of the same name has started.
  async function latest(name, load) {
    const ticket = (sequence[name] || 0) + 1;
    sequence[name] = ticket;
    const result = await load();
    return sequence[name] === ticket ? result : null;
  }

  // --- small DOM helpers -------------------------------------------------------------------

  function el(tag, options, children) {
    const node = document.createElement(tag);
    const opts = options || {};
    if (opts.className) node.className = opts.className;
    if (opts.text !== undefined && opts.text !== null) node.textContent = String(opts.text);
    if (opts.title) node.title = opts.title;
    if (opts.label) node.setAttribute("aria-label", opts.label);
    if (opts.data) Object.keys(opts.data).forEach(function (key) { node.dataset[key] = opts.data[key]; });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    Object.keys(attributes || {}).forEach(function (key) { node.setAttribute(key, String(attributes[key])); });
    return node;
  }

  function row(cells) {
    return el("tr", {}, cells.map(function (cell) {
      if (cell instanceof Node) return el("td", {}, [cell]);
      return el("td", { text: cell === null || cell === undefined || cell === "" ? "—" : cell });
    }));
  }

  function say(id, text, isError) {
    const node = document.getElementById(id);
    if (!node) return;
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

  function when(text) {
    if (!text) return "—";
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) return text;
    return date.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  function plural(count, word, many) {
    return count + " " + (count === 1 ? word : (many || word + "s"));
  }

  function period() { return state.days === 7 ? "the last 7 days" : "the last 24 hours"; }

  function flag(code) {
    if (!/^[A-Za-z]{2}$/.test(code || "")) return "";
    return String.fromCodePoint.apply(null, code.toUpperCase().split("").map(function (c) {
      return 0x1f1e6 + c.charCodeAt(0) - 65;
    }));
  }

  function locationCell(location) {
    if (!location) return el("span", { className: "hint", text: "—" });
    const place = [location.city, location.region, location.country].filter(Boolean).join(", ");
    const text = (flag(location.flag) + " " + (place || location.flag || "")).trim();
    return el("span", { className: "sc-location", text: text, title: location.flag || "" });
  }

  function kindBadge(kind, count) {
    const label = KIND_LABELS[kind] || kind;
    return el("span", { className: "badge sc-kind k-" + kind, text: count === undefined ? label : label + " " + count });
  }

  function code(text) { return el("code", { text: text }); }

  function showTable(table, empty, rows) {
    table.querySelector("tbody").replaceChildren.apply(table.querySelector("tbody"), rows);
    table.hidden = rows.length === 0;
    if (empty) empty.hidden = rows.length !== 0;
  }

  // --- tabs --------------------------------------------------------------------------------

  function panelOf(tab) { return document.getElementById(tab.getAttribute("aria-controls")); }

  function tabFromUrl() {
    const hash = window.location.hash.replace(/^#/, "");
    if (tabIds.indexOf(hash) !== -1) return hash;
    const asked = new URLSearchParams(window.location.search).get("tab");
    return tabIds.indexOf(asked) !== -1 ? asked : tabIds[0];
  }

  function writeUrl() {
    const params = new URLSearchParams(window.location.search);
    params.set("tab", state.tab);
    if (state.days === 7) params.set("days", "7"); else params.delete("days");
    window.history.replaceState(null, "", window.location.pathname + "?" + params.toString());
  }

  function selectTab(id, focus) {
    tabs.forEach(function (tab) {
      const chosen = tab.dataset.tab === id;
      tab.setAttribute("aria-selected", chosen ? "true" : "false");
      tab.tabIndex = chosen ? 0 : -1;
      panelOf(tab).hidden = !chosen;
      if (chosen && focus) tab.focus();
    });
    state.tab = id;
    writeUrl();
    loadTab(id);
  }

  tabs.forEach(function (tab, index) {
    tab.addEventListener("click", function () { selectTab(tab.dataset.tab, true); });
    tab.addEventListener("keydown", function (event) {
      let next = null;
      if (event.key === "ArrowRight") next = (index + 1) % tabs.length;
      else if (event.key === "ArrowLeft") next = (index - 1 + tabs.length) % tabs.length;
      else if (event.key === "Home") next = 0;
      else if (event.key === "End") next = tabs.length - 1;
      if (next === null) return;
      event.preventDefault();
      selectTab(tabs[next].dataset.tab, true);
    });
  });

  window.addEventListener("hashchange", function () {
    const hash = window.location.hash.replace(/^#/, "");
    if (tabIds.indexOf(hash) !== -1) selectTab(hash, true);
  });

  root.querySelectorAll("[data-goto-tab]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      selectTab(link.dataset.gotoTab, true);
    });
  });

  root.querySelectorAll(".sc-days").forEach(function (select) {
    select.addEventListener("change", function () {
      state.days = select.value === "7" ? 7 : 1;
      root.querySelectorAll(".sc-days").forEach(function (other) { other.value = String(state.days); });
      writeUrl();
      loadTab(state.tab);
    });
  });

  function loadTab(id) {
    if (id === "traffic") loadTraffic();
    else if (id === "malicious-logins") loadLogins();
    else if (id === "banned-ips") loadFilters();
    else if (id === "host-firewall") loadFirewall(false);
  }

  // --- overview ----------------------------------------------------------------------------

  function setStatus(id, text, level) {
    const node = document.getElementById(id);
    node.replaceChildren(el("span", { className: "sc-dot sc-" + (level || "neutral"), text: "" }),
      document.createTextNode(" " + text));
  }

  function metric(id, value) {
    document.getElementById(id).textContent = value === null || value === undefined ? "–" : String(value);
  }

  function firewallSentence(firewall) {
    if (firewall.state === "off") return "Mirroring to the host firewall is off: bans are enforced by the station only.";
    if (firewall.state === "unknown") return "The host firewall has not been checked yet.";
    if (firewall.state === "error") {
      return "The fail2ban daemon did not answer when last asked" + (firewall.checked_at ? " (" + when(firewall.checked_at) + ")" : "") +
        "; " + plural(firewall.firewall_pending, "ban") + " waiting to be mirrored.";
    }
    const checked = firewall.checked_at ? " (checked " + when(firewall.checked_at) + ")" : "";
    if (firewall.state === "pending") {
      return plural(firewall.firewall_pending, "ban") + " of " + firewall.mirrorable +
        " not yet in the fail2ban jail; the self-heal pushes them within a minute" + checked + ".";
    }
    return "All " + plural(firewall.mirrorable, "mirrorable ban") + " are in the fail2ban jail" + checked + ".";
  }

  function renderOverview(data) {
    const enforcement = data.enforcement;
    const gate = enforcement.ban_gate;
    if (gate.state === "open") setStatus("status-gate", "Open: the ban list could not be loaded", "bad");
    else if (gate.state === "enforcing") setStatus("status-gate", "Enforcing " + plural(gate.entries, "entry", "entries"), "good");
    else setStatus("status-gate", "Ready (nothing to block)", "neutral");
    setStatus("status-bans", plural(enforcement.active_bans, "active ban"), enforcement.active_bans ? "good" : "neutral");
    if (enforcement.allowlist_mode) {
      setStatus("status-allowlist", "On: only " + plural(enforcement.allowlist_entries, "listed address", "listed addresses") + " may sign in", "warn");
    } else {
      setStatus("status-allowlist", "Off: any address that is not banned may sign in", "neutral");
    }
    const auto = enforcement.automatic_bans;
    if (!auto.available) setStatus("status-autoban", "Not available on this station", "neutral");
    else if (auto.enabled === null) setStatus("status-autoban", "Unknown (settings unreadable)", "warn");
    else setStatus("status-autoban", auto.enabled ? "On" : "Off", auto.enabled ? "good" : "neutral");
    const firewall = enforcement.host_firewall;
    const levels = { off: "neutral", ok: "good", pending: "warn", error: "bad", unknown: "neutral" };
    const words = { off: "Off", ok: "On, in sync", pending: "On, bans pending", error: "Error", unknown: "On, not checked yet" };
    setStatus("status-firewall", words[firewall.state] || firewall.state, levels[firewall.state]);
    say("firewall-summary", firewallSentence(firewall), firewall.state === "error");

    const m = data.metrics;
    metric("metric-failed-logins", m.failed_logins_24h);
    metric("metric-ips-banned", m.ips_banned_24h);
    metric("metric-active-bans", m.active_bans);
    metric("metric-ssh", m.ssh_attacks_blocked);
    metric("metric-mirrored", m.mirrored);
    metric("metric-pending", m.firewall_pending);
    document.getElementById("tile-pending").classList.toggle("sc-warn", Boolean(m.firewall_pending));
    document.getElementById("tile-pending").classList.toggle("sc-bad", firewall.state === "error");
    say("overview-status", "");
  }

  async function loadOverview() {
    try {
      const data = await latest("overview", function () { return api("GET", "/security/overview"); });
      if (data) { state.overview = data; renderOverview(data); }
    } catch (error) {
      say("overview-status", "Could not load the overview: " + error.message, true);
    }
  }

  // --- traffic -----------------------------------------------------------------------------

  function drawChart(hours, days) {
    const box = document.getElementById("traffic-chart");
    const width = 720;
    const height = 180;
    const left = 34;
    const bottom = 22;
    const top = 10;
    const plotWidth = width - left - 4;
    const plotHeight = height - top - bottom;
    const peak = hours.reduce(function (max, bucket) { return Math.max(max, bucket.total); }, 0);
    const scale = Math.max(peak, 1);
    const step = plotWidth / Math.max(hours.length, 1);
    const total = hours.reduce(function (sum, bucket) { return sum + bucket.total; }, 0);
    const chart = svg("svg", {
      viewBox: "0 0 " + width + " " + height, class: "sc-chart-svg", role: "img",
      "aria-labelledby": "traffic-chart-caption traffic-chart-desc",
    });
    const desc = svg("desc", { id: "traffic-chart-desc" });
    const busiest = hours.filter(function (bucket) { return bucket.total === peak; })[0];
    desc.textContent = plural(total, "event") + " in " + hours.length + " hours" +
      (peak ? "; the busiest hour was " + when(busiest.hour) + " with " + plural(peak, "event") : "") + ".";
    chart.appendChild(desc);
    const ticks = scale % 2 === 0 ? [0, scale / 2, scale] : [0, scale];
    ticks.forEach(function (value) {
      const y = top + plotHeight - (value / scale) * plotHeight;
      chart.appendChild(svg("line", { x1: left, x2: width - 4, y1: y, y2: y, class: "sc-grid" }));
      const label = svg("text", { x: left - 4, y: y + 4, class: "sc-axis", "text-anchor": "end" });
      label.textContent = String(value);
      chart.appendChild(label);
    });
    hours.forEach(function (bucket, index) {
      const x = left + index * step;
      const hour = new Date(bucket.hour);
      const group = svg("g", { class: "sc-bar" });
      const title = svg("title", {});
      const parts = KINDS.filter(function (kind) { return bucket.kinds[kind]; }).map(function (kind) {
        return KIND_LABELS[kind] + " " + bucket.kinds[kind];
      });
      title.textContent = when(bucket.hour) + ": " + plural(bucket.total, "event") + (parts.length ? " (" + parts.join(", ") + ")" : "");
      group.appendChild(title);
      let y = top + plotHeight;
      KINDS.forEach(function (kind) {
        const count = bucket.kinds[kind] || 0;
        if (!count) return;
        const barHeight = (count / scale) * plotHeight;
        y -= barHeight;
        group.appendChild(svg("rect", {
          x: x + step * 0.1, y: y, width: Math.max(step * 0.8, 0.5), height: barHeight, class: "k-" + kind,
        }));
      });
      // A transparent full-height target so the title shows when hovering an empty hour too.
      group.appendChild(svg("rect", { x: x, y: top, width: step, height: plotHeight, class: "sc-hit" }));
      chart.appendChild(group);
      const labelled = days === 7 ? hour.getUTCHours() === 0 : hour.getUTCHours() % 6 === 0;
      if (labelled) {
        const label = svg("text", { x: x, y: height - 6, class: "sc-axis" });
        label.textContent = days === 7 ? hour.toISOString().slice(5, 10) : hour.toISOString().slice(11, 16);
        chart.appendChild(label);
      }
    });
    box.replaceChildren(chart);
  }

  function renderTraffic(data) {
    const empty = data.total === 0;
    document.getElementById("traffic-empty").hidden = !empty;
    document.getElementById("traffic-content").hidden = empty;
    say("traffic-summary", empty ? "No security events in " + period() + "." :
      plural(data.total, "security event") + " from " + plural(data.addresses, "address", "addresses") + " in " + period() + ".");
    if (empty) return;
    drawChart(data.hours, data.days);
    const legend = document.getElementById("traffic-legend");
    legend.replaceChildren.apply(legend, KINDS.filter(function (kind) { return data.kinds[kind]; }).map(function (kind) {
      return el("li", {}, [kindBadge(kind, data.kinds[kind])]);
    }));
    const topRows = data.top_addresses.map(function (item) {
      const kinds = el("span", { className: "sc-kinds" }, KINDS.filter(function (kind) { return item.kinds[kind]; })
        .map(function (kind) { return kindBadge(kind, item.kinds[kind]); }));
      return row([code(item.address), locationCell(item.location), item.events, kinds, when(item.last_seen), banState(item)]);
    });
    showTable(document.getElementById("top-addresses"), null, topRows);
    const recentRows = data.recent.map(function (event) {
      const request = event.method || event.path ? [event.method, event.path].filter(Boolean).join(" ") : "";
      return row([when(event.occurred_at), code(event.address), kindBadge(event.kind), request ? code(request) : "",
        event.user_agent, event.detail]);
    });
    showTable(document.getElementById("recent-events"), null, recentRows);
  }

  function banState(item) {
    if (!item.banned) return el("span", { className: "hint", text: "not banned" });
    const by = item.banned_by && item.banned_by !== item.address ? " (" + item.banned_by + ")" : "";
    return el("span", { className: "badge sc-banned", text: "Banned" + by });
  }

  async function loadTraffic() {
    try {
      const data = await latest("traffic", function () { return api("GET", "/security/center/traffic?days=" + state.days); });
      if (data) renderTraffic(data);
    } catch (error) {
      say("traffic-summary", "Could not load the security events: " + error.message, true);
    }
  }

  // --- malicious logins --------------------------------------------------------------------

  function renderLogins(data) {
    const empty = data.total === 0;
    document.getElementById("logins-empty").hidden = !empty;
    document.getElementById("logins-content").hidden = empty;
    say("logins-summary", empty ? "No failed sign-ins in " + period() + "." :
      plural(data.total, "failed sign-in") + " from " + plural(data.addresses, "address", "addresses") + " in " + period() + ".");
    if (empty) return;
    const rows = data.by_address.map(function (item) {
      let names = item.usernames.join(", ");
      const more = (item.username_count || 0) - item.usernames.length;
      if (more > 0) names += " and " + more + " more";
      const cells = [item.address ? code(item.address) : "unknown", locationCell(item.location), item.failures,
        names, when(item.last_attempt), banState(item)];
      if (canManage) {
        const cell = el("span", { className: "actions" });
        if (item.address && !item.banned) {
          cell.appendChild(el("button", { className: "danger sc-ban", text: "Ban", label: "Ban " + item.address,
            data: { address: item.address } }));
        }
        cells.push(cell);
      }
      const tr = row(cells);
      tr.dataset.address = item.address || "";
      return tr;
    });
    showTable(document.getElementById("logins-by-address"), null, rows);
    const recent = data.recent.map(function (item) {
      return row([when(item.at), item.address ? code(item.address) : "unknown", item.username,
        REASONS[item.reason] || item.reason, item.user_agent]);
    });
    showTable(document.getElementById("logins-recent"), null, recent);
  }

  async function loadLogins() {
    try {
      const data = await latest("logins", function () { return api("GET", "/security/center/logins?days=" + state.days); });
      if (data) renderLogins(data);
    } catch (error) {
      say("logins-summary", "Could not load the failed sign-ins: " + error.message, true);
    }
  }

  // --- lockout confirmation ------------------------------------------------------------------

  const lockoutDialog = document.getElementById("lockout-dialog");

  function askLockout(message) {
    return new Promise(function (resolve) {
      // The API's advice to send confirm_lockout is what the confirm button does.
      document.getElementById("lockout-message").textContent =
        message.replace(/\s*Send confirm_lockout=true to do it anyway\.?/, "");
      const confirm = document.getElementById("lockout-confirm");
      const cancel = document.getElementById("lockout-cancel");
      function finish(answer) {
        confirm.removeEventListener("click", onConfirm);
        cancel.removeEventListener("click", onCancel);
        lockoutDialog.removeEventListener("cancel", onCancel);
        if (lockoutDialog.open) lockoutDialog.close();
        resolve(answer);
      }
      function onConfirm() { finish(true); }
      function onCancel(event) { if (event) event.preventDefault(); finish(false); }
      confirm.addEventListener("click", onConfirm);
      cancel.addEventListener("click", onCancel);
      lockoutDialog.addEventListener("cancel", onCancel);
      lockoutDialog.showModal();
      cancel.focus();
    });
  }

  // Call ``send(confirm)``; on 409 lockout_risk ask, then resend with confirm=true. Returns
  // the answer, or null when the user chose not to go on.
  async function withLockoutCheck(send) {
    try {
      return await send(false);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "lockout_risk") throw error;
      const go = await askLockout(error.message);
      if (!go) return null;
      return send(true);
    }
  }

  function afterBanChange() {
    loadOverview();
    if (state.tab === "banned-ips") loadFilters();
    if (state.tab === "malicious-logins") loadLogins();
    if (state.tab === "traffic") loadTraffic();
  }

  // --- ban dialog (Malicious Logins) ---------------------------------------------------------

  const banDialog = document.getElementById("ban-dialog");
  if (banDialog) {
    const form = document.getElementById("ban-dialog-form");
    document.getElementById("logins-by-address").addEventListener("click", function (event) {
      const button = event.target.closest("button.sc-ban");
      if (!button) return;
      banDialog.dataset.address = button.dataset.address;
      document.getElementById("ban-dialog-address").textContent = button.dataset.address;
      banDialog.showModal();
      document.getElementById("ban-dialog-duration").focus();
    });
    document.getElementById("ban-dialog-cancel").addEventListener("click", function () { banDialog.close(); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const address = banDialog.dataset.address;
      const body = { value: address, kind: "blocklist", description: "Banned from the Security Center after failed sign-ins" };
      const reason = document.getElementById("ban-dialog-reason").value.trim();
      const minutes = document.getElementById("ban-dialog-duration").value;
      if (reason) body.reason = reason;
      if (minutes) body.duration_minutes = Number(minutes);
      banDialog.close();
      withLockoutCheck(function (confirm) {
        return api("POST", "/security/ip-filters", confirm ? Object.assign({ confirm_lockout: true }, body) : body);
      }).then(function (answer) {
        if (!answer) { say("logins-action-status", "Nothing was changed."); return; }
        say("logins-action-status", "Banned " + answer.filter.value + ".");
        afterBanChange();
      }).catch(function (error) { say("logins-action-status", error.message, true); });
    });
  }

  // --- banned IPs ----------------------------------------------------------------------------

  function filterState(entry) {
    if (entry.expired) return el("span", { className: "badge muted", text: "Expired" });
    if (!entry.active) return el("span", { className: "badge muted", text: "Disabled" });
    return el("span", { className: "badge sc-enforced", text: "Enforced" });
  }

  function filterRow(entry) {
    const value = el("span", {}, [code(entry.value)]);
    if (entry.is_range) value.appendChild(el("span", { className: "hint", text: " range" }));
    const reason = el("span", { text: entry.reason || "—", title: entry.description || "" });
    const cells = [value, locationCell(entry.location), el("span", { className: "badge sc-source", text: entry.source_label }),
      reason, when(entry.created_at), entry.expires_at ? when(entry.expires_at) : "never", filterState(entry)];
    if (canManage) {
      const actions = el("span", { className: "actions" }, [
        el("button", { className: "sc-toggle", text: entry.active ? "Disable" : "Enable",
          label: (entry.active ? "Disable " : "Enable ") + entry.value }),
        el("button", { className: "danger sc-remove", text: "Remove", label: "Remove " + entry.value }),
      ]);
      cells.push(actions);
    }
    const tr = row(cells);
    tr.dataset.id = String(entry.id);
    tr.dataset.value = entry.value;
    tr.dataset.active = entry.active ? "true" : "false";
    return tr;
  }

  function renderFilters(data) {
    const block = data.filters.filter(function (entry) { return entry.kind === "blocklist"; });
    const allow = data.filters.filter(function (entry) { return entry.kind === "allowlist"; });
    showTable(document.getElementById("blocklist-table"), document.getElementById("blocklist-empty"), block.map(filterRow));
    showTable(document.getElementById("allowlist-table"), document.getElementById("allowlist-empty"), allow.map(filterRow));
    const note = data.allowlist_mode ?
      "Login allowlist mode is on: only listed addresses may sign in. Your address is " + data.client_ip + "." :
      "Your address, as the station sees it, is " + data.client_ip + ".";
    say("allowlist-note", note);
  }

  async function loadFilters() {
    try {
      const data = await latest("filters", function () { return api("GET", "/security/ip-filters"); });
      if (data) renderFilters(data);
    } catch (error) {
      say("filters-status", "Could not load the ban list: " + error.message, true);
    }
  }

  const banForm = document.getElementById("ban-form");
  if (banForm) {
    banForm.addEventListener("submit", function (event) {
      event.preventDefault();
      const form = new FormData(banForm);
      const body = { value: String(form.get("value")).trim(), kind: form.get("kind") };
      ["reason", "description"].forEach(function (name) {
        const text = String(form.get(name) || "").trim();
        if (text) body[name] = text;
      });
      if (form.get("duration_minutes")) body.duration_minutes = Number(form.get("duration_minutes"));
      withLockoutCheck(function (confirm) {
        return api("POST", "/security/ip-filters", confirm ? Object.assign({ confirm_lockout: true }, body) : body);
      }).then(function (answer) {
        if (!answer) { say("filters-status", "Nothing was added."); return; }
        const list = answer.filter.kind === "allowlist" ? "allowlist" : "ban list";
        say("filters-status", "Added " + answer.filter.value + " to the " + list + ".");
        banForm.reset();
        afterBanChange();
      }).catch(function (error) { say("filters-status", error.message, true); });
    });
  }

  document.getElementById("panel-banned-ips").addEventListener("click", function (event) {
    const button = event.target.closest("button.sc-toggle, button.sc-remove");
    if (!button || !canManage) return;
    const tr = button.closest("tr");
    const url = "/security/ip-filters/" + tr.dataset.id;
    let change;
    if (button.classList.contains("sc-toggle")) {
      const active = tr.dataset.active !== "true";
      change = withLockoutCheck(function (confirm) {
        return api("PATCH", url, confirm ? { active: active, confirm_lockout: true } : { active: active });
      }).then(function (answer) {
        return answer && (active ? "Enabled " : "Disabled ") + tr.dataset.value + ".";
      });
    } else {
      if (!window.confirm("Remove " + tr.dataset.value + " from the list?")) return;
      change = withLockoutCheck(function (confirm) {
        return api("DELETE", url + (confirm ? "?confirm_lockout=true" : ""));
      }).then(function (answer) { return answer && "Removed " + tr.dataset.value + "."; });
    }
    change.then(function (message) {
      say("filters-status", message || "Nothing was changed.");
      if (message) afterBanChange();
    }).catch(function (error) { say("filters-status", error.message, true); });
  });

  // --- host firewall -------------------------------------------------------------------------

  function yesNo(flagValue, yes, no) { return flagValue ? yes : no; }

  function renderFirewall(status) {
    const service = status.service || {};
    say("fw-service", service.running ? "Running (" + plural((service.jails || []).length, "jail") + ")" : "Not running", !service.running);
    say("fw-mirror", yesNo(status.mirror_enabled, "On: application bans are mirrored", "Off"));
    say("fw-jail", status.jail.name + ": " + yesNo(status.jail.loaded, "loaded", "not loaded"), status.mirror_enabled && !status.jail.loaded);
    say("fw-ssh-jail", status.ssh_jail_enabled ? status.ssh_jail.name + ": " + yesNo(status.ssh_jail.loaded, "loaded", "not loaded") : "SSH protection off");
    say("fw-mirrored", status.mirrored + " of " + status.mirrorable);
    say("fw-pending", String(status.firewall_pending), status.firewall_pending > 0);
    const actuator = document.getElementById("firewall-error");
    actuator.hidden = !status.actuator_error;
    actuator.textContent = status.actuator_error ? "fail2ban reports: " + status.actuator_error : "";
    const sync = document.getElementById("firewall-sync-error");
    sync.hidden = !status.sync_error;
    sync.textContent = status.sync_error ? "Last sync failed: " + status.sync_error : "";
  }

  async function loadFirewall(force) {
    if (!isAdmin || (state.firewallLoaded && !force)) return;
    state.firewallLoaded = true;
    say("firewall-status", "Checking the host firewall…");
    try {
      const status = await latest("firewall", function () { return api("GET", "/admin/hostban/status"); });
      if (!status) return;
      renderFirewall(status);
      say("firewall-status", "Checked " + when(new Date().toISOString()) + ".");
    } catch (error) {
      state.firewallLoaded = false;
      say("firewall-status", "Could not read the host firewall status: " + error.message, true);
    }
  }

  if (isAdmin) {
    document.getElementById("fw-refresh").addEventListener("click", function () { loadFirewall(true); });
    document.getElementById("fw-resync").addEventListener("click", function () {
      const button = document.getElementById("fw-resync");
      button.disabled = true;
      say("firewall-status", "Resyncing…");
      api("POST", "/admin/hostban/resync").then(function (answer) {
        const sync = answer.sync || {};
        loadOverview();
        return loadFirewall(true).then(function () {
          say("firewall-status", "Resynced: " + (sync.mirrored || 0) + " mirrored, " + (sync.firewall_pending || 0) +
            " pending" + (sync.sync_error ? "; " + sync.sync_error : "") + ".", Boolean(sync.sync_error));
        });
      }).catch(function (error) { say("firewall-status", error.message, true); })
        .finally(function () { button.disabled = false; });
    });
  }

  // --- start -------------------------------------------------------------------------------

  selectTab(tabFromUrl(), false);
  loadOverview();
  window.setInterval(loadOverview, OVERVIEW_EVERY_MS);
}());
