// Auto-forward and weekly test page: save each form as JSON (PUT) with the CSRF token, show the
// answer in the form's live status region, and air a weekly test on request.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');

  function line(text, className) {
    const p = document.createElement("p");
    p.className = className;
    p.textContent = text;
    return p;
  }

  function send(method, url, data) {
    const init = {
      method: method, credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
    };
    if (data !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(data);
    }
    return fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) {
          const failure = new Error(body.error ? body.error.message : "Request failed (" + response.status + ")");
          if (window.FormErrors && response.status === 422) failure.errors = FormErrors.fromAnswer(body, response.status);
          throw failure;
        }
        return body;
      });
    });
  }

  function fields(form) {
    const data = {};
    Array.prototype.forEach.call(form.elements, function (input) {
      if (!input.name) return;
      if (input.type === "checkbox") data[input.name] = input.checked;
      else if (input.type === "number" || input.name === "weekday") data[input.name] = Number(input.value);
      else data[input.name] = input.value;
    });
    return data;
  }

  function showNext(view) {
    const next = document.getElementById("rwt-next");
    if (!next) return;
    if (!view.next_slot) {
      next.textContent = "The weekly test schedule is off.";
      return;
    }
    next.textContent = "Next test: " + view.next_slot_local.slice(0, 16).replace("T", " ") + " " +
      view.schedule.time_zone + " (" + view.next_slot.slice(0, 16).replace("T", " ") + " UTC).";
  }

  function bind(formId, statusId, after) {
    const form = document.getElementById(formId);
    const status = document.getElementById(statusId);
    if (!form || !status) return;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const button = form.querySelector('button[type="submit"]');
      if (button) button.disabled = true;
      status.replaceChildren(line("Saving…", "hint"));
      if (window.FormErrors) FormErrors.clear(form);
      send("PUT", form.dataset.url, fields(form)).then(function (body) {
        const changed = body.changed || [];
        status.replaceChildren(line(changed.length ? "Saved (" + changed.join(", ") + " changed)." :
          "Saved; nothing changed.", "eas-forward-saved"));
        if (after) after(body);
      }).catch(function (err) {
        status.replaceChildren(line(err.errors ? "Not saved: see the message beside the field." :
          err.message, "error eas-forward-error"));
        if (err.errors) FormErrors.show(form, err.errors);
      }).then(function () {
        if (button) button.disabled = false;
      });
    });
  }

  bind("eas-forward-form", "eas-forward-status");
  bind("eas-rwt-form", "eas-rwt-status", showNext);

  const test = document.getElementById("eas-rwt-test");
  const rwtStatus = document.getElementById("eas-rwt-status");
  if (test && rwtStatus) {
    test.addEventListener("click", function () {
      if (!window.confirm("Air a Required Weekly Test now?")) return;
      test.disabled = true;
      rwtStatus.replaceChildren(line("Sending…", "hint"));
      send("POST", "/eas/rwt/test").then(function (body) {
        const lines = [line("Queued for air: " + body.message.header, "eas-rwt-sent")];
        if (body.voice === "unavailable") {
          lines.push(line("Speech is unavailable: the test airs without its voice text.", "hint"));
        }
        rwtStatus.replaceChildren.apply(rwtStatus, lines);
      }).catch(function (err) {
        rwtStatus.replaceChildren(line(err.message, "error eas-rwt-error"));
      }).then(function () {
        test.disabled = false;
      });
    });
  }
})();

// Forwarding rules: an ordered list edited in place and saved whole (PUT /api/eas/forward/rules).
(function () {
  "use strict";
  const form = document.getElementById("eas-rules-form");
  if (!form) return;
  const meta = document.querySelector('meta[name="csrf-token"]');
  const list = document.getElementById("eas-rules");
  const template = document.getElementById("eas-rule-template");
  const status = document.getElementById("eas-rules-status");
  const book = JSON.parse(form.dataset.book);
  const LISTS = ["events", "originators", "sources", "areas"];

  function addRule(rule) {
    const item = template.content.firstElementChild.cloneNode(true);
    LISTS.forEach(function (name) { item.querySelector('[name="' + name + '"]').value = (rule[name] || []).join(" "); });
    item.querySelector('[name="mode"]').value = rule.mode || "manual";
    if (rule.hold_minutes) item.querySelector('[name="hold_minutes"]').value = rule.hold_minutes;
    list.appendChild(item);
    return item;
  }

  function words(text) { return text.split(/[\s,]+/).filter(Boolean); }

  function mode(select, minutes) {
    const data = { mode: select.value };
    if (select.value === "hold") data.hold_minutes = Number(minutes.value);
    return data;
  }

  book.rules.forEach(addRule);
  document.getElementById("eas-rules-default").value = book.default.mode;
  if (book.default.hold_minutes) document.getElementById("eas-rules-default-hold").value = book.default.hold_minutes;

  document.getElementById("eas-rule-add").addEventListener("click", function () {
    addRule({ mode: "manual" }).querySelector("input").focus();
  });
  list.addEventListener("click", function (event) {
    const item = event.target.closest("li.rule");
    if (!item) return;
    if (event.target.hasAttribute("data-remove")) item.remove();
    const move = Number(event.target.dataset.move || 0);
    if (move < 0 && item.previousElementSibling) list.insertBefore(item, item.previousElementSibling);
    if (move > 0 && item.nextElementSibling) list.insertBefore(item.nextElementSibling, item);
    if (move) event.target.focus();
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const rules = Array.prototype.map.call(list.children, function (item) {
      const rule = mode(item.querySelector('[name="mode"]'), item.querySelector('[name="hold_minutes"]'));
      LISTS.forEach(function (name) { rule[name] = words(item.querySelector('[name="' + name + '"]').value); });
      return rule;
    });
    const body = { rules: rules, default: mode(document.getElementById("eas-rules-default"), document.getElementById("eas-rules-default-hold")) };
    fetch("/api/eas/forward/rules", {
      method: "PUT", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Accept": "application/json", "Content-Type": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) throw new Error(answer.error ? answer.error.message : "Request failed");
        status.textContent = "Saved " + answer.rules.length + " rules.";
      });
    }).catch(function (error) { status.textContent = error.message; });
  });
})();
