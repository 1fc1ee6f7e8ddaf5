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

  document.querySelectorAll(".eas-send").forEach(function (button) {
    button.addEventListener("click", function () {
      const id = button.dataset.activationId;
      if (!window.confirm("Air activation " + id + " now?")) return;
      button.disabled = true;
      say("Sending…");
      call("/eas/manual/events/" + id + "/send", {})
        .then(function (data) { say(queued(data)); reloadSoon(); })
        .catch(function (err) { button.disabled = false; say(err.message, true); });
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
      if (!window.confirm("Air this message again?")) return;
      call("/messages/" + button.dataset.messageId + "/resend", {})
        .then(function (data) { say(queued(data)); reloadSoon(); })
        .catch(function (err) { say(err.message, true); });
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
