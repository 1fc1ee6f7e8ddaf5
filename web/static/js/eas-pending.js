// Approval queue page: a countdown per held message (from the server's clock), and the
// Forward now / Hold / Reject buttons (eas-actions.js posts, then the page reloads).
(function () {
  "use strict";
  const list = document.getElementById("eas-pending");
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

  window.AlertStation.EasActions.bind(
    list, ".pending-item", "/api/eas/pending/", document.getElementById("pending-status"));
  tick();
  window.setInterval(tick, 1000);
})();
