// Keeps the crawl status page's "Link analysis" section current: its state and the progress of
// a running link analysis, read from the status JSON every two seconds. When a run ends, the
// page is reloaded once so the server renders the finished run's table. Works without it.
(function () {
  "use strict";
  const main = document.querySelector("[data-status-url]");
  const section = document.getElementById("crawl-link-analysis");
  if (!main || !section || !window.fetch) { return; }
  let state = section.dataset.state;

  function describe(la) {
    const run = la.running;
    if (!run) { return ""; }
    let text = "Running since " + run.started_at + ": " + run.stage + " " + run.done;
    if (run.total) { text += "/" + run.total + " (" + run.percent + "%)"; }
    return text + ".";
  }

  async function refresh() {
    try {
      const response = await fetch(main.dataset.statusUrl, { credentials: "same-origin" });
      if (!response.ok) { return; }
      const la = (await response.json()).link_analysis;
      if (!la) { return; }
      document.getElementById("link-analysis-state").textContent = la.state;
      document.getElementById("link-analysis-progress").textContent = describe(la);
      const ended = (state === "running" || state === "queued") && la.state === "idle";
      state = la.state;
      if (ended) { window.location.reload(); }
    } catch (error) {
      // the next tick tries again; the server-rendered values stay on the page meanwhile
    }
  }
  window.setInterval(refresh, 2000);
}());
