// EAS airing settings page: save as JSON (PUT) and generate a new Icecast source password.
(function () {
  "use strict";
  const form = document.getElementById("eas-settings-form");
  if (!form) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const status = document.getElementById("eas-settings-status");

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  async function call(method, url, body) {
    const headers = { "X-CSRF-Token": csrf, "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) {
      throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    }
    return data;
  }

  function values() {
    const el = form.elements;
    const data = {
      sample_rate: Number(el.namedItem("sample_rate").value),
      icecast_enabled: el.namedItem("icecast_enabled").checked,
      icecast_host: el.namedItem("icecast_host").value,
      icecast_port: Number(el.namedItem("icecast_port").value),
      icecast_mount: el.namedItem("icecast_mount").value,
      icecast_username: el.namedItem("icecast_username").value,
      icecast_tls: el.namedItem("icecast_tls").checked,
      alsa_enabled: el.namedItem("alsa_enabled").checked,
      alsa_device: el.namedItem("alsa_device").value,
    };
    const password = el.namedItem("icecast_password").value;
    if (password) data.icecast_password = password;
    return data;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    say("Saving…");
    call("PUT", "/admin/eas_settings", values())
      .then(function (data) {
        form.elements.namedItem("icecast_password").value = "";
        say(data.changed.length ? "Saved (" + data.changed.join(", ") + " changed)." : "Saved; nothing changed.");
      })
      .catch(function (err) { say(err.message, true); });
  });

  const regenerate = document.getElementById("eas-icecast-regenerate");
  regenerate.addEventListener("click", function () {
    if (!window.confirm("Replace the Icecast source password? Icecast must then be given the new one.")) return;
    call("POST", "/admin/eas_settings/icecast/regenerate-password")
      .then(function (data) {
        document.getElementById("eas-icecast-password-value").textContent = data.password;
        document.getElementById("eas-icecast-new-password").hidden = false;
        say("A new source password was generated.");
      })
      .catch(function (err) { say(err.message, true); });
  });
})();
