// What the admin's live pages share: poll a JSON url every few seconds and hand the answer to
// the page's renderer, saying on the page when it last refreshed (or why it could not).
// Load it before the page's own script: it defines window.yioopyLive.
(function () {
  "use strict";
  // A time as the admin's live pages write every time: "2026-11-29 02:30:00 UTC".
  function utc(date) {
    return date.toISOString().slice(0, 19).replace("T", " ") + " UTC";
  }
  window.yioopyLive = {
    utc: utc,
    // A table cell holding ``text`` (null and undefined shown empty).
    cell(text) {
      const td = document.createElement("td");
      td.textContent = text === null || text === undefined ? "" : text;
      return td;
    },
    // Fetch ``url`` now and every ``ms``; ``render`` gets each answer; the element with id
    // ``statusId`` says when the page was last updated or why it was not.
    poll(url, render, statusId, ms) {
      async function refresh() {
        const status = document.getElementById(statusId);
        try {
          const response = await fetch(url, { credentials: "same-origin",
            headers: { Accept: "application/json" } });
          if (response.ok) {
            render(await response.json());
            if (status) { status.textContent = "Updated " + utc(new Date()) + "."; }
          }
        } catch (error) {
          if (status) { status.textContent = "Could not refresh: " + error; }
        }
      }
      refresh();
      setInterval(refresh, ms);
    },
  };
})();
