// Refreshes the crawl status page's counters every two seconds, without reloading the page.
// The page works without it: every value is rendered by the server first.
(function () {
  "use strict";
  const main = document.querySelector("[data-status-url]");
  if (!main || !window.fetch) { return; }
  const url = main.dataset.statusUrl;
  let previous = null;

  function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

  // Refill a two-column table of [label, value] rows, or one row saying it is empty.
  function fillRows(tbody, rows, empty) {
    tbody.replaceChildren();
    if (!rows.length) { const tr = document.createElement("tr"); tr.append(cell(empty)); tbody.append(tr); }
    for (const [label, value] of rows) {
      const tr = document.createElement("tr");
      const th = document.createElement("th"); th.scope = "row"; th.textContent = label;
      tr.append(th, cell(value)); tbody.append(tr);
    }
  }

  // robots.txt failures by kind, and why a crawl that ended with nothing indexed did.
  function renderRobots(data) {
    document.getElementById("crawl-robots-fetches").textContent = data.robots_fetches;
    const tbody = document.querySelector("#crawl-robots-failures tbody");
    tbody.replaceChildren();
    for (const row of data.robots_failures) {
      const tr = document.createElement("tr");
      const th = document.createElement("th"); th.scope = "row"; th.textContent = row.label;
      tr.append(th, cell(row.count), cell(row.url + ": " + row.message)); tbody.append(tr);
    }
    if (!data.robots_failures.length) {
      const tr = document.createElement("tr"); const td = cell("None failed."); td.colSpan = 3;
      tr.append(td); tbody.append(tr);
    }
    const reason = document.getElementById("crawl-end-reason");
    reason.querySelector("span").textContent = data.end_reason;
    reason.hidden = !data.end_reason;
  }

  function render(data) {
    document.getElementById("crawl-status").textContent = data.status;
    const counters = data.counters;
    for (const [name, value] of Object.entries(counters)) {
      const td = main.querySelector('[data-counter="' + name.replace(/_/g, "-") + '"]');
      if (td) { td.textContent = value; }
    }
    document.getElementById("crawl-rate").textContent = data.pages_per_second;
    if (previous && data.elapsed > previous.elapsed) {
      const rate = (counters.pages_fetched - previous.counters.pages_fetched) /
        (data.elapsed - previous.elapsed);
      document.getElementById("crawl-rate-now").textContent = rate.toFixed(1);
    }
    fillRows(document.querySelector("#crawl-tiers tbody"),
      Object.entries(data.tiers).map(([tier, count]) => ["Tier " + tier, count]), "Nothing queued.");
    const servers = document.querySelector("#crawl-queue-servers tbody");
    servers.replaceChildren();
    for (const qs of data.queue_servers) {
      const tr = document.createElement("tr");
      const beat = qs.seconds_since_heartbeat === null ? "never" : qs.seconds_since_heartbeat + " s ago";
      tr.append(cell(qs.server), cell(qs.state), cell(beat), cell(qs.queued), cell(qs.waiting_robots),
        cell(qs.crawl_delayed), cell(qs.outstanding_schedules), cell(qs.inbox));
      servers.append(tr);
    }
    const series = data.series || [];
    if (series.length) {
      const tMax = Math.max(series[series.length - 1][0], 1);
      const rMax = Math.max(1, ...series.map((p) => p[1]));
      const points = series.map((p) => (p[0] / tMax * 600).toFixed(1) + "," +
        (120 - p[1] / rMax * 120).toFixed(1)).join(" ");
      document.querySelector("#crawl-chart polyline").setAttribute("points", points);
    }
    fillRows(document.querySelector("#crawl-error-hosts tbody"), data.error_hosts,
      data.reporting ? "No errors reported." : "Not known: no queue server is working on this crawl now.");
    renderRobots(data);
    const pauses = data.disk_pauses || [];
    const disk = document.getElementById("crawl-disk");
    if (disk) {
      disk.hidden = !pauses.length;
      const list = document.getElementById("crawl-disk-pauses");
      list.replaceChildren(...pauses.map((reason) => {
        const li = document.createElement("li"); li.textContent = reason; return li;
      }));
    }
    document.getElementById("crawl-refreshed").textContent =
      "Updated " + new Date().toLocaleTimeString() + ".";
    previous = data;
  }

  async function refresh() {
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) { render(await response.json()); }
    } catch (error) {
      document.getElementById("crawl-refreshed").textContent = "Could not refresh: " + error;
    }
  }
  refresh();
  setInterval(refresh, 2000);
})();
