// Wide tables and preformatted text scroll inside their own box, never the page: every table in
// the page's main content sits in a <div class="table-scroll"> (a template may write the box
// itself; a table without one, also one a script adds later, gets one here), and a <pre>
// scrolls within its own width (app.css). While a box really scrolls it is in the tab order
// (a table's box also a named region), so the keyboard can scroll it too.
(function () {
  "use strict";
  const main = document.getElementById("main");
  if (!main) return;

  function nameOf(table) {
    const caption = table.caption && table.caption.textContent.trim();
    if (caption) return caption;
    if (table.getAttribute("aria-label")) return table.getAttribute("aria-label");
    const by = table.getAttribute("aria-labelledby");
    const labelled = by && document.getElementById(by.split(" ")[0]);
    if (labelled) return labelled.textContent.trim();
    for (let node = table.parentElement; node && node !== main; node = node.parentElement) {
      for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) {
        if (/^H[1-6]$/.test(sib.tagName)) return sib.textContent.trim();
      }
    }
    return "Table";
  }

  // A box that scrolls can be focused (a table's box is named); one that does not is left out
  // of the tab order. A box whose template set its own tabindex is left as it is.
  function mark(box) {
    if (box.dataset.scrollBox !== "auto") return;
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls) box.tabIndex = 0; else box.removeAttribute("tabindex");
    if (box.tagName === "PRE") return;
    const table = box.querySelector("table");
    if (scrolls) {
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", (table ? nameOf(table) : "Table") + " (scrolls sideways)");
    } else {
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }

  const resized = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) {
      const box = entry.target.closest(".table-scroll, pre");
      if (box) mark(box);
    });
  });

  function watch(box, inner) {
    if (!box.hasAttribute("tabindex") && !box.dataset.scrollBox) box.dataset.scrollBox = "auto";
    resized.observe(box);
    if (inner) resized.observe(inner);
  }

  function wrap(table) {
    let box = table.closest(".table-scroll");
    if (!box) {
      box = document.createElement("div");
      box.className = "table-scroll";
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    }
    watch(box, table);
  }

  function adopt(node) {
    if (node.tagName === "TABLE") wrap(node);
    else if (node.tagName === "PRE") watch(node, null);
    else {
      node.querySelectorAll("table").forEach(wrap);
      node.querySelectorAll("pre").forEach(function (pre) { watch(pre, null); });
    }
  }

  adopt(main);
  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      change.addedNodes.forEach(function (node) {
        if (node.nodeType === Node.ELEMENT_NODE) adopt(node);
      });
    });
  }).observe(main, { childList: true, subtree: true });
}());
