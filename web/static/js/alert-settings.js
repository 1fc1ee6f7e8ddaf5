// Alert location and filtering pages: save as JSON with the CSRF token and show the answer,
// including the codes the zone catalog does not know, in the page's live status region.
// Without this script the form still posts and the server redirects back with a status.
(function () {
  "use strict";
  const form = document.getElementById("alert-settings-form");
  if (!form) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  const status = document.getElementById("alert-settings-status");
  const save = document.getElementById("alert-settings-save");
  const fields = String(form.dataset.fields || "").split(/\s+/).filter(Boolean);

  function line(text, className) {
    const p = document.createElement("p");
    p.className = className;
    p.textContent = text;
    return p;
  }

  function body() {
    const data = {};
    fields.forEach(function (name) {
      if (name === "forward_events") {
        data[name] = Array.prototype.map.call(
          form.querySelectorAll('input[name="forward_events"]:checked'),
          function (box) { return box.value; });
      } else {
        const input = form.elements.namedItem(name);
        if (input) data[name] = input.value;
      }
    });
    return data;
  }

  function showSaved(data) {
    Object.keys(data.saved || {}).forEach(function (name) {
      const input = form.elements.namedItem(name);
      if (input && input.tagName === "TEXTAREA") {
        input.value = data.saved[name].join(", ");
        input.dispatchEvent(new Event("input", { bubbles: true }));
      }
    });
    const changed = data.changed || [];
    const lines = [line(changed.length ? "Saved (" + changed.join(", ") + " changed)." :
      "Saved; nothing changed.", "alert-settings-saved")];
    if (data.rematched) {
      lines.push(line(data.rematched + (data.rematched === 1 ? " stored alert" : " stored alerts") +
        " re-matched against the new codes.", "hint alert-settings-rematched"));
    }
    const unknown = (data.warnings && data.warnings.unknown) || [];
    if (unknown.length) {
      lines.push(line("Not in the zone catalog (kept): " + unknown.join(", ") +
        ". They may belong to a zone file that is not loaded yet.", "zp-warn alert-settings-unknown"));
    }
    status.replaceChildren.apply(status, lines);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (window.FormErrors) FormErrors.clear(form);
    if (save) save.disabled = true;
    status.replaceChildren(line("Saving…", "hint"));
    fetch(form.getAttribute("action"), {
      method: "POST", credentials: "same-origin",
      headers: {
        "Content-Type": "application/json", "Accept": "application/json",
        "X-CSRF-Token": meta ? meta.content : "",
      },
      body: JSON.stringify(body()),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          const failure = new Error("Not saved: see the message beside the field.");
          failure.errors = window.FormErrors ? FormErrors.fromAnswer(data, response.status) : null;
          if (!failure.errors) {
            failure.message = data.error ? data.error.message : "Saving failed (" + response.status + ")";
          }
          throw failure;
        }
        showSaved(data);
      });
    }).catch(function (err) {
      status.replaceChildren(line(err.message, "error alert-settings-error"));
      if (err.errors) FormErrors.show(form, err.errors);
    }).then(function () {
      if (save) save.disabled = false;
    });
  });
})();
