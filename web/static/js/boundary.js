// Station boundary page: upload a GeoJSON file, clear it, switch polygon matching, recalculate.
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const status = document.getElementById("boundary-status");

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  async function call(method, url, body, headers) {
    const response = await fetch(url, {
      method: method, credentials: "same-origin", body: body,
      headers: Object.assign({ "X-CSRF-Token": csrf, "Accept": "application/json" }, headers || {}),
    });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    return data;
  }

  function counts(done) {
    return done ? done.alerts + " alerts checked, " + done.geometry_matches + " touch the boundary" : "";
  }

  const form = document.getElementById("boundary-form");
  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    say("Uploading…");
    try {
      const done = await call("POST", "/api/boundary", new FormData(form));
      say("Saved. " + counts(done.recalculated) + ".");
      window.location.reload();
    } catch (error) { say(error.message, true); }
  });

  const clear = document.getElementById("boundary-clear");
  if (clear) {
    clear.addEventListener("click", async function () {
      if (!window.confirm("Clear the station boundary? Alerts are then matched by code only.")) return;
      try {
        await call("DELETE", "/api/boundary");
        window.location.reload();
      } catch (error) { say(error.message, true); }
    });
  }

  document.getElementById("match-polygons").addEventListener("change", async function (event) {
    const box = event.target;
    try {
      await call("PUT", "/api/boundary", JSON.stringify({ match_polygons: box.checked }),
        { "Content-Type": "application/json" });
      say(box.checked ? "Polygon matching is on." : "Polygon matching is off.");
    } catch (error) {
      box.checked = !box.checked;
      say(error.message, true);
    }
  });

  document.getElementById("boundary-recalculate").addEventListener("click", async function () {
    try {
      say("Recalculated: " + counts(await call("POST", "/api/boundary/recalculate")) + ".");
    } catch (error) { say(error.message, true); }
  });
}());
