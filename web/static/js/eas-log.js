// Station log page: add a note, a correction or a review (POST JSON with the CSRF token).
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="csrf-token"]');
  const status = document.getElementById("log-status");

  function post(path, body) {
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: {
        "Accept": "application/json", "Content-Type": "application/json",
        "X-CSRF-Token": meta ? meta.content : "",
      },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) throw new Error(answer.error ? answer.error.message : "Request failed");
        window.location.reload();
      });
    }).catch(function (error) { status.textContent = error.message; });
  }

  const note = document.getElementById("log-note");
  if (note) {
    note.addEventListener("submit", function (event) {
      event.preventDefault();
      const data = new FormData(note);
      const body = { topic: data.get("topic"), text: data.get("text") };
      if (data.get("source")) body.source = data.get("source");
      if (data.get("occurred_at")) body.occurred_at = new Date(data.get("occurred_at")).toISOString();
      post("/api/eas/log/notes", body);
    });
  }

  const review = document.getElementById("log-review");
  if (review) {
    review.addEventListener("submit", function (event) {
      event.preventDefault();
      const data = new FormData(review);
      const body = { period: data.get("period") };
      if (body.period === "month") body.month = data.get("month");
      else body.week_start = data.get("week_start");
      if (data.get("note")) body.note = data.get("note");
      post("/api/eas/log/reviews", body);
    });
  }

  const table = document.getElementById("eas-log");
  if (table) {
    table.addEventListener("click", function (event) {
      const button = event.target.closest("button[data-action=correct]");
      if (!button) return;
      const id = Number(button.closest("tr").dataset.id);
      const text = window.prompt("Correction of entry " + id + ":");
      if (text) post("/api/eas/log/corrections", { corrects: id, text: text });
    });
  }
})();
