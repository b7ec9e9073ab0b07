// Refreshes the Machines page's rows every three seconds, without reloading the page.
// The page works without it: every row is rendered by the server first.
(function () {
  "use strict";
  const main = document.querySelector("[data-machines-url]");
  if (!main || !window.fetch) { return; }
  const url = main.dataset.machinesUrl;

  function cell(text) {
    const td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "" : text;
    return td;
  }

  function render(data) {
    const tbody = document.querySelector("#machines tbody");
    tbody.replaceChildren();
    for (const m of data.machines) {
      const tr = document.createElement("tr"); tr.dataset.state = m.state;
      const since = m.seconds_since === null ? "never" : m.seconds_since + " s ago";
      tr.append(cell(m.kind), cell(m.name), cell(m.state), cell(since), cell(m.schedule),
        cell(m.pages), cell(m.rate), cell(m.detail));
      tbody.append(tr);
    }
    if (!data.machines.length) {
      const tr = document.createElement("tr");
      const td = cell("No queue server or fetcher has reported yet."); td.colSpan = 8;
      tr.append(td); tbody.append(tr);
    }
    document.getElementById("machines-refreshed").textContent =
      "Updated " + new Date().toLocaleTimeString() + ".";
  }

  async function refresh() {
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) { render(await response.json()); }
    } catch (error) {
      document.getElementById("machines-refreshed").textContent = "Could not refresh: " + error;
    }
  }
  setInterval(refresh, 3000);
})();
