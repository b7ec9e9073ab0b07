// Refreshes the Machines page's rows every three seconds, without reloading the page.
// The page works without it: every row is rendered by the server first.
(function () {
  "use strict";
  const main = document.querySelector("[data-machines-url]");
  if (!main || !window.fetch) { return; }
  const url = main.dataset.machinesUrl;

  const cell = window.yioopyLive.cell;

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
    const log = document.getElementById("pool-log");
    if (log && data.pool_log && data.pool_log.length) {
      const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.textContent = data.pool_log.join("\n") + "\n";
      if (atEnd) { log.scrollTop = log.scrollHeight; }  // keep following the newest lines
    }
    const pending = document.getElementById("restart-pending");
    if (pending) { pending.hidden = !data.restart_pending; }
    if (!data.machines.length) {
      const tr = document.createElement("tr");
      const td = cell("No queue server or fetcher has reported yet."); td.colSpan = 8;
      tr.append(td); tbody.append(tr);
    }
  }

  const log = document.getElementById("pool-log");
  if (log) { log.scrollTop = log.scrollHeight; }  // the newest lines in view
  window.yioopyLive.poll(url, render, "machines-refreshed", 3000);
})();
