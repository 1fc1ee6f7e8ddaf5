// The notifications page: add a channel, send a test, remove one (JSON API, CSRF header).
// The channel form shows the station's refusals beside their fields (js/form-errors.js).
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const status = document.getElementById("notifications-status");

  async function call(method, path, body) {
    const response = await fetch(path, {
      method: method,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new Error((data.error && data.error.message) || ("HTTP " + response.status));
    }
    return data;
  }

  function say(text) { if (status) { status.textContent = text; } }

  const form = document.getElementById("channel-form");
  if (form) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const events = Array.from(form.querySelectorAll('input[name="events"]:checked')).map((e) => e.value);
      say("");
      try {
        await FormErrors.send(form, "/api/notifications/channels", { json: {
          name: form.elements.name.value, url: form.elements.url.value, events: events,
        } });
        window.location.reload();
      } catch (error) { if (!error.shown) { say(error.message); } }
    });
  }
  document.querySelectorAll(".channel-test").forEach((button) => {
    button.addEventListener("click", async () => {
      try {
        await call("POST", "/api/notifications/channels/" + button.dataset.id + "/test");
        say("Test queued: the worker sends it within seconds; see the delivery log.");
      } catch (error) { say(error.message); }
    });
  });
  document.querySelectorAll(".channel-delete").forEach((button) => {
    button.addEventListener("click", async () => {
      if (!window.confirm("Remove this channel?")) { return; }
      try {
        await call("DELETE", "/api/notifications/channels/" + button.dataset.id);
        window.location.reload();
      } catch (error) { say(error.message); }
    });
  });
})();
