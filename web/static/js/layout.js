// The base layout: the broadcast-state banner and the navigation menus.
//
// The banner polls /api/broadcast/state about every 1.5 s while the tab is visible and stops
// while it is hidden (no request at all); it polls again at once when the tab comes back.
// Two states never look alike: "ON AIR: <event> for <areas>" (red, with Stop for operators)
// while an output plays a message, and "N alerts in your area" (amber) otherwise.
(function () {
  "use strict";
  const POLL_MS = 1500;
  const banner = document.getElementById("broadcast-banner");
  let timer = null;
  let inFlight = false;

  function plural(count, word) {
    return count + " " + word + (count === 1 ? "" : "s");
  }

  const stop = document.getElementById("broadcast-stop");

  function onAirText(now) {
    const areas = now.areas && now.areas.length ? " for " + now.areas.join(", ") : "";
    return "ON AIR: " + now.event + areas + (now.text ? " — " + now.text : "");
  }

  function show(state) {
    const text = banner.querySelector(".broadcast-text");
    banner.dataset.stale = state.stale ? "true" : "false";
    const onAir = Boolean(state.on_air && state.now_airing);
    if (stop) {
      stop.hidden = !onAir;
      if (!onAir) stop.disabled = false;
    }
    if (onAir) {
      banner.dataset.state = "on-air";
      banner.dataset.itemId = String(state.now_airing.id);
      text.textContent = onAirText(state.now_airing);
    } else if (state.active) {
      banner.dataset.state = "active";
      const parts = [];
      if (state.in_area_alerts) parts.push(plural(state.in_area_alerts, "alert") + " in your area");
      if (state.airing) parts.push("a message waits to air");
      text.textContent = parts.join("; ");
    } else {
      banner.dataset.state = "idle";
      text.textContent = state.active_alerts
        ? "No alert in the broadcast area (" + plural(state.active_alerts, "active alert") + " elsewhere)"
        : "No active alerts";
    }
  }

  function schedule() {
    window.clearTimeout(timer);
    timer = document.visibilityState === "hidden" ? null : window.setTimeout(poll, POLL_MS);
    banner.dataset.polling = timer === null ? "off" : "on";
  }

  async function poll() {
    timer = null;
    if (inFlight || document.visibilityState === "hidden") { schedule(); return; }
    inFlight = true;
    try {
      const response = await fetch("/api/broadcast/state", {
        credentials: "same-origin", cache: "no-store", headers: { "Accept": "application/json" },
      });
      if (!response.ok) throw new Error("status " + response.status);
      show(await response.json());
    } catch (error) {
      banner.dataset.state = "unknown";
      banner.querySelector(".broadcast-text").textContent = "Broadcast state unknown: the station is not answering";
    } finally {
      inFlight = false;
      schedule();
    }
  }

  if (stop) {
    stop.addEventListener("click", async function () {
      const what = banner.querySelector(".broadcast-text").textContent.replace(/^ON AIR: /, "");
      if (!window.confirm("Stop the message on the air now? (" + what + ")\n" +
          "The message audio is cut and the end of message (EOM) is sent on every output.")) return;
      stop.disabled = true;
      const meta = document.querySelector('meta[name="csrf-token"]');
      try {
        const response = await fetch("/api/eas/airing/stop", {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "Accept": "application/json",
            "X-CSRF-Token": meta ? meta.content : "" },
          body: JSON.stringify({ clear_queue: false }),
        });
        if (!response.ok) {
          const data = await response.json().catch(function () { return {}; });
          window.alert(data.error ? data.error.message : "Stop failed (" + response.status + ")");
          stop.disabled = false;
        }
      } catch (error) {
        stop.disabled = false;
      }
    });
  }

  if (banner) {
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") {
        schedule();
      } else if (!inFlight) {
        poll();
      }
    });
    poll();
  }

  // Menus: one open at a time; a click elsewhere or Escape closes them.
  const menus = Array.from(document.querySelectorAll(".nav-group details"));
  menus.forEach(function (menu) {
    menu.addEventListener("toggle", function () {
      if (menu.open) menus.forEach(function (other) { if (other !== menu) other.open = false; });
    });
  });
  document.addEventListener("click", function (event) {
    menus.forEach(function (menu) { if (!menu.contains(event.target)) menu.open = false; });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    menus.forEach(function (menu) {
      if (menu.open) { menu.open = false; menu.querySelector("summary").focus(); }
    });
  });
}());
