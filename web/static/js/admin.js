// Account, user and session management: JSON calls carrying the CSRF token.
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
      const message = data.error ? data.error.message : "Request failed (" + response.status + ")";
      throw new Error(message);
    }
    return data;
  }

  function say(id, text, isError) {
    const el = typeof id === "string" ? document.getElementById(id) : id;
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("error", Boolean(isError));
  }

  function reloadSoon() { window.setTimeout(function () { window.location.reload(); }, 400); }

  // Users page: every form goes through FormErrors (all errors at once, beside their fields).
  const createForm = document.getElementById("create-user-form");
  if (createForm) {
    createForm.addEventListener("submit", function (event) {
      event.preventDefault();
      const form = new FormData(createForm);
      FormErrors.send(createForm, "/admin/users", { json: {
        username: form.get("username"), role: form.get("role"), password: form.get("password"),
      } }).then(function (data) { say("users-status", "Added " + data.user.username + "."); reloadSoon(); })
        .catch(function (err) { if (!err.shown) say("users-status", err.message, true); });
    });
  }

  // A user's row: the role select (form="user-N"), Enable/Disable and Delete sit in the form
  // user-N; a refusal of the whole account (is_active, delete) goes to that form's summary.
  function userForm(id) { return document.getElementById("user-" + id); }
  function patchUser(id, body) {
    const form = userForm(id);
    return FormErrors.send(form, "/admin/users/" + id, { method: "PATCH", json: body }).catch(function (err) {
      if (!err.shown) FormErrors.show(form, [{ field: null, message: err.message }]);
      throw err;
    });
  }
  function onAccount(errors) {
    return errors.map(function (e) { return e.field === "role" ? e : { field: null, message: e.message }; });
  }
  document.querySelectorAll(".role-select").forEach(function (select) {
    let saved = select.value;
    select.addEventListener("change", function () {
      patchUser(select.dataset.userId, { role: select.value })
        .then(function () { saved = select.value; say("users-status", "Role changed."); })
        .catch(function () { select.value = saved; });
    });
  });
  document.querySelectorAll(".toggle-active").forEach(function (button) {
    button.addEventListener("click", function () {
      const enable = button.dataset.active !== "true";
      const form = userForm(button.dataset.userId);
      fetchJson("PATCH", "/admin/users/" + button.dataset.userId, { is_active: enable })
        .then(function () { reloadSoon(); })
        .catch(function (errors) { FormErrors.show(form, onAccount(errors)); });
    });
  });
  document.querySelectorAll(".delete-user").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!window.confirm("Delete " + button.dataset.username + "? This cannot be undone.")) return;
      const form = userForm(button.dataset.userId);
      fetchJson("DELETE", "/admin/users/" + button.dataset.userId)
        .then(function () { reloadSoon(); })
        .catch(function (errors) { FormErrors.show(form, onAccount(errors)); });
    });
  });
  document.querySelectorAll("form.user-password").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      FormErrors.send(form, "/admin/users/" + form.dataset.userId, {
        method: "PATCH", json: { password: form.elements.password.value },
      }).then(function () { form.reset(); say("users-status", "Password set; that account was signed out."); })
        .catch(function (err) { if (!err.shown) FormErrors.show(form, [{ field: null, message: err.message }]); });
    });
  });

  // A JSON call whose refusal rejects with the envelope's [{field, message}] (FormErrors reads it).
  function fetchJson(method, url, body) {
    return fetch(url, {
      method: method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) throw FormErrors.fromAnswer(data, response.status);
        return data;
      });
    }, function (err) { throw [{ field: null, message: err.message }]; });
  }

  // Sessions page
  document.querySelectorAll("button.terminate").forEach(function (button) {
    button.addEventListener("click", function () {
      call("POST", "/api/admin/sessions/" + button.dataset.sessionId + "/terminate")
        .then(function () { say("sessions-status", "Session ended."); reloadSoon(); })
        .catch(function (err) { say("sessions-status", err.message, true); });
    });
  });
  const others = document.getElementById("terminate-others");
  if (others) {
    others.addEventListener("click", function () {
      if (!window.confirm("End every other session?")) return;
      call("POST", "/api/admin/sessions/terminate-others")
        .then(function (data) { say("sessions-status", "Ended " + data.ended + " session(s)."); reloadSoon(); })
        .catch(function (err) { say("sessions-status", err.message, true); });
    });
  }

  // Account page: errors beside the current or the new password.
  const passwordForm = document.getElementById("password-form");
  if (passwordForm) {
    const status = passwordForm.querySelector(".status");
    passwordForm.addEventListener("submit", function (event) {
      event.preventDefault();
      const form = new FormData(passwordForm);
      say(status, "");
      FormErrors.send(passwordForm, "/account/password", { json: {
        current_password: form.get("current_password"), new_password: form.get("new_password"),
      } }).then(function () { passwordForm.reset(); say(status, "Password changed."); })
        .catch(function (err) { if (!err.shown) say(status, err.message, true); });
    });
  }
})();

// Environment page: send only the fields that changed; an emptied field removes a saved value.
(function () {
  "use strict";
  const form = document.getElementById("environment-form");
  if (!form) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const status = document.getElementById("environment-status");
    if (window.FormErrors) FormErrors.clear(form);
    const changes = {};
    form.querySelectorAll("input[name]:not([disabled])").forEach(function (input) {
      const secret = input.type === "password";
      if (secret && input.value === "") return;  // blank secret: keep the saved value
      if (input.value !== input.dataset.original) changes[input.name] = input.value === "" ? null : input.value;
    });
    if (Object.keys(changes).length === 0) { status.textContent = "Nothing changed."; return; }
    fetch(form.dataset.api, {
      method: "PUT", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
      body: JSON.stringify({ variables: changes }),
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) {
          const failure = new Error(data.error ? data.error.message : "Save failed");
          if (window.FormErrors && response.status === 422) {
            FormErrors.show(form, FormErrors.fromAnswer(data, response.status));
            failure.message = "Not saved: see the message beside each field.";
          }
          throw failure;
        }
        status.classList.remove("error");
        status.textContent = "Saved " + data.changed.join(", ") + ". Restart the station to apply.";
        const warnings = document.getElementById("environment-warnings");
        if (warnings) {
          warnings.replaceChildren();
          (data.warnings || []).forEach(function (w) {
            const item = document.createElement("li");
            item.textContent = w.message;
            warnings.appendChild(item);
          });
        }
      });
    }).catch(function (err) { status.classList.add("error"); status.textContent = err.message; });
  });
})();
