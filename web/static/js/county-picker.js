// Manual EAS county picker: a state, then its counties by name (from the county FIPS table), the
// part of the county, or the whole state. Picked SAME codes are appended to the locations field,
// never duplicated and never past the 31 codes a header can carry.
(function () {
  "use strict";
  const MAX_CODES = 31;
  const NAMES = {
    AL: "Alabama", AK: "Alaska", AS: "American Samoa", AZ: "Arizona", AR: "Arkansas",
    CA: "California", CO: "Colorado", CT: "Connecticut", DE: "Delaware",
    DC: "District of Columbia", FL: "Florida", GA: "Georgia", GU: "Guam", HI: "Hawaii",
    ID: "Idaho", IL: "Illinois", IN: "Indiana", IA: "Iowa", KS: "Kansas", KY: "Kentucky",
    LA: "Louisiana", ME: "Maine", MD: "Maryland", MA: "Massachusetts", MI: "Michigan",
    MN: "Minnesota", MS: "Mississippi", MO: "Missouri", MT: "Montana", NE: "Nebraska",
    NV: "Nevada", NH: "New Hampshire", NJ: "New Jersey", NM: "New Mexico", NY: "New York",
    NC: "North Carolina", ND: "North Dakota", MP: "Northern Mariana Islands", OH: "Ohio",
    OK: "Oklahoma", OR: "Oregon", PA: "Pennsylvania", PR: "Puerto Rico", RI: "Rhode Island",
    SC: "South Carolina", SD: "South Dakota", TN: "Tennessee", TX: "Texas", UT: "Utah",
    VT: "Vermont", VI: "U.S. Virgin Islands", VA: "Virginia", WA: "Washington",
    WV: "West Virginia", WI: "Wisconsin", WY: "Wyoming",
  };
  const root = document.getElementById("county-picker");
  if (!root) return;
  const target = document.getElementById(root.dataset.target);
  const stateSelect = document.getElementById("picker-state");
  const filter = document.getElementById("picker-filter");
  const counties = document.getElementById("picker-counties");
  const part = document.getElementById("picker-part");
  const addCounties = document.getElementById("picker-add-counties");
  const addState = document.getElementById("picker-add-state");
  const status = document.getElementById("picker-status");
  let current = null;

  async function getJson(url) {
    const response = await fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } });
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new Error(data.error ? data.error.message : "Request failed (" + response.status + ")");
    return data;
  }

  function option(value, text) {
    const element = document.createElement("option");
    element.value = value;
    element.textContent = text;
    return element;
  }

  function codesInField() {
    return target.value.split(/[\s,]+/).filter(Boolean);
  }

  function add(codes) {
    const present = codesInField();
    const added = [];
    codes.forEach(function (code) {
      if (!present.includes(code) && present.length < MAX_CODES) { present.push(code); added.push(code); }
    });
    target.value = present.join(" ");
    target.dispatchEvent(new Event("input", { bubbles: true }));
    const skipped = codes.filter(function (code) { return !added.includes(code) && !codesInField().includes(code); });
    status.textContent = (added.length ? "Added " + added.join(" ") + "." : "Nothing new to add.") +
      (skipped.length ? " A header carries at most " + MAX_CODES + " codes: " + skipped.length + " left out." : "");
  }

  function applyFilter() {
    const needle = filter.value.trim().toLowerCase();
    Array.from(counties.options).forEach(function (element) {
      element.hidden = needle !== "" && !element.textContent.toLowerCase().includes(needle);
    });
  }

  async function chooseState() {
    counties.replaceChildren();
    filter.value = "";
    current = null;
    const enabled = stateSelect.value !== "";
    [filter, counties, part, addCounties, addState].forEach(function (el) { el.disabled = !enabled; });
    if (!enabled) { status.textContent = ""; return; }
    try {
      current = await getJson("/api/fips/counties?state=" + encodeURIComponent(stateSelect.value));
    } catch (error) {
      status.textContent = "Could not load the counties: " + error.message;
      return;
    }
    current.counties.forEach(function (county) {
      counties.appendChild(option(county.fips, county.name + " (" + county.same + ")"));
    });
    const empty = current.counties.length === 0;
    [filter, counties, part, addCounties].forEach(function (el) { el.disabled = empty; });
    status.textContent = empty
      ? "The county table holds no county of this state: load the partial-counties file on the Zones page. The whole state can still be added."
      : current.counties.length + " counties.";
  }

  async function start() {
    let data;
    try {
      data = await getJson("/api/fips/counties");
    } catch (error) {
      status.textContent = "Could not load the states: " + error.message;
      return;
    }
    data.states.forEach(function (state) {
      stateSelect.appendChild(option(state.fips, (NAMES[state.code] || state.code) + " (" + state.code + ")"));
    });
    Object.keys(data.parts).forEach(function (digit) {
      part.appendChild(option(digit, digit + " — " + data.parts[digit]));
    });
  }

  stateSelect.addEventListener("change", chooseState);
  filter.addEventListener("input", applyFilter);
  addCounties.addEventListener("click", function () {
    const picked = Array.from(counties.selectedOptions).filter(function (el) { return !el.hidden; });
    if (!picked.length) { status.textContent = "Select one or more counties first."; return; }
    add(picked.map(function (el) { return part.value + el.value; }));
  });
  addState.addEventListener("click", function () {
    if (current) add([current.whole_state]);
  });
  start();
}());
