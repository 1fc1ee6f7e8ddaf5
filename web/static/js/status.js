// Status page: "Poll all sources now" asks the station to poll, then shows the new health.
(function () {
  "use strict";
  const button = document.getElementById("poll-now");
  if (!button) return;
  const status = document.getElementById("poll-status");
  const token = document.querySelector('meta[name="csrf-token"]');

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  button.addEventListener("click", async function () {
    button.disabled = true;
    say("Polling…", false);
    try {
      const response = await fetch("/admin/trigger_poll", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Accept": "application/json", "X-CSRF-Token": token ? token.content : "" },
      });
      const data = await response.json().catch(function () { return {}; });
      if (!response.ok) {
        say((data.error && data.error.message) || "Poll failed (" + response.status + ")", true);
        return;
      }
      say("Polled " + data.polled + " source(s): " + data.stored + " alert(s) stored, " +
        data.failed + " failed. Reloading…", data.failed > 0);
      window.setTimeout(function () { window.location.reload(); }, 1200);
    } catch (error) {
      say("Poll failed: " + error.message, true);
    } finally {
      button.disabled = false;
    }
  });
})();
