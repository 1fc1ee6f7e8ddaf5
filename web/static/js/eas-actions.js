// Shared by the approval queue and the received messages page: a click on a button with a
// data-action inside a list posts that action for its item (with the CSRF token), then reloads
// the page; a refusal's message goes to the page's status line and the button is enabled again.
// Forward asks first, naming the header it would air.
(function () {
  "use strict";

  // container: the element holding the items; itemSelector: what encloses one item (its
  // data-id names it); base: the API path before "<id>/<action>"; status: the status line.
  function bind(container, itemSelector, base, status) {
    const meta = document.querySelector('meta[name="csrf-token"]');
    container.addEventListener("click", function (event) {
      const button = event.target.closest("button[data-action]");
      if (!button) return;
      const item = button.closest(itemSelector);
      const action = button.dataset.action;
      if (action === "forward" && !window.confirm("Air this message now?\n" + item.querySelector("code").textContent)) return;
      button.disabled = true;
      fetch(base + item.dataset.id + "/" + action, {
        method: "POST", credentials: "same-origin",
        headers: { "Accept": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
      }).then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) throw new Error(body.error ? body.error.message : "Request failed");
          window.location.reload();
        });
      }).catch(function (error) {
        status.textContent = error.message;
        button.disabled = false;
      });
    });
  }

  window.AlertStation = window.AlertStation || {};
  window.AlertStation.EasActions = { bind: bind };
})();
