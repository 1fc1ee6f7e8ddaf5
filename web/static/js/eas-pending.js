// Approval queue page: a countdown per held message (from the server's clock), and the
// Forward now / Hold / Reject buttons (POST with the CSRF token, then the page reloads).
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const list = document.getElementById("eas-pending");
  const status = document.getElementById("pending-status");
  if (!list) return;
  const skew = Date.parse(list.dataset.now) - Date.now();

  function tick() {
    list.querySelectorAll(".countdown").forEach(function (span) {
      const left = Math.max(0, Math.round((Date.parse(span.dataset.until) - (Date.now() + skew)) / 1000));
      const minutes = Math.floor(left / 60);
      const seconds = String(left % 60).padStart(2, "0");
      span.textContent = minutes + ":" + seconds;
    });
  }

  list.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const item = button.closest(".pending-item");
    const action = button.dataset.action;
    if (action === "forward" && !window.confirm("Air this message now?\n" + item.querySelector("code").textContent)) return;
    button.disabled = true;
    fetch("/api/eas/pending/" + item.dataset.id + "/" + action, {
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

  tick();
  window.setInterval(tick, 1000);
})();
