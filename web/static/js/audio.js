// Audio pages: live source cards (poll /api/audio/sources), restart, and the audio alert actions
// (acknowledge, resolve, resolve all) as POSTs with the CSRF token.
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

  function showSource(card, source) {
    card.querySelector(".audio-state").textContent = source.state;
    const level = source.level_dbfs;
    card.querySelector(".audio-level").value = level === null ? -60 : Math.max(-60, level);
    card.querySelector(".audio-level-text").textContent =
      level === null ? "no audio yet" : level.toFixed(1) + " dBFS";
    card.querySelector(".audio-title").textContent = source.icy_title ? "Now: " + source.icy_title : "";
    card.querySelector(".audio-error").textContent = source.error_message || "";
    const archiveError = card.querySelector(".audio-archive-error");
    if (archiveError) {
      archiveError.textContent = source.archive_error ? "Archive: " + source.archive_error : "";
    }
  }

  const cards = document.getElementById("audio-sources");
  if (cards) {
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
      const button = event.target.closest(".audio-restart");
      if (!button) return;
      button.disabled = true;
      post(button.dataset.url).then(function (source) {
        showSource(button.closest(".audio-card"), source);
        say("audio-status", "Restart requested for " + source.name + ".");
      }).catch(function (err) {
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
