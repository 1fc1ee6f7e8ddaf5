// Manual EAS page: create activations (multipart, optional WAV), send to the airing queue,
// purge, resend, delete.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";

  async function call(url, options) {
    const headers = Object.assign({ "X-CSRF-Token": csrf, "Accept": "application/json" }, options.headers || {});
    const response = await fetch(url, {
      method: options.method || "POST", credentials: "same-origin", headers: headers, body: options.body,
    });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) {
      throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    }
    return data;
  }

  function json(url, body) {
    return call(url, { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  }

  function say(text, isError) {
    const el = document.getElementById("eas-status");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("error", Boolean(isError));
  }

  function queued(data) {
    const place = data.queue && data.queue.position;
    return "Queued for airing" + (place > 1 ? " (" + (place - 1) + " ahead)" : "") + ": " +
      data.message.header;
  }

  function reloadSoon() { window.setTimeout(function () { window.location.reload(); }, 400); }

  const form = document.getElementById("eas-compose-form");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const body = new FormData(form);
      const file = body.get("audio");
      if (file && typeof file === "object" && !file.size) body.delete("audio");
      say("Creating…");
      call("/eas/manual/events", { body: body })
        .then(function (data) { say("Activation " + data.activation.id + " created."); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
    });
  }

  // The confirmation names what will air: event, originator, counties, valid period, length,
  // outputs (and, for a resend, when it first aired). With no real output it offers only
  // "Archive only". Resolves to null (cancelled), "air" or "archive".
  const dialog = document.getElementById("eas-confirm");

  function fact(list, term, value) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = value;
    list.append(dt, dd);
  }

  function minutes(total) {
    if (total === null || total === undefined) return "unknown";
    const h = Math.floor(total / 60), m = total % 60;
    return (h ? h + " h " : "") + (m || !h ? m + " minutes" : "").trim();
  }

  function confirmAiring(info, resend) {
    return new Promise(function (resolve) {
      const facts = document.getElementById("eas-confirm-facts");
      facts.textContent = "";
      fact(facts, "Event", info.event + " (" + info.event_code + ")");
      fact(facts, "Originator", info.originator);
      fact(facts, "Counties", info.areas.join("; ") || "none");
      fact(facts, "Valid for", minutes(info.valid_minutes));
      fact(facts, "Length", Math.round(info.duration) + " s");
      fact(facts, "Outputs", info.outputs.length ? info.outputs.join(", ") : "none (archive only)");
      if (info.text) fact(facts, "Text", info.text);
      document.getElementById("eas-confirm-title").textContent =
        (resend ? "Resend " : "Air ") + info.event + "?";
      const first = document.getElementById("eas-confirm-first");
      first.hidden = !resend;
      first.textContent = resend ? (info.first_aired_at
        ? "This message first aired " + info.first_aired_at.slice(0, 19).replace("T", " ") + " UTC."
        : "This message has not aired yet (it was archived only or is still queued).") : "";
      document.getElementById("eas-confirm-no-output").hidden = !info.archive_only_required;
      const air = document.getElementById("eas-confirm-air");
      air.hidden = info.archive_only_required;
      air.textContent = resend ? "Resend now" : "Air now";
      function done(choice) {
        dialog.close();
        resolve(choice);
      }
      air.onclick = function () { done("air"); };
      document.getElementById("eas-confirm-archive").onclick = function () { done("archive"); };
      document.getElementById("eas-confirm-cancel").onclick = function () { done(null); };
      dialog.oncancel = function () { resolve(null); };
      dialog.showModal();
    });
  }

  async function sendWithConfirmation(button, confirmationUrl, sendUrl, resend) {
    button.disabled = true;
    say("Preparing the confirmation…");
    try {
      const info = (await call(confirmationUrl, { method: "GET" })).confirmation;
      say("");
      const choice = await confirmAiring(info, resend);
      if (!choice) { button.disabled = false; return; }
      say(choice === "archive" ? "Archiving…" : "Sending…");
      const url = typeof sendUrl === "function" ? sendUrl(info) : sendUrl;
      const data = await json(url, { archive_only: choice === "archive" });
      say(choice === "archive" ? "Archived only (not aired): " + data.message.header : queued(data));
      reloadSoon();
    } catch (err) {
      button.disabled = false;
      say(err.message, true);
    }
  }

  document.querySelectorAll(".eas-send").forEach(function (button) {
    button.addEventListener("click", function () {
      const id = button.dataset.activationId;
      const resend = button.dataset.sent === "true";
      sendWithConfirmation(button, "/eas/manual/events/" + id + "/confirmation",
        resend ? function (info) { return "/messages/" + info.message_id + "/resend"; }
          : "/eas/manual/events/" + id + "/send", resend);
    });
  });

  document.querySelectorAll(".eas-remove").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Take queue item " + button.dataset.queueId + " off the queue? It will not air.")) return;
      call("/api/eas/airing/queue/" + button.dataset.queueId, { method: "DELETE" })
        .then(function () { say("Removed from the queue."); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
    });
  });

  document.querySelectorAll(".eas-stop").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Stop the message on the air now? The end of message is sent on every output.")) return;
      json("/api/eas/airing/stop", { clear_queue: false })
        .then(function () { say("Stopping: the end of message follows."); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
    });
  });

  const purge = document.getElementById("eas-purge-selected");
  if (purge) {
    purge.addEventListener("click", function () {
      const ids = Array.prototype.map.call(
        document.querySelectorAll(".eas-select:checked"), function (box) { return Number(box.value); });
      if (!ids.length) { say("Select activations to purge first.", true); return; }
      if (!window.confirm("Purge " + ids.length + " activation(s)?")) return;
      json("/eas/manual/events/purge", { ids: ids })
        .then(function (data) { say("Purged " + data.purged.length + "."); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
    });
  }

  document.querySelectorAll(".eas-resend").forEach(function (button) {
    button.addEventListener("click", function () {
      const id = button.dataset.messageId;
      sendWithConfirmation(button, "/messages/" + id + "/confirmation", "/messages/" + id + "/resend", true);
    });
  });

  document.querySelectorAll(".eas-delete").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Delete this archived message?")) return;
      call("/messages/" + button.dataset.messageId + "/delete", {})
        .then(function () { say("Deleted."); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
    });
  });
})();
