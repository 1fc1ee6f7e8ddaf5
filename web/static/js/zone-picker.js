// Zone code picker: turns <div class="zone-picker" data-target="#codes"> into a tree of zones whose
// ticked codes are written, comma-separated, into the target input or textarea.
//
// Options (data attributes or the second argument of attach):
//   target    selector of the input/textarea holding the codes (required)
//   families  comma-separated subset of "county,land,fire,marine" (default "land,fire,marine")
//   check     "zones" (default): UGC zone codes only, checked with /api/zones/validate;
//             "area": the alert area rule (UGC zones, UGC counties, SAME PSSCCC), checked with
//             /api/alerts/area/check, with a warning when zones are chosen but no county
//   open      "true" to show the tree straight away
// The picker reads the target on load and whenever it is edited, so typed codes and ticked
// boxes always agree. Codes the catalog does not know are kept; "Check codes" lists them.
(function () {
  "use strict";

  const FAMILY_LABELS = { county: "Counties", land: "Land", fire: "Fire", marine: "Marine" };
  const FAMILY_NOUNS = {
    county: "counties and county parts", land: "land zones", fire: "fire-weather zones", marine: "marine zones",
  };
  const GROUP_NOUNS = { county: "state", land: "state", fire: "state", marine: "area" };
  const ITEM_NOUNS = { county: "codes", land: "zones", fire: "zones", marine: "zones" };
  const STATES = {
    AK: "Alaska", AL: "Alabama", AR: "Arkansas", AS: "American Samoa", AZ: "Arizona",
    CA: "California", CO: "Colorado", CT: "Connecticut", DC: "District of Columbia",
    DE: "Delaware", FL: "Florida", FM: "Micronesia", GA: "Georgia", GU: "Guam", HI: "Hawaii",
    IA: "Iowa", ID: "Idaho", IL: "Illinois", IN: "Indiana", KS: "Kansas", KY: "Kentucky",
    LA: "Louisiana", MA: "Massachusetts", MD: "Maryland", ME: "Maine", MH: "Marshall Islands",
    MI: "Michigan", MN: "Minnesota", MO: "Missouri", MP: "Northern Mariana Islands",
    MS: "Mississippi", MT: "Montana", NC: "North Carolina", ND: "North Dakota", NE: "Nebraska",
    NH: "New Hampshire", NJ: "New Jersey", NM: "New Mexico", NV: "Nevada", NY: "New York",
    OH: "Ohio", OK: "Oklahoma", OR: "Oregon", PA: "Pennsylvania", PR: "Puerto Rico", PW: "Palau",
    RI: "Rhode Island", SC: "South Carolina", SD: "South Dakota", TN: "Tennessee", TX: "Texas",
    UM: "U.S. Minor Outlying Islands", UT: "Utah", VA: "Virginia", VI: "U.S. Virgin Islands",
    VT: "Vermont", WA: "Washington", WI: "Wisconsin", WV: "West Virginia", WY: "Wyoming",
  };
  const CODE = /^[A-Z]{2}Z\d{3}$/;
  // The alert area rule (alertstation.alerts.area): UGC zones, UGC counties and SAME codes.
  const AREA_CODE = /^(?:[A-Z]{2}[ZC]\d{3}|\d{6})$/;
  const ZONE_CODE = CODE;
  const SHORT = /^([A-Z]{2})(\d{3})$/;
  // A filter matching more zones than this lists the groups closed instead of opening them all.
  const OPEN_ON_FILTER = 300;
  const KNOWN_SHOWN = 12;

  // Catalog data shared by every picker on the page: family -> Promise of groups.
  const loaded = {};
  const instances = [];
  let counter = 0;

  // Same rules as the server: upper-case, drop whitespace and hyphens, ST### becomes STZ###.
  function normalise(token) {
    const code = String(token).toUpperCase().replace(/[\s-]+/g, "");
    const short = SHORT.exec(code);
    return short ? short[1] + "Z" + short[2] : code;
  }

  function tokensOf(text) {
    return String(text || "").split(/[\s,]+/).filter(Boolean);
  }

  // The valid codes of a text, in order, without duplicates (zone codes, or the area rule).
  function parse(text, area) {
    const rule = area ? AREA_CODE : CODE;
    const seen = [];
    tokensOf(text).forEach(function (token) {
      const code = normalise(token);
      if (rule.test(code) && seen.indexOf(code) < 0) seen.push(code);
    });
    return seen;
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      const value = attrs[name];
      if (value === undefined || value === null || value === false) return;
      if (name === "text") node.textContent = value;
      else if (name === "className") node.className = value;
      else node.setAttribute(name, value === true ? "" : value);
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) {
        node.append(child);
      }
    });
    return node;
  }

  function fetchGroups(family) {
    if (!loaded[family]) {
      loaded[family] = fetch("/api/zones/picker?family=" + encodeURIComponent(family), {
        credentials: "same-origin", headers: { Accept: "application/json" },
      }).then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (data) {
          if (!response.ok) {
            throw new Error(data.error ? data.error.message : "Loading zones failed (" + response.status + ")");
          }
          return data.groups || [];
        });
      }).catch(function (err) {
        delete loaded[family];
        throw err;
      });
    }
    return loaded[family];
  }

  function groupLabel(family, group) {
    if (family === "marine") return group.label || group.key;
    return STATES[group.key] || group.label || group.key;
  }

  function Picker(root, options) {
    options = options || {};
    this.root = root;
    this.id = "zp-" + (++counter);
    const selector = options.target || root.dataset.target;
    this.target = selector ? document.querySelector(selector) : null;
    const wanted = String(options.families || root.dataset.families || "land,fire,marine").split(",");
    this.families = wanted.map(function (name) { return name.trim(); })
      .filter(function (name) { return FAMILY_LABELS[name]; });
    if (this.families.length === 0) this.families = ["land", "fire", "marine"];
    this.area = String(options.check || root.dataset.check || "zones") === "area";
    this.family = this.families[0];
    this.groups = {};
    this.filter = "";
    this.opened = {};
    this.chosen = [];
    this.build();
    if (!this.target) {
      this.say(this.report, "This picker has no target field (data-target).", "zp-bad");
      this.toggle.disabled = true;
      this.checkButton.disabled = true;
      return;
    }
    this.readTarget();
    const self = this;
    this.target.addEventListener("input", function () {
      if (!self.writing) { self.readTarget(); self.refreshMarks(); }
    });
    if (String(options.open || root.dataset.open) === "true") this.open(true);
  }

  Picker.prototype.build = function () {
    const self = this;
    const root = this.root;
    root.classList.add("zp");
    root.replaceChildren();
    this.toggle = el("button", {
      type: "button", className: "zp-toggle", "aria-expanded": "false", "aria-controls": this.id + "-body",
      text: this.area ? "Choose counties or zones…" : "Choose zones…",
    });
    this.checkButton = el("button", { type: "button", className: "zp-check", text: "Check codes" });
    this.count = el("span", { className: "zp-count" });
    root.append(el("div", { className: "zp-bar" }, [this.toggle, this.checkButton, this.count]));
    this.noCounties = el("p", {
      className: "zp-warn zp-no-counties", role: "status", hidden: true,
      text: "Warning: this area has zones but no counties. County-based warnings (Tornado TOR, " +
        "Severe Thunderstorm SVR, Flash Flood FFW) name counties, so they will not match. " +
        "Add the counties of the area too.",
    });
    root.append(this.noCounties);

    this.tabs = el("div", { className: "zp-tabs", role: "tablist", "aria-label": "Zone family" });
    this.tabButtons = this.families.map(function (family, index) {
      const tab = el("button", {
        type: "button", className: "zp-tab", role: "tab", id: self.id + "-tab-" + family,
        "aria-controls": self.id + "-panel", "aria-selected": index === 0 ? "true" : "false",
        tabindex: index === 0 ? "0" : "-1", "data-family": family, text: FAMILY_LABELS[family],
      });
      tab.addEventListener("click", function () { self.show(family); });
      tab.addEventListener("keydown", function (event) { self.onTabKey(event, index); });
      self.tabs.append(tab);
      return tab;
    });
    this.tabs.hidden = this.families.length < 2;

    this.filterInput = el("input", {
      type: "search", id: this.id + "-filter", className: "zp-filter", autocomplete: "off",
      spellcheck: "false", placeholder: "State, area, code or name",
    });
    this.status = el("p", { className: "zp-status", role: "status", "aria-live": "polite" });
    this.tree = el("div", { className: "zp-tree" });
    this.panel = el("div", {
      className: "zp-panel", role: "tabpanel", id: this.id + "-panel",
      "aria-labelledby": this.id + "-tab-" + this.family,
    }, [
      el("div", { className: "zp-filter-row" }, [
        el("label", { for: this.id + "-filter", text: "Filter" }), this.filterInput,
      ]),
      this.status,
      this.tree,
    ]);
    this.body = el("div", { className: "zp-body", id: this.id + "-body", hidden: true }, [this.tabs, this.panel]);
    this.report = el("div", { className: "zp-report", role: "status", "aria-live": "polite" });
    root.append(this.body, this.report);

    this.toggle.addEventListener("click", function () { self.open(self.body.hidden); });
    this.checkButton.addEventListener("click", function () { self.check(); });
    let timer = null;
    this.filterInput.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () { self.setFilter(self.filterInput.value); }, 200);
    });
    this.filterInput.addEventListener("keydown", function (event) {
      // Inside a settings form, Enter in the filter must not submit the form.
      if (event.key === "Enter") {
        event.preventDefault();
        window.clearTimeout(timer);
        self.setFilter(self.filterInput.value);
      }
    });
    this.tree.addEventListener("change", function (event) { self.onTick(event.target); });
    this.tree.addEventListener("toggle", function (event) {
      const details = event.target;
      if (!details.zpGroup) return;
      if (details.open && !details.zpFilled) self.fill(details);
      // Remember what the user opened, so clearing a filter or reloading keeps it open.
      if (!self.filter) {
        const opened = self.opened[self.family] = self.opened[self.family] || {};
        if (details.open) opened[details.zpGroup.key] = true;
        else delete opened[details.zpGroup.key];
      }
    }, true);
  };

  Picker.prototype.onTabKey = function (event, index) {
    const last = this.families.length - 1;
    const moves = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = moves[event.key];
    this.show(this.families[next]);
    this.tabButtons[next].focus();
  };

  Picker.prototype.open = function (show) {
    this.body.hidden = !show;
    this.toggle.setAttribute("aria-expanded", show ? "true" : "false");
    this.toggle.textContent = show ? "Hide the list" : this.area ? "Choose counties or zones…" : "Choose zones…";
    if (show) this.show(this.family);
  };

  Picker.prototype.show = function (family) {
    const self = this;
    this.family = family;
    this.tabButtons.forEach(function (tab) {
      const active = tab.dataset.family === family;
      tab.setAttribute("aria-selected", active ? "true" : "false");
      tab.tabIndex = active ? 0 : -1;
    });
    this.panel.setAttribute("aria-labelledby", this.id + "-tab-" + family);
    if (this.groups[family]) { this.renderTree(); return; }
    this.tree.replaceChildren();
    this.status.textContent = "Loading " + FAMILY_NOUNS[family] + "…";
    fetchGroups(family).then(function (groups) {
      self.groups[family] = groups;
      if (self.family === family) self.renderTree();
    }).catch(function (err) {
      if (self.family === family) self.status.textContent = err.message;
    });
  };

  Picker.prototype.setFilter = function (text) {
    const value = text.trim().toLowerCase();
    if (value === this.filter) return;
    this.filter = value;
    if (this.groups[this.family]) this.renderTree();
  };

  // The zones of a group the filter lets through (all of them when the group itself matches).
  Picker.prototype.matching = function (group) {
    const needle = this.filter;
    if (!needle) return group.zones;
    const label = groupLabel(this.family, group).toLowerCase();
    if (group.key.toLowerCase() === needle || label.indexOf(needle) >= 0) return group.zones;
    const code = normalise(needle).toLowerCase();
    return group.zones.filter(function (zone) {
      const lower = zone.code.toLowerCase();
      return lower.indexOf(needle) === 0 || lower.indexOf(code) === 0 ||
        zone.name.toLowerCase().indexOf(needle) >= 0;
    });
  };

  Picker.prototype.renderTree = function () {
    const self = this;
    const family = this.family;
    const groups = this.groups[family] || [];
    const shown = [];
    let total = 0;
    groups.forEach(function (group) {
      const zones = self.matching(group);
      if (zones.length) { shown.push([group, zones]); total += zones.length; }
    });
    const openAll = Boolean(this.filter) && total <= OPEN_ON_FILTER;
    const opened = this.filter ? {} : this.opened[family] || {};
    this.tree.replaceChildren.apply(this.tree, shown.map(function (pair) {
      return self.groupNode(pair[0], pair[1], openAll || Boolean(opened[pair[0].key]));
    }));
    if (groups.length === 0) {
      this.status.textContent = "No " + FAMILY_NOUNS[family] + " in the catalog yet. Typed codes are kept all the same.";
    } else if (shown.length === 0) {
      this.status.textContent = "Nothing matches “" + this.filter + "”.";
    } else if (this.filter) {
      this.status.textContent = total.toLocaleString("en-US") + (total === 1 ? " zone" : " zones") +
        " in " + shown.length + " " + GROUP_NOUNS[family] + (shown.length === 1 ? "" : "s") + " match." +
        (openAll ? "" : " Open a group to see them, or narrow the filter.");
    } else {
      const zones = groups.reduce(function (sum, group) { return sum + group.zones.length; }, 0);
      this.status.textContent = zones.toLocaleString("en-US") + " " + FAMILY_NOUNS[family] + " in " +
        groups.length + " " + GROUP_NOUNS[family] + (groups.length === 1 ? "" : "s") + ". Open one to tick zones.";
    }
    this.refreshMarks();
  };

  Picker.prototype.groupNode = function (group, zones, open) {
    const details = el("details", { className: "zp-group", "data-key": group.key }, [
      el("summary", {}, [
        el("span", { className: "zp-key", text: group.key }),
        el("span", { className: "zp-label", text: groupLabel(this.family, group) }),
        el("span", { className: "zp-size hint", text: zones.length + (zones.length === group.zones.length ? "" : " of " + group.zones.length) + " " + ITEM_NOUNS[this.family] }),
        el("span", { className: "zp-chosen" }),
      ]),
    ]);
    details.zpGroup = group;
    details.zpZones = zones;
    if (open) { this.fill(details); details.open = true; }
    return details;
  };

  // Build the checkboxes of a group the first time it opens.
  Picker.prototype.fill = function (details) {
    const group = details.zpGroup;
    const zones = details.zpZones;
    const partial = zones.length !== group.zones.length;
    const allLabel = partial
      ? "Select all " + zones.length + " shown in " + group.key
      : "Select all in " + group.key + " (" + zones.length + ")";
    const list = el("ul", { className: "zp-zones" }, zones.map(function (zone) {
      return el("li", {}, [el("label", {}, [
        el("input", { type: "checkbox", className: "zp-box", value: zone.code }),
        el("code", { text: zone.code }),
        el("span", { text: zone.name || zone.code }),
      ])]);
    }));
    details.append(el("div", { className: "zp-group-body" }, [
      el("label", { className: "zp-all" }, [
        el("input", { type: "checkbox", className: "zp-all-box" }), el("span", { text: allLabel }),
      ]),
      list,
    ]));
    details.zpFilled = true;
    this.markGroup(details);
  };

  Picker.prototype.onTick = function (box) {
    if (box.classList.contains("zp-box")) {
      this.setCodes([box.value], box.checked);
    } else if (box.classList.contains("zp-all-box")) {
      const details = box.closest("details");
      this.setCodes(details.zpZones.map(function (zone) { return zone.code; }), box.checked);
    }
  };

  // Add or remove codes in the target, leaving every other token (even unknown or invalid) alone.
  Picker.prototype.setCodes = function (codes, on) {
    const change = {};
    codes.forEach(function (code) { change[code] = true; });
    let tokens = tokensOf(this.target.value);
    if (on) {
      const present = {};
      tokens.forEach(function (token) { present[normalise(token)] = true; });
      codes.forEach(function (code) { if (!present[code]) { tokens.push(code); present[code] = true; } });
    } else {
      tokens = tokens.filter(function (token) { return !change[normalise(token)]; });
    }
    this.writing = true;
    this.target.value = tokens.join(", ");
    this.target.dispatchEvent(new Event("input", { bubbles: true }));
    this.target.dispatchEvent(new Event("change", { bubbles: true }));
    this.writing = false;
    this.readTarget();
    this.refreshMarks();
  };

  Picker.prototype.readTarget = function () {
    this.chosen = parse(this.target.value, this.area);
    this.chosenSet = {};
    const set = this.chosenSet;
    this.chosen.forEach(function (code) { set[code] = true; });
    const n = this.chosen.length;
    this.count.textContent = n === 0 ? "No codes chosen" : n === 1 ? "1 code chosen" : n + " codes chosen";
    if (this.area) {
      const zones = this.chosen.filter(function (code) { return ZONE_CODE.test(code); }).length;
      this.noCounties.hidden = !(zones > 0 && zones === n);
    }
  };

  Picker.prototype.markGroup = function (details) {
    const set = this.chosenSet;
    const all = details.zpGroup.zones.filter(function (zone) { return set[zone.code]; }).length;
    details.querySelector(".zp-chosen").textContent = all ? all + " chosen" : "";
    if (!details.zpFilled) return;
    let ticked = 0;
    const boxes = details.querySelectorAll("input.zp-box");
    boxes.forEach(function (box) {
      box.checked = Boolean(set[box.value]);
      if (box.checked) ticked += 1;
    });
    const allBox = details.querySelector("input.zp-all-box");
    allBox.checked = ticked > 0 && ticked === boxes.length;
    allBox.indeterminate = ticked > 0 && ticked < boxes.length;
  };

  Picker.prototype.refreshMarks = function () {
    const self = this;
    this.tree.querySelectorAll("details.zp-group").forEach(function (details) { self.markGroup(details); });
  };

  // Forget the catalog data (after an upload) and redraw what is on screen.
  Picker.prototype.reload = function () {
    this.groups = {};
    if (!this.body.hidden) this.show(this.family);
  };

  Picker.prototype.say = function (node, text, className) {
    node.replaceChildren(el("p", { className: className, text: text }));
  };

  Picker.prototype.check = function () {
    const self = this;
    const text = this.target.value;
    if (!text.trim()) { this.say(this.report, "No codes to check: the box is empty.", "hint"); return; }
    this.checkButton.disabled = true;
    this.say(this.report, "Checking…", "hint");
    const url = this.area ? "/api/alerts/area/check?codes=" : "/api/zones/validate?codes=";
    fetch(url + encodeURIComponent(text), {
      credentials: "same-origin", headers: { Accept: "application/json" },
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) throw new Error(data.error ? data.error.message : "Checking failed (" + response.status + ")");
        self.showReport(data);
      });
    }).catch(function (err) {
      self.say(self.report, err.message, "zp-bad");
    }).then(function () {
      self.checkButton.disabled = false;
    });
  };

  Picker.prototype.showReport = function (data) {
    const lines = [];
    const known = data.known || [];
    if (known.length) {
      const named = known.slice(0, KNOWN_SHOWN).map(function (zone) {
        return zone.code + (zone.name && zone.name !== zone.code ? " (" + zone.name + ")" : "");
      }).join(", ");
      const more = known.length > KNOWN_SHOWN ? " and " + (known.length - KNOWN_SHOWN) + " more" : "";
      lines.push(el("p", { className: "zp-ok zp-known", text: known.length + " known: " + named + more + "." }));
    }
    if ((data.unknown || []).length) {
      lines.push(el("p", {
        className: "zp-warn zp-unknown",
        text: "Not in the catalog (kept): " + data.unknown.join(", ") +
          ". They may belong to a zone file that is not loaded yet.",
      }));
    }
    if ((data.invalid || []).length) {
      lines.push(el("p", {
        className: "zp-bad zp-invalid",
        text: this.area
          ? "Not area codes: " + data.invalid.join(", ") + ". Use UGC zone codes such as VAZ057 " +
            "(VA057 is read as VAZ057), UGC county codes such as OHC137 or SAME codes PSSCCC " +
            "such as 039137."
          : "Not zone codes: " + data.invalid.join(", ") +
            ". A code is two letters, Z and three digits, such as VAZ057 (VA057 is read as VAZ057).",
      }));
    }
    if (!lines.length) lines.push(el("p", { className: "hint", text: "No codes to check." }));
    this.report.replaceChildren.apply(this.report, lines);
  };

  function attach(root, options) {
    if (root.zonePicker) return root.zonePicker;
    const picker = new Picker(root, options);
    root.zonePicker = picker;
    instances.push(picker);
    return picker;
  }

  function attachAll(scope) {
    return Array.prototype.map.call((scope || document).querySelectorAll(".zone-picker"), function (root) {
      return attach(root);
    });
  }

  // Drop the shared catalog data; every picker reloads what it shows.
  function refresh() {
    Object.keys(loaded).forEach(function (family) { delete loaded[family]; });
    instances.forEach(function (picker) { if (picker.target) picker.reload(); });
  }

  window.AlertStation = window.AlertStation || {};
  window.AlertStation.ZonePicker = {
    attach: attach, attachAll: attachAll, refresh: refresh, normalise: normalise, parse: parse,
    get: function (root) { return root.zonePicker || null; },
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { attachAll(document); });
  } else {
    attachAll(document);
  }
})();
