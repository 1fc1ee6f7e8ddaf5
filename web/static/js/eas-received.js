// Received messages page: Forward and Acknowledge (eas-actions.js posts, then reloads).
(function () {
  "use strict";
  const table = document.getElementById("eas-received");
  if (!table) return;
  window.AlertStation.EasActions.bind(
    table, "tr", "/api/eas/received/", document.getElementById("received-status"));
})();
