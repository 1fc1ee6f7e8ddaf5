// Shared page behaviour. Keyboard: "g" then "h" goes to the overview, "g" then "d" to the docs.
(function () {
  "use strict";
  let pending = null;
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    if (pending === "g") {
      const routes = { h: "/", d: "/docs" };
      pending = null;
      if (routes[event.key]) window.location.assign(routes[event.key]);
      return;
    }
    if (event.key === "g") {
      pending = "g";
      setTimeout(function () { pending = null; }, 1000);
    }
  });
})();
