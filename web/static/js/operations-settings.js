// Operations settings page: save each section as JSON (PUT), test a relay, preview speech and
// upload the TLS certificate.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const status = document.getElementById("settings-status");

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  async function call(method, url, body, raw) {
    const headers = { "X-CSRF-Token": csrf, "Accept": "application/json" };
    if (body !== undefined && !raw) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : (raw ? body : JSON.stringify(body)),
    });
    if (!response.ok) {
      const data = await response.json().catch(function () { return {}; });
      const failure = new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
      if (window.FormErrors && response.status === 422) failure.errors = FormErrors.fromAnswer(data, response.status);
      throw failure;
    }
    return response;
  }

  function values(form) {
    const data = {};
    for (const el of form.elements) {
      if (!el.name || el.type === "file") continue;
      if (el.type === "checkbox") data[el.name] = el.checked;
      else if (el.hasAttribute("data-secret")) { if (el.value) data[el.name] = el.value; }
      else if (el.dataset.kind === "int-list") data[el.name] = el.value.split(",").map(function (s) { return s.trim(); }).filter(Boolean).map(Number);
      else if (el.dataset.kind === "text-list") data[el.name] = el.value.split(",").map(function (s) { return s.trim(); }).filter(Boolean);
      else if (el.type === "number") data[el.name] = Number(el.value);
      else data[el.name] = el.value;
    }
    return data;
  }

  document.querySelectorAll("form.settings-section").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      say("Saving…");
      if (window.FormErrors) FormErrors.clear(form);
      call("PUT", "/api/settings/" + form.dataset.section, values(form))
        .then(function (r) { return r.json(); })
        .then(function (data) {
          form.querySelectorAll("[data-secret]").forEach(function (el) { el.value = ""; });
          say(data.changed.length ? "Saved (" + data.changed.join(", ") + " changed)." : "Saved; nothing changed.");
        })
        .catch(function (err) {
          if (err.errors) {
            say("Not saved: see the message beside the field.", true);
            FormErrors.show(form, err.errors);
          } else {
            say(err.message, true);
          }
        });
    });
  });

  document.querySelectorAll("button.relay-test").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Key the transmitter relay on GPIO " + button.dataset.pin + " for half a second?")) return;
      call("POST", "/api/settings/hardware/test-relay", { pin: Number(button.dataset.pin), seconds: 0.5 })
        .then(function () { say("Relay on GPIO " + button.dataset.pin + " pulsed."); })
        .catch(function (err) { say(err.message, true); });
    });
  });

  const preview = document.getElementById("tts-preview");
  if (preview) {
    preview.addEventListener("click", function () {
      const form = preview.closest("form");
      const url = "/api/settings/tts/preview?" + new URLSearchParams(values(form)).toString();
      say("Rendering preview…");
      // Fetch first so a refusal shows its message; the audio element then plays the same URL
      // from the station itself (the page's Content-Security-Policy allows no blob: media).
      call("GET", url)
        .then(function () {
          const audio = document.getElementById("tts-preview-audio");
          audio.src = url;
          audio.hidden = false;
          audio.play().catch(function () {});
          say("Preview ready.");
        })
        .catch(function (err) { say(err.message, true); });
    });
  }

  const certForm = document.getElementById("certificate-form");
  if (certForm && certForm.elements.namedItem("certificate")) {
    certForm.addEventListener("submit", function (event) {
      event.preventDefault();
      const body = new FormData(certForm);
      say("Uploading…");
      call("POST", "/api/settings/certificate", body, true)
        .then(function (r) { return r.json(); })
        .then(function (data) { say("Installed. " + (data.status ? data.status.message : "")); })
        .catch(function (err) { say(err.message, true); });
    });
  }
})();
