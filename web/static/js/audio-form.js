// The audio source form on /audio: add and edit streams and radio receivers through the JSON API
// (/api/audio/sources, /api/radio/receivers), with the stream check shown in the form and
// "Save anyway" sending skip_url_check; the assigned-monitoring toggle saves the compliance
// settings (/api/eas/compliance/settings). Errors appear all at once beside their fields
// (aria-invalid, aria-describedby) and focus moves to the first.
(function () {
  "use strict";
  const form = document.getElementById("audio-source-form");
  if (!form) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  const $ = function (id) { return document.getElementById(id); };
  const title = $("audio-form-title");
  const submit = $("audio-submit");
  const cancel = $("audio-cancel");
  const preflight = $("audio-preflight");
  const saveAnyway = $("audio-save-anyway");
  const forget = form.querySelector(".audio-forget");
  const passwordHint = $("audio-f-password-hint");
  const PASSWORD_HINT = passwordHint.textContent;
  const STATUS_KEY = "alertstation.audio.status";
  // Which input shows the error of each field the API names.
  const FIELDS = {
    name: "audio-f-name",
    url: "audio-f-url",
    kind: "audio-kind-group",
    command: "audio-f-command",
    device_params: "audio-f-user",
    "device_params.auth_username": "audio-f-user",
    "device_params.auth_password": "audio-f-password",
    "device_params.sample_rate": "audio-f-rate",
    "device_params.channels": "audio-f-channels",
    assigned_sources: "audio-f-assigned",
  };
  let editing = null; // the source being edited (its JSON form), or null when adding
  let assigned = null; // the compliance settings' assigned sources, once read

  function api(method, url, body) {
    const headers = { "Accept": "application/json", "X-CSRF-Token": meta ? meta.content : "" };
    const init = { method: method, credentials: "same-origin", headers: headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, body: data };
      });
    });
  }

  function failure(answer) {
    const error = answer.body && answer.body.error;
    return {
      field: error && error.details ? error.details.field : undefined,
      message: error ? error.message : "The request failed (HTTP " + answer.status + ").",
      code: error ? error.code : undefined,
      details: error ? error.details : undefined,
    };
  }

  function kind() {
    return editing ? editing.kind : form.querySelector('input[name="kind"]:checked').value;
  }

  function showKind() {
    const stream = kind() === "stream";
    form.querySelector(".audio-stream-fields").hidden = !stream;
    form.querySelector(".audio-receiver-fields").hidden = stream;
  }

  // --- errors beside their fields: the station's one mechanism (js/form-errors.js) ----------

  // The form's own name of the input showing an error of the field the API names.
  function nameOf(field) {
    const input = field && FIELDS[field] ? $(FIELDS[field]) : null;
    if (!input) return null;
    return input.getAttribute("data-error-for") || input.name || null;
  }

  function clearErrors() {
    window.FormErrors.clear(form);
  }

  function showErrors(errors) {
    window.FormErrors.show(form, errors.map(function (err) {
      return { field: nameOf(err.field), message: err.message };
    }));
  }

  // The checks the browser can make before asking the station: every one at once.
  function check() {
    const errors = [];
    if (!$("audio-f-name").value.trim()) errors.push({ field: "name", message: "Enter a name for the source." });
    if (kind() === "stream") {
      const url = $("audio-f-url").value.trim();
      if (!url) errors.push({ field: "url", message: "Enter the stream's address (http:// or https://)." });
      else if (!/^https?:\/\/[^\s/]+/i.test(url)) {
        errors.push({ field: "url", message: "The address must start with http:// or https:// and name a host." });
      }
      const user = $("audio-f-user").value.trim();
      const password = $("audio-f-password").value;
      const stored = editing && editing.auth_password_set && !$("audio-f-forget").checked;
      if ((password || stored) && !user) {
        errors.push({ field: "device_params.auth_username", message: "A password needs a user name." });
      }
    } else {
      if (!commandArgs().length) {
        errors.push({ field: "command", message: "Enter the program and its arguments, one per line." });
      }
      const rate = Number($("audio-f-rate").value);
      if (!Number.isInteger(rate) || rate < 8000 || rate > 192000) {
        errors.push({ field: "device_params.sample_rate", message: "The sample rate must be a whole number from 8000 to 192000 Hz." });
      }
    }
    return errors;
  }

  function commandArgs() {
    return $("audio-f-command").value.split("\n").map(function (line) { return line.trim(); })
      .filter(Boolean);
  }

  // --- the request body ----------------------------------------------------------------------

  function body() {
    const data = {
      name: $("audio-f-name").value.trim(),
      enabled: $("audio-f-enabled").checked,
      relay_enabled: $("audio-f-relay").checked,
    };
    if (!editing) data.kind = kind();
    if (kind() === "stream") {
      data.url = $("audio-f-url").value.trim();
      const params = { auth_username: $("audio-f-user").value.trim() };
      const password = $("audio-f-password").value;
      if (password) params.auth_password = password; // blank keeps the stored one
      else if (editing && $("audio-f-forget").checked) params.auth_password = null;
      data.device_params = params;
    } else {
      data.command = commandArgs();
      data.device_params = {
        sample_rate: Number($("audio-f-rate").value),
        channels: Number($("audio-f-channels").value),
      };
    }
    return data;
  }

  function sameOrigin(a, b) {
    try {
      const x = new URL(a);
      const y = new URL(b);
      return x.protocol === y.protocol && x.host === y.host;
    } catch (err) {
      return false;
    }
  }

  // --- the stream check ----------------------------------------------------------------------

  function showPreflight(result, failed) {
    const text = preflight.querySelector(".audio-preflight-text");
    const status = result.status ? " (HTTP " + result.status + ")" : "";
    if (failed) {
      text.textContent = "The stream check failed: " + result.message + status +
        ". Fix the address or the credentials, or save anyway.";
      text.className = "audio-preflight-text error";
    } else {
      text.textContent = "The stream check passed" + status + ": " + result.message +
        (result.content_type ? " · " + result.content_type : "") +
        (result.icy_name ? " · " + result.icy_name : "");
      text.className = "audio-preflight-text";
    }
    saveAnyway.hidden = !failed;
    preflight.hidden = false;
  }

  function hidePreflight() {
    preflight.hidden = true;
    saveAnyway.hidden = true;
  }

  // For an edit, the station checks the stream before saving (the stored credentials fill in a
  // blank password while the address stays on the same origin).
  function checkEdit(data) {
    const probe = { url: data.url, device_params: {} };
    if (data.device_params.auth_username) probe.device_params.auth_username = data.device_params.auth_username;
    if (data.device_params.auth_password) probe.device_params.auth_password = data.device_params.auth_password;
    if (sameOrigin(editing.url, data.url) && data.device_params.auth_password !== null) probe.id = editing.id;
    return api("POST", "/api/audio/sources/test-stream", probe);
  }

  // --- saving --------------------------------------------------------------------------------

  function saveAssigned(sourceId) {
    const wanted = $("audio-f-assigned").checked;
    const key = "audio:" + sourceId;
    return readAssigned().then(function (current) {
      if (current === null) {
        return wanted ? { field: "assigned_sources", message: "The compliance settings cannot be read, so the assignment was not saved." } : null;
      }
      if ((current.indexOf(key) >= 0) === wanted) return null;
      const next = current.filter(function (item) { return item !== key; });
      if (wanted) next.push(key);
      return api("PUT", "/api/eas/compliance/settings", { assigned_sources: next }).then(function (answer) {
        if (answer.ok) return null;
        const err = failure(answer);
        return { field: "assigned_sources", message: "The source was saved, but not its assignment: " + err.message };
      });
    });
  }

  // The assigned sources that still exist (a deleted source's assignment is left out, so the
  // next save does not carry it).
  function readAssigned() {
    return api("GET", "/api/eas/compliance").then(function (answer) {
      assigned = answer.ok ? answer.body.sources.filter(function (item) { return item.assigned; })
        .map(function (item) { return item.source; }) : null;
      return assigned;
    }).catch(function () { return null; });
  }

  function finish(source, verb) {
    return saveAssigned(source.id).then(function (problem) {
      if (problem) {
        editing = editing || source;
        showErrors([problem]);
        return;
      }
      try {
        window.sessionStorage.setItem(STATUS_KEY, verb + " " + source.name + ".");
      } catch (err) { /* the note is a courtesy */ }
      window.location.reload();
    });
  }

  function save(skipCheck) {
    const errors = check();
    if (errors.length) {
      showErrors(errors);
      return Promise.resolve();
    }
    clearErrors();
    const data = body();
    if (!editing) {
      const collection = data.kind === "receiver" ? "/api/radio/receivers" : "/api/audio/sources";
      if (data.kind === "stream") data.skip_url_check = Boolean(skipCheck);
      return api("POST", collection, data).then(function (answer) {
        if (answer.ok) {
          if (answer.body.preflight) showPreflight(answer.body.preflight, false);
          return finish(answer.body, "Added");
        }
        const err = failure(answer);
        if (err.code === "preflight_failed") {
          showPreflight({ status: err.details.status, message: err.details.upstream_message }, true);
          showErrors([{ field: "url", message: "The stream check failed: " + err.details.upstream_message + "." }]);
          return;
        }
        showErrors([err]);
      });
    }
    const checked = data.url !== undefined && !skipCheck ? checkEdit(data) : Promise.resolve(null);
    return checked.then(function (probe) {
      if (probe && !probe.ok) {
        showErrors([failure(probe)]);
        return;
      }
      if (probe) {
        showPreflight(probe.body, !probe.body.ok);
        if (!probe.body.ok) {
          showErrors([{ field: "url", message: "The stream check failed: " + probe.body.message + "." }]);
          return;
        }
      }
      return api("PUT", editing.base_url, data).then(function (answer) {
        if (!answer.ok) {
          showErrors([failure(answer)]);
          return;
        }
        return finish(answer.body, "Saved");
      });
    });
  }

  function busy(promise) {
    submit.disabled = true;
    saveAnyway.disabled = true;
    return promise.catch(function (err) {
      showErrors([{ message: "The station could not be reached: " + err.message }]);
    }).then(function () {
      submit.disabled = false;
      saveAnyway.disabled = false;
    });
  }

  // --- add and edit modes --------------------------------------------------------------------

  function reset() {
    editing = null;
    form.reset();
    form.dataset.mode = "add";
    form.querySelectorAll('input[name="kind"]').forEach(function (radio) { radio.disabled = false; });
    title.textContent = "Add a source";
    submit.textContent = "Add source";
    cancel.hidden = true;
    forget.hidden = true;
    passwordHint.textContent = PASSWORD_HINT;
    clearErrors();
    hidePreflight();
    showKind();
  }

  function edit(url) {
    return api("GET", url).then(function (answer) {
      if (!answer.ok) {
        showErrors([failure(answer)]);
        return;
      }
      const source = answer.body;
      reset();
      editing = Object.assign({}, source, { base_url: url });
      form.dataset.mode = "edit";
      form.querySelectorAll('input[name="kind"]').forEach(function (radio) {
        radio.checked = radio.value === source.kind;
        radio.disabled = true;
      });
      $("audio-f-name").value = source.name;
      $("audio-f-enabled").checked = source.enabled;
      $("audio-f-relay").checked = source.relay_enabled;
      if (source.kind === "stream") {
        $("audio-f-url").value = source.url;
        $("audio-f-user").value = source.device_params.auth_username || "";
        if (source.auth_password_set) {
          passwordHint.textContent = "A password is stored: leave this blank to keep it, or type a new one. " +
            "An address on another host forgets it unless you type it again.";
          forget.hidden = false;
        } else {
          passwordHint.textContent = "No password is stored.";
        }
      } else {
        $("audio-f-command").value = source.command.join("\n");
        $("audio-f-rate").value = source.device_params.sample_rate || 24000;
        $("audio-f-channels").value = String(source.device_params.channels || 1);
      }
      showKind();
      title.textContent = "Edit " + source.name;
      submit.textContent = "Save changes";
      cancel.hidden = false;
      return readAssigned().then(function (list) {
        $("audio-f-assigned").checked = Boolean(list && list.indexOf("audio:" + source.id) >= 0);
        title.scrollIntoView({ block: "start" });
        title.focus();
      });
    });
  }

  form.addEventListener("change", function (event) {
    if (event.target.name === "kind") {
      clearErrors();
      hidePreflight();
      showKind();
    }
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    busy(save(false));
  });
  saveAnyway.addEventListener("click", function () { busy(save(true)); });
  cancel.addEventListener("click", function () {
    reset();
    title.focus();
  });
  document.addEventListener("audio:edit", function (event) { busy(edit(event.detail.url)); });
  // A deleted source stops being an assigned monitoring source.
  document.addEventListener("audio:deleted", function (event) {
    api("GET", "/api/eas/compliance").then(function (answer) {
      const key = "audio:" + event.detail.id;
      if (!answer.ok || answer.body.settings.assigned_sources.indexOf(key) < 0) return;
      const next = answer.body.sources.filter(function (item) { return item.assigned; })
        .map(function (item) { return item.source; });
      return api("PUT", "/api/eas/compliance/settings", { assigned_sources: next });
    }).catch(function () { /* the next save leaves it out anyway */ });
  });

  // The cards show which sources are assigned monitoring sources.
  readAssigned().then(function (list) {
    (list || []).forEach(function (key) {
      const card = document.getElementById("audio-source-" + key.replace("audio:", ""));
      const badge = card && key.indexOf("audio:") === 0 ? card.querySelector(".audio-assigned") : null;
      if (badge) badge.hidden = false;
    });
  });
  try {
    const note = window.sessionStorage.getItem(STATUS_KEY);
    if (note) {
      window.sessionStorage.removeItem(STATUS_KEY);
      const status = document.getElementById("audio-status");
      const p = document.createElement("p");
      p.className = "hint";
      p.textContent = note;
      status.replaceChildren(p);
    }
  } catch (err) { /* no storage: no note */ }
  showKind();
})();
