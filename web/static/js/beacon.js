// Client beacon: once per browser-tab session (sessionStorage), tell the station the screen
// resolution, which the request log cannot see (GET /api/traffic/client?screen=WIDTHxHEIGHT).
// Included by base.html, so every page sends it, the sign-in page too.
(function () {
  "use strict";
  const KEY = "alertstation.beacon";
  try {
    if (window.sessionStorage.getItem(KEY)) return;
    window.sessionStorage.setItem(KEY, "sent");
  } catch (ex) {
    return; // storage refused (privacy mode): send nothing rather than on every page
  }
  const screen = Math.round(window.screen.width) + "x" + Math.round(window.screen.height);
  fetch("/api/traffic/client?screen=" + encodeURIComponent(screen), {
    credentials: "same-origin", keepalive: true,
  }).then(function (response) {
    if (response.status >= 500) window.sessionStorage.removeItem(KEY); // try again next page
  }, function () { window.sessionStorage.removeItem(KEY); });
})();
