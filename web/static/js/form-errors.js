// Forms that help: one mechanism every form uses to show what the server refused.
//
//   FormErrors.show(form, errors)   errors: [{field, message}]; every error at once, each in a
//                                   <p class="field-error"> beside its field, the field marked
//                                   aria-invalid="true" and aria-describedby the message; errors
//                                   of no field go to the form's summary ([data-form-summary],
//                                   made at the top of the form when missing). Focus moves to the
//                                   first invalid field (or the summary).
//   FormErrors.clear(form)          removes what show() added.
//   FormErrors.fromAnswer(data, status)
//                                   reads the JSON error envelope: details.errors, else
//                                   details.field with the message, else the message alone.
//   FormErrors.send(form, url, {method, body, json})
//                                   fetch with the CSRF token; on an error answer it shows the
//                                   errors and rejects; resolves with the parsed answer. An
//                                   error of no field is shown beside opts.field when given.
//
// A message that starts with the field's name ("url must ...", "zone_codes: ...") is shown
// with the field's label instead ("Feed address must ..."): the label is the field's
// data-label, else the text of its <label>. A field is found by name; an element with
// data-error-for="<name>" (a checkbox group, a picker) takes the message and the marking.
// A page rendered by the server with aria-invalid fields (see _form_errors.html) gets focus
// on its first invalid field at load.
(function () {
  "use strict";

  const ERROR_CLASS = "field-error";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function target(form, name) {
    if (!name) return null;
    const holder = form.querySelector('[data-error-for="' + CSS.escape(name) + '"]');
    if (holder) return holder;
    const field = form.elements.namedItem(name);
    if (!field) return null;
    if (field instanceof RadioNodeList) return field[0] || null;
    return field;
  }

  function labelOf(form, field) {
    if (field.dataset && field.dataset.label) return field.dataset.label;
    if (field.id) {
      const label = form.querySelector('label[for="' + CSS.escape(field.id) + '"]') ||
        document.querySelector('label[for="' + CSS.escape(field.id) + '"]');
      if (label) return label.textContent.replace(/\s+/g, " ").trim();
    }
    const wrapping = field.closest ? field.closest("label") : null;
    return wrapping ? wrapping.textContent.replace(/\s+/g, " ").trim() : "";
  }

  function inWords(message, name, label) {
    const text = String(message || "");
    if (!name || !label) return text;
    const plain = name.replace(/_/g, " ");
    for (const written of [name, plain]) {
      if (text.startsWith(written + ": ") || text.startsWith(written + " ")) {
        return label + text.slice(written.length);
      }
    }
    return text;
  }

  function idFor(field, name) {
    if (!field.id) field.id = "field-" + name.replace(/[^A-Za-z0-9_-]/g, "-");
    return field.id + "-error";
  }

  function describedBy(field, id, add) {
    const ids = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean)
      .filter(function (each) { return each !== id; });
    if (add) ids.unshift(id);
    if (ids.length) field.setAttribute("aria-describedby", ids.join(" "));
    else field.removeAttribute("aria-describedby");
  }

  function clear(form) {
    form.querySelectorAll("[data-form-error]").forEach(function (node) {
      const owner = node.dataset.formError ? document.getElementById(node.dataset.formError) : null;
      if (owner) describedBy(owner, node.id, false);
      node.remove();
    });
    form.querySelectorAll('[aria-invalid="true"]').forEach(function (field) {
      field.removeAttribute("aria-invalid");
    });
    const summary = form.querySelector("[data-form-summary]");
    if (summary) {
      summary.replaceChildren();
      summary.hidden = true;
    }
  }

  function summaryOf(form) {
    let summary = form.querySelector("[data-form-summary]");
    if (!summary) {
      summary = document.createElement("div");
      summary.className = "form-summary error";
      summary.setAttribute("data-form-summary", "");
      summary.setAttribute("role", "alert");
      summary.tabIndex = -1;
      form.prepend(summary);
    }
    summary.hidden = false;
    return summary;
  }

  function show(form, errors) {
    clear(form);
    const invalid = [];
    (errors || []).forEach(function (error) {
      const field = target(form, error.field);
      const p = document.createElement("p");
      p.className = ERROR_CLASS;
      if (!field) {
        p.textContent = String(error.message || "");
        summaryOf(form).append(p);
        return;
      }
      const name = String(error.field);
      p.id = idFor(field, name);
      if (document.getElementById(p.id)) return; // one message per field: the first
      p.dataset.formError = field.id;
      p.textContent = inWords(error.message, name, labelOf(form, field));
      const holder = field.closest("label") && field.type === "checkbox" ? field.closest("label") : field;
      holder.insertAdjacentElement("afterend", p);
      field.setAttribute("aria-invalid", "true");
      describedBy(field, p.id, true);
      invalid.push(field);
    });
    invalid.sort(function (a, b) {
      return a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
    });
    const first = invalid[0];
    if (first) {
      const focusable = first.matches("input, select, textarea, button") ? first :
        first.querySelector("input, select, textarea, button");
      (focusable || first).focus();
    } else {
      const summary = form.querySelector("[data-form-summary]");
      if (summary) summary.focus();
    }
  }

  function fromAnswer(data, status) {
    const error = (data && data.error) || {};
    const details = error.details || {};
    if (Array.isArray(details.errors) && details.errors.length) return details.errors;
    const message = error.message || ("The request failed (" + status + ").");
    return [{ field: details.field || null, message: message }];
  }

  function send(form, url, options) {
    const opts = options || {};
    const headers = { "Accept": "application/json", "X-CSRF-Token": csrfToken() };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.json);
    }
    clear(form);
    return fetch(url, {
      method: opts.method || "POST", credentials: "same-origin", headers: headers, body: body,
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          const errors = fromAnswer(data, response.status).map(function (error) {
            return error.field || !opts.field ? error : { field: opts.field, message: error.message };
          });
          show(form, errors);
          const failure = new Error(errors.map(function (e) { return e.message; }).join("; "));
          failure.shown = true;
          throw failure;
        }
        return data;
      });
    });
  }

  window.FormErrors = { show: show, clear: clear, fromAnswer: fromAnswer, send: send, inWords: inWords };

  document.addEventListener("DOMContentLoaded", function () {
    const first = document.querySelector('form [aria-invalid="true"]');
    if (first) first.focus();
  });
})();
