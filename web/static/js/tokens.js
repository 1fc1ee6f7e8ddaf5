// API tokens (own and all): make one (shown once), revoke one. JSON calls with the CSRF token.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";

  async function call(method, url, body) {
    const response = await fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) {
      throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    }
    return data;
  }

  function say(text, isError) {
    const el = document.getElementById("tokens-status");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("error", Boolean(isError));
  }

  const form = document.getElementById("create-token-form");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const data = new FormData(form);
      const days = String(data.get("expires_in_days") || "").trim();
      call("POST", "/api/tokens", {
        name: data.get("name"),
        scopes: data.getAll("scopes"),
        expires_in_days: days === "" ? null : Number(days),
      }).then(function (result) {
        const box = document.getElementById("new-token");
        const value = document.getElementById("new-token-value");
        value.value = result.token;
        box.hidden = false;
        form.reset();
        say("Made the token " + result.api_token.name + ". Copy it now; reload the page to see it listed.");
        value.focus();
        value.select();
      }).catch(function (err) { say(err.message, true); });
    });
  }

  document.querySelectorAll(".revoke-token").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Revoke the token " + button.dataset.name + "? Programs using it stop at once.")) return;
      call("DELETE", button.dataset.url)
        .then(function () {
          say("Revoked " + button.dataset.name + ".");
          window.setTimeout(function () { window.location.reload(); }, 400);
        })
        .catch(function (err) { say(err.message, true); });
    });
  });
})();
