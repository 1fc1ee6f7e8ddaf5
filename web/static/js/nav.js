// The navigation on a narrow screen (a phone): one "Menu" button in the page header shows and
// hides the links and the account (Sign out). The button says whether the menu is open
// (aria-expanded) and which element it opens (aria-controls). Escape closes the menu and gives
// the focus back to the button. Without this script the menu stays open and wraps.
(function () {
  "use strict";
  const toggle = document.getElementById("nav-toggle");
  const menu = document.getElementById("site-menu");
  if (!toggle || !menu) return;
  document.documentElement.dataset.nav = "collapsible";

  function setOpen(open) {
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    menu.classList.toggle("open", open);
  }

  toggle.addEventListener("click", function () {
    setOpen(toggle.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || toggle.getAttribute("aria-expanded") !== "true") return;
    if (menu.querySelector("details[open]")) return;  // the open group closes first
    setOpen(false);
    toggle.focus();
  }, true);  // capture: seen before the group menus' own Escape handler closes a group
  setOpen(false);
}());
