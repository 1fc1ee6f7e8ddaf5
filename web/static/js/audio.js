// Audio pages: live source cards (poll /api/audio/sources: state, level meter with peak hold and
// clipping mark, ICY title, last header heard), their restart, edit, enable/disable, delete and
// play-the-last-archived-minute buttons, and the audio alert actions (acknowledge, resolve,
// resolve all), each a request with the CSRF token. The source form is audio-form.js.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');

  function post(url) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) {
          throw new Error(body.error ? body.error.message : "Request failed (" + response.status + ")");
        }
        return body;
      });
    });
  }

  function say(id, text, className) {
    const status = document.getElementById(id);
    if (!status) return;
    const p = document.createElement("p");
    p.className = className || "hint";
    p.textContent = text;
    status.replaceChildren(p);
  }

  // The meter: -60..0 dBFS along the track; the peak marker holds the highest peak for
  // PEAK_HOLD_MS, then follows the newest.
  const FLOOR = -60;
  const PEAK_HOLD_MS = 3000;

  function position(db) {
    return Math.max(0, Math.min(100, (Math.max(FLOOR, db) - FLOOR) / -FLOOR * 100));
  }

  function decibels(value) {
    return value === null || value === undefined || value === "" ? null : Number(value);
  }

  function showMeter(card, level, peak) {
    const meter = card.querySelector(".audio-meter");
    if (!meter) return;
    const now = Date.now();
    const held = decibels(meter.dataset.held);
    if (peak !== null && (held === null || peak >= held || now - Number(meter.dataset.heldAt || 0) > PEAK_HOLD_MS)) {
      meter.dataset.held = String(peak);
      meter.dataset.heldAt = String(now);
    }
    const shown = decibels(meter.dataset.held);
    meter.querySelector(".audio-meter-bar").style.width = (level === null ? 0 : position(level)) + "%";
    const marker = meter.querySelector(".audio-meter-peak");
    marker.hidden = shown === null;
    if (shown !== null) marker.style.left = position(shown) + "%";
    card.querySelector(".audio-peak-text").textContent = shown === null ? "none" : shown.toFixed(1) + " dBFS";
  }

  function plainTime(iso) {
    return iso ? iso.replace("T", " ").replace(/(\.\d+)?\+00:00$/, " UTC") : "";
  }

  function showSource(card, source) {
    card.querySelector(".audio-state").textContent = source.state;
    const level = source.level_dbfs;
    card.querySelector(".audio-level-text").textContent =
      level === null ? "no audio yet" : level.toFixed(1) + " dBFS";
    showMeter(card, level, decibels(source.peak_dbfs));
    card.querySelector(".audio-clip").hidden = !source.clipping;
    card.querySelector(".audio-title").textContent = source.icy_title ? "Now: " + source.icy_title : "";
    const header = source.last_header;
    card.querySelector(".audio-header").textContent = header ?
      "Last header heard " + plainTime(header.received_at) + ": " + (header.text || header.header) :
      "No header heard yet.";
    card.querySelector(".audio-error").textContent = source.error_message || "";
    card.querySelector(".audio-disabled").hidden = source.enabled;
    card.querySelector(".audio-relay").hidden = !source.relay_enabled;
    const toggle = card.querySelector(".audio-toggle");
    toggle.dataset.enabled = source.enabled ? "true" : "false";
    toggle.textContent = source.enabled ? "Disable" : "Enable";
    const archiveError = card.querySelector(".audio-archive-error");
    if (archiveError) {
      archiveError.textContent = source.archive_error ? "Archive: " + source.archive_error : "";
    }
  }

  function send(method, url, body) {
    return fetch(url, {
      method: method, credentials: "same-origin",
      headers: {
        "Accept": "application/json", "Content-Type": "application/json",
        "X-CSRF-Token": meta ? meta.content : "",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) {
          throw new Error(answer.error ? answer.error.message : "Request failed (" + response.status + ")");
        }
        return answer;
      });
    });
  }

  const cards = document.getElementById("audio-sources");
  if (cards) {
    cards.querySelectorAll(".audio-card").forEach(function (card) {
      const meter = card.querySelector(".audio-meter");
      meter.querySelectorAll(".audio-meter-scale li").forEach(function (mark) {
        mark.style.left = position(Number(mark.dataset.db)) + "%";
      });
      showMeter(card, decibels(meter.dataset.level), decibels(meter.dataset.peak));
    });
    const refresh = function () {
      fetch(cards.dataset.url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (body) {
          if (!body) return;
          body.items.forEach(function (source) {
            const card = document.getElementById("audio-source-" + source.id);
            if (card) showSource(card, source);
          });
        }).catch(function () { /* the next poll tries again */ });
    };
    setInterval(refresh, 2000);
    cards.addEventListener("click", function (event) {
      const button = event.target.closest("button");
      if (!button) return;
      const card = button.closest(".audio-card");
      const name = card.querySelector("h2").textContent;
      if (button.classList.contains("audio-edit")) {
        document.dispatchEvent(new CustomEvent("audio:edit", { detail: { url: button.dataset.url } }));
        return;
      }
      if (button.classList.contains("audio-play")) {
        const player = card.querySelector(".audio-player");
        const start = Number(button.dataset.start);
        player.hidden = false;
        // The fragment asks for the start; a server without ranges ignores it, so seek too.
        player.addEventListener("loadedmetadata", function () {
          if (player.currentTime < start) player.currentTime = start;
        }, { once: true });
        player.src = button.dataset.url + "#t=" + start;
        player.play().catch(function (err) {
          say("audio-status", "The archive cannot be played here: " + err.message, "error");
        });
        return;
      }
      let request = null;
      let done = null;
      if (button.classList.contains("audio-restart")) {
        request = function () { return post(button.dataset.url); };
        done = function (source) {
          showSource(card, source);
          say("audio-status", "Restart requested for " + source.name + ".");
        };
      } else if (button.classList.contains("audio-toggle")) {
        const enable = button.dataset.enabled !== "true";
        request = function () { return send("PUT", button.dataset.url, { enabled: enable }); };
        done = function (source) {
          showSource(card, source);
          say("audio-status", (enable ? "Enabled " : "Disabled ") + source.name + ".");
        };
      } else if (button.classList.contains("audio-delete")) {
        if (!window.confirm("Delete " + name + "? Its settings are removed; this cannot be undone.")) return;
        request = function () { return send("DELETE", button.dataset.url); };
        done = function () {
          document.dispatchEvent(new CustomEvent("audio:deleted", { detail: { id: card.dataset.id } }));
          card.remove();
          say("audio-status", "Deleted " + name + ".");
        };
      } else {
        return;
      }
      button.disabled = true;
      request().then(done).catch(function (err) {
        say("audio-status", err.message, "error");
      }).then(function () { button.disabled = false; });
    });
  }

  document.querySelectorAll(".audio-alert-action, #audio-resolve-all").forEach(function (button) {
    button.addEventListener("click", function () {
      button.disabled = true;
      post(button.dataset.url).then(function (body) {
        say("audio-alerts-status", body.resolved !== undefined ?
          "Resolved " + body.resolved + " alert(s)." : "Done.");
        window.location.reload();
      }).catch(function (err) {
        say("audio-alerts-status", err.message, "error");
        button.disabled = false;
      });
    });
  });
})();
