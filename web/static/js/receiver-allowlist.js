// Receiver programs page: save the allowlist (one entry per line) as the station variable,
// through the environment API; errors beside the field (form-errors.js).
(function () {
  "use strict";
  const form = document.getElementById("allowlist-form");
  if (!form) return;
  const field = document.getElementById("allowlist-entries");
  const status = document.getElementById("allowlist-status");
  const save = document.getElementById("allowlist-save");

  function say(text, className) {
    const p = document.createElement("p");
    p.className = className;
    p.textContent = text;
    status.replaceChildren(p);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const lines = field.value.split("\n").map(function (line) { return line.trim(); })
      .filter(Boolean);
    const withComma = lines.filter(function (line) { return line.indexOf(",") >= 0; });
    if (withComma.length) {
      FormErrors.show(form, [{ field: field.name,
        message: "An entry cannot hold a comma: " + withComma[0] }]);
      return;
    }
    const value = lines.join(", ");
    if (value === field.dataset.original.split("\n").join(", ")) {
      FormErrors.clear(form);
      say("Nothing changed.", "hint");
      return;
    }
    const changes = {};
    changes[field.name] = value === "" ? null : value;
    save.disabled = true;
    FormErrors.send(form, form.dataset.api, { method: "PUT", json: { variables: changes },
      field: field.name })
      .then(function () {
        field.dataset.original = lines.join("\n");
        say("Saved. Restart the station to apply it.", "allowlist-saved");
      })
      .catch(function (err) {
        say("Not saved.", "error");
        if (!err.shown) FormErrors.show(form, [{ field: field.name, message: err.message }]);
      })
      .then(function () { save.disabled = false; });
  });
})();
