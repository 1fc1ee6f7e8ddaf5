// Received messages page: Forward and Acknowledge (POST with the CSRF token, then reload).
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const table = document.getElementById("eas-received");
  const status = document.getElementById("received-status");
  if (!table) return;
  table.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const row = button.closest("tr");
    const action = button.dataset.action;
    if (action === "forward" && !window.confirm("Air this message now?\n" + row.querySelector("code").textContent)) return;
    button.disabled = true;
    fetch("/api/eas/received/" + row.dataset.id + "/" + action, {
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
})();
