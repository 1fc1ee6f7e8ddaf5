// The alert list: poll the broadcast state and reload the list, with the page's filters and
// sort (data-query, the same query the address holds), when the alerts change.
(function () {
  "use strict";
  const table = document.getElementById("alerts-table");
  if (!table) return;
  const body = table.querySelector("tbody");
  const empty = document.getElementById("alerts-empty");
  const status = document.getElementById("alerts-status");
  const limit = table.dataset.limit || "200";
  const query = table.dataset.query || "";
  const noun = (status && status.dataset.noun) || "active alert";
  const SEVERITIES = ["extreme", "severe", "moderate", "minor"];
  const POLL_MS = 1500;
  let seen = null;

  function when(text) {
    if (!text) return "—";
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) return text;
    return date.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function severityClass(severity) {
    const name = String(severity || "").toLowerCase();
    return SEVERITIES.indexOf(name) >= 0 ? name : "unknown";
  }

  function render(data) {
    const rows = data.alerts.map(function (alert) {
      const tr = document.createElement("tr");
      tr.dataset.id = String(alert.id);
      tr.className = "severity-" + severityClass(alert.severity);
      const link = document.createElement("a");
      link.href = "/alerts/" + alert.id;
      link.textContent = alert.event || alert.event_code;
      cell(tr, "").appendChild(link);
      const badge = document.createElement("span");
      badge.className = "severity severity-" + severityClass(alert.severity);
      badge.textContent = alert.severity || "Unknown";
      cell(tr, "").appendChild(badge);
      cell(tr, alert.headline);
      cell(tr, alert.area_desc);
      cell(tr, when(alert.sent));
      cell(tr, when(alert.expires));
      cell(tr, alert.in_area ? "in area" : "out of area");
      return tr;
    });
    body.replaceChildren.apply(body, rows);
    table.hidden = rows.length === 0;
    if (empty) empty.hidden = rows.length !== 0;
    if (status) {
      const filtered = status.dataset.filtered === "yes";
      status.textContent = data.total + " " + noun + (data.total === 1 ? "" : "s") +
        (filtered ? (data.total === 1 ? " matches" : " match") + " these filters" : "");
    }
  }

  async function getJson(url) {
    const response = await fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } });
    if (!response.ok) throw new Error("Request failed (" + response.status + ")");
    return response.json();
  }

  async function poll() {
    try {
      const state = await getJson("/api/broadcast/state");
      const key = [state.active_alerts, state.timestamp, state.generation].join("|");
      if (key !== seen) {
        render(await getJson("/api/alerts?" + (query || "limit=" + encodeURIComponent(limit))));
      }
      seen = key;
    } catch (error) {
      if (status) status.textContent = "Could not check for new alerts: " + error.message;
    } finally {
      window.setTimeout(poll, POLL_MS);
    }
  }

  poll();
}());
