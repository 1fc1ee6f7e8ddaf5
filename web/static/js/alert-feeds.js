// Alert feeds page: add, edit, enable, disable and remove feeds through the poll-source API
// (/admin/poller/sources), poll every feed now, and import a CAP file by upload. Errors are
// shown beside their fields by FormErrors (form-errors.js).
(function () {
  "use strict";
  const SOURCES = "/admin/poller/sources";
  const status = document.getElementById("feeds-status");
  const form = document.getElementById("feed-form");

  function say(region, text, className) {
    if (!region) return;
    const p = document.createElement("p");
    p.className = className || "";
    p.textContent = text;
    region.replaceChildren(p);
  }

  function reloadSaying(text) {
    sessionStorage.setItem("feeds-status", text);
    window.location.reload();
  }

  const left = sessionStorage.getItem("feeds-status");
  if (left) {
    sessionStorage.removeItem("feeds-status");
    say(status, left, "feeds-saved");
  }

  function rowFeed(button) {
    const row = button.closest("tr");
    return JSON.parse(row.dataset.feed);
  }

  function request(url, method, json) {
    const headers = { "Accept": "application/json",
      "X-CSRF-Token": (document.querySelector('meta[name="csrf-token"]') || {}).content || "" };
    if (json !== undefined) headers["Content-Type"] = "application/json";
    return fetch(url, { method: method, credentials: "same-origin", headers: headers,
      body: json === undefined ? undefined : JSON.stringify(json) })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (data) {
          if (!response.ok) {
            throw new Error(FormErrors.fromAnswer(data, response.status)
              .map(function (e) { return e.message; }).join("; "));
          }
          return data;
        });
      });
  }

  document.querySelectorAll(".feed-toggle").forEach(function (button) {
    button.addEventListener("click", function () {
      const feed = rowFeed(button);
      const enabled = button.dataset.enabled === "true";
      button.disabled = true;
      request(SOURCES + "/" + feed.id, "PUT", { enabled: enabled }).then(function () {
        reloadSaying((enabled ? "Enabled " : "Disabled ") + feed.name + ".");
      }).catch(function (err) {
        button.disabled = false;
        say(status, err.message, "error");
      });
    });
  });

  document.querySelectorAll(".feed-remove").forEach(function (button) {
    button.addEventListener("click", function () {
      const feed = rowFeed(button);
      if (!window.confirm("Remove the feed " + feed.name + "? Alerts it stored stay.")) return;
      button.disabled = true;
      request(SOURCES + "/" + feed.id, "DELETE").then(function () {
        reloadSaying("Removed " + feed.name + ".");
      }).catch(function (err) {
        button.disabled = false;
        say(status, err.message, "error");
      });
    });
  });

  const pollNow = document.getElementById("feeds-poll-now");
  if (pollNow) {
    pollNow.addEventListener("click", function () {
      pollNow.disabled = true;
      say(status, "Polling…", "hint");
      request("/admin/trigger_poll", "POST").then(function (data) {
        reloadSaying(data.note || ("Polled " + data.polled + " feed(s): " + data.stored +
          " alert(s) stored, " + data.failed + " failed."));
      }).catch(function (err) {
        pollNow.disabled = false;
        say(status, err.message, "error");
      });
    });
  }

  if (form) {
    const heading = document.getElementById("feed-form-heading");
    const save = document.getElementById("feed-save");
    const cancel = document.getElementById("feed-cancel");
    const kind = form.elements.namedItem("kind");
    const jsonOnly = form.querySelector(".feed-json-only");
    let editing = null;

    function showKind() {
      if (jsonOnly) jsonOnly.hidden = kind.value !== "json-api";
    }
    kind.addEventListener("change", showKind);
    showKind();

    function number(name) {
      const input = form.elements.namedItem(name);
      if (input.value.trim() === "") return undefined;
      const value = Number(input.value);
      return Number.isNaN(value) ? input.value : value;
    }

    function body() {
      const data = {
        name: form.elements.namedItem("name").value,
        kind: kind.value,
        enabled: form.elements.namedItem("enabled").checked,
      };
      const url = form.elements.namedItem("url").value.trim();
      // Editing: an address left as shown keeps the stored one (and any sign-in in it).
      if (!editing || url !== editing.url) {
        if (url || kind.value !== "json-api" || editing) data.url = url;
      }
      ["interval_seconds", "connect_timeout", "read_timeout"].forEach(function (name) {
        const value = number(name);
        if (value !== undefined) data[name] = value;
      });
      if (kind.value === "json-api") {
        data.area = form.elements.namedItem("area").value;
        data.zones = form.elements.namedItem("zones").value;
      } else if (editing) {
        data.area = "";
        data.zones = "";
      }
      return data;
    }

    function startEdit(feed) {
      editing = feed;
      heading.textContent = "Edit the feed " + feed.name;
      save.textContent = "Save feed";
      cancel.hidden = false;
      form.elements.namedItem("name").value = feed.name;
      kind.value = feed.kind;
      form.elements.namedItem("url").value = feed.url;
      form.elements.namedItem("area").value = (feed.area || []).join(", ");
      form.elements.namedItem("zones").value = (feed.zones || []).join(", ");
      form.elements.namedItem("interval_seconds").value = feed.interval_seconds;
      form.elements.namedItem("connect_timeout").value = feed.connect_timeout;
      form.elements.namedItem("read_timeout").value = feed.read_timeout;
      form.elements.namedItem("enabled").checked = feed.enabled;
      showKind();
      FormErrors.clear(form);
      form.elements.namedItem("name").focus();
    }

    function stopEdit() {
      editing = null;
      form.reset();
      heading.textContent = "Add a feed";
      save.textContent = "Add feed";
      cancel.hidden = true;
      showKind();
      FormErrors.clear(form);
    }

    document.querySelectorAll(".feed-edit").forEach(function (button) {
      // A link (/admin/poller?edit=N) without script; with it, the form opens in place.
      button.addEventListener("click", function (event) { event.preventDefault(); startEdit(rowFeed(button)); });
    });
    cancel.addEventListener("click", function (event) {
      if (form.dataset.editId) return;  // the server's form: its link goes back to the page
      event.preventDefault();
      stopEdit();
    });
    // Opened on a feed by the server (?edit=N, or a refused form sent without script).
    if (form.dataset.editId) {
      const row = document.querySelector('tr[data-feed-id="' + form.dataset.editId + '"]');
      if (row) {
        editing = JSON.parse(row.dataset.feed);
        cancel.hidden = false;
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      save.disabled = true;
      const url = editing ? SOURCES + "/" + editing.id : SOURCES;
      const name = form.elements.namedItem("name").value.trim();
      FormErrors.send(form, url, { method: editing ? "PUT" : "POST", json: body() })
        .then(function () {
          reloadSaying((editing ? "Saved the feed " : "Added the feed ") + name + ".");
        })
        .catch(function (err) {
          if (!err.shown) FormErrors.show(form, [{ field: null, message: err.message }]);
        })
        .then(function () { save.disabled = false; });
    });
  }

  const importForm = document.getElementById("import-form");
  if (importForm) {
    const importStatus = document.getElementById("import-status");
    const submit = document.getElementById("import-submit");
    importForm.addEventListener("submit", function (event) {
      event.preventDefault();
      const file = importForm.elements.namedItem("file");
      if (!file.files.length) {
        FormErrors.show(importForm, [{ field: "file", message: "Choose a CAP XML or JSON file to import." }]);
        return;
      }
      submit.disabled = true;
      say(importStatus, "Importing…", "hint");
      FormErrors.send(importForm, importForm.getAttribute("action"), {
        body: new FormData(importForm), field: "file",
      }).then(function (data) {
        const lines = [];
        const head = document.createElement("p");
        head.className = "import-result";
        head.textContent = "Imported " + data.file + ": " + data.stored + " alert(s) stored" +
          (data.skipped.length ? ", " + data.skipped.length + " entry(ies) skipped." : ".");
        lines.push(head);
        if (data.alerts.length) {
          const list = document.createElement("ul");
          list.className = "import-alerts";
          data.alerts.forEach(function (alert) {
            const item = document.createElement("li");
            const link = document.createElement("a");
            link.href = "/alerts/" + alert.alert_id;
            link.textContent = alert.identifier;
            item.append(link, " — " + alert.outcome + ", " + alert.state + ", " +
              (alert.in_area ? "in the broadcast area" : "outside the broadcast area"));
            list.append(item);
          });
          lines.push(list);
        }
        data.skipped.forEach(function (skip) {
          const p = document.createElement("p");
          p.className = "hint";
          p.textContent = "Skipped " + skip.source + ": " + skip.reason;
          lines.push(p);
        });
        importStatus.replaceChildren.apply(importStatus, lines);
        importForm.reset();
      }).catch(function (err) {
        importStatus.replaceChildren();
        if (!err.shown) FormErrors.show(importForm, [{ field: "file", message: err.message }]);
      }).then(function () { submit.disabled = false; });
    });
  }
})();
