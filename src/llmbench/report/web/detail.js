// llmbench HTML report, part 3 of 5: the charts of one or more runs, overlaid: latency
// distributions, request lengths, the run over time (load, latency, the server's /metrics and
// the GPUs, on one clock with the load period shaded and the cursors linked), the per-request
// timeline and the simulated engine.
(function (LB) {
  "use strict";
  const el = LB.el;

  // `sel`: { runs: [run objects], colors: [per run], prefix: chart id prefix, data: report data }
  LB.detail = function (parent, sel) {
    distributions(parent, sel);
    lengths(parent, sel);
    overTime(parent, sel);
    timeline(parent, sel);
    engine(parent, sel);
  };

  const id = (sel, name) => sel.prefix + name;

  // ---- distributions ----
  const metrics = [["ttft", "TTFT"], ["tpot", "TPOT"], ["itl", "ITL"], ["e2el", "E2EL"]];
  function distributions(parent, sel) {
    const grid = LB.section(parent, "Latency distributions",
                            "CDFs and histograms over the completed requests (ITL: one sample " +
                            "per token after the first). Histograms share bins across runs; the " +
                            "bins end at the largest p99, values above are counted in the legend.");
    for (const [key, label] of metrics) {
      const series = sel.runs.map((r, i) => ({ label: r.name, x: r.cdf[key].x, y: r.cdf[key].p,
                                               color: sel.colors[i] }));
      LB.lineChart(LB.chartBox(grid, id(sel, key + "-cdf"), label + " CDF"), {
        series: series, xLabel: label + " (ms)", yLabel: "fraction ≤ x",
        xLog: LB.wantsLog(series.flatMap((s) => s.x)),
        yScale: { range: [0, 1] }, emptyReason: "no " + label + " samples" });
      histogramChart(LB.chartBox(grid, id(sel, key + "-hist"), label + " histogram"), sel,
                     sel.data.histograms[key], label + " (ms)", "fraction of samples");
    }
  }
  function histogramChart(box, sel, h, xLabel, yLabel) {
    if (!h || !h.edges || h.edges.length < 2) return LB.empty(box, "no samples");
    const series = [];
    sel.runs.forEach((r, i) => {
      const hr = h.runs[r.index];
      if (!hr || hr.count === 0) return;
      series.push({
        label: r.name + (hr.above > 0 ? " (" + hr.above + " above)" : ""),
        x: h.edges,
        y: hr.fractions.concat([hr.fractions[hr.fractions.length - 1]]),
        color: sel.colors[i],
        paths: uPlot.paths.stepped({ align: 1 }),
        fill: LB.alpha(sel.colors[i], 0.2),
      });
    });
    LB.lineChart(box, { series: series, xLabel: xLabel, yLabel: yLabel, legend: true,
                        emptyReason: "no samples" });
  }
  function lengths(parent, sel) {
    const grid = LB.section(parent, "Request lengths", "Input and output tokens of the " +
                            "completed requests (server usage when it sent it, docs/metrics.md).");
    histogramChart(LB.chartBox(grid, id(sel, "input-len-hist"), "Input length"), sel,
                   sel.data.histograms.input_tokens, "input tokens", "fraction of requests");
    histogramChart(LB.chartBox(grid, id(sel, "output-len-hist"), "Output length"), sel,
                   sel.data.histograms.output_tokens, "output tokens", "fraction of requests");
  }

  // ---- over time ----
  function overTime(parent, sel) {
    const grid = LB.section(parent, "Over time",
                            "Seconds since the run started, one clock for every chart: the " +
                            "client's time windows (docs/sweep.md \"Time windows\"), the " +
                            "server's /metrics and the GPUs. Shaded: the load was being sent; " +
                            "after it, the drain. The cursors are linked.");
    const sync = sel.prefix + "time";
    const span = sel.runs.length === 1 ? sel.runs[0].load_span : null;
    const common = { xLabel: "time (s)", sync: sync, span: span };
    const perRun = (key, suffix) => sel.runs.map((r, i) => ({
      label: r.name + (suffix || ""),
      x: (r.windows || []).map((w) => w.start_s),
      y: (r.windows || []).map((w) => w[key]),
      color: sel.colors[i],
    })).filter((s) => s.x.length > 0);
    LB.lineChart(LB.chartBox(grid, id(sel, "throughput-time"), "Output throughput"),
                 Object.assign({ series: perRun("output_throughput"), yLabel: "tok/s",
                                 emptyReason: "no time windows" }, common));
    LB.lineChart(LB.chartBox(grid, id(sel, "inflight-time"), "Requests in flight (mean per window)"),
                 Object.assign({ series: perRun("mean_in_flight"), yLabel: "requests",
                                 emptyReason: "no time windows" }, common));
    for (const [key, label] of [["ttft", "TTFT"], ["itl", "ITL"]]) {
      const series = perRun("p99_" + key + "_ms", " p99").concat(
          perRun("mean_" + key + "_ms", " mean").map((s) => Object.assign(s, { dash: [4, 3] })));
      LB.lineChart(LB.chartBox(grid, id(sel, key + "-time"), label + " percentiles over time"),
                   Object.assign({ series: series, yLabel: "ms", legend: true,
                                   emptyReason: "no time windows with " + label + " samples" },
                                 common));
    }
    serverCharts(grid, sel, common);
    gpuCharts(grid, sel, common);
  }

  // The server's /metrics: one chart per group of series, only where a run has them.
  const serverGroups = [
    ["server-queue", "Server: running and waiting requests", "requests",
     ["running", "waiting", "batch_size"]],
    ["server-kv", "Server: KV-cache usage", "%", ["kv_cache_usage", "prefix_cache_hit_rate"]],
    ["server-tokens", "Server: token rates (from its counters)", "tok/s",
     ["generation_tokens", "prompt_tokens"]],
    ["server-preemptions", "Server: preemptions", "per s", ["preemptions"]],
  ];
  function serverCharts(grid, sel, common) {
    const have = sel.runs.map((r, i) => [r, i]).filter(([r]) => r.telemetry && r.telemetry.server);
    if (have.length === 0) return;
    for (const [key, title, unit, names] of serverGroups) {
      const series = [];
      for (const [r, i] of have) {
        const sm = r.telemetry.server;
        sm.series.filter((s) => names.includes(s.key)).forEach((s, k) => {
          series.push({ label: (sel.runs.length > 1 ? r.name + " " : "") + s.label, x: sm.t_s,
                        y: s.values, color: sel.runs.length > 1 ? sel.colors[i] : undefined,
                        dash: k > 0 && sel.runs.length > 1 ? [4, 3] : undefined });
        });
      }
      if (series.length === 0) continue;
      const engine = have[0][0].telemetry.server.engine;
      LB.lineChart(LB.chartBox(grid, id(sel, key), title + " (" + engine + ")"),
                   Object.assign({ series: series, yLabel: unit, legend: true,
                                   emptyReason: "no scrape carried these series" }, common));
    }
  }
  const gpuFields = [["gpu-sm", "GPU SM utilisation", "%", "sm_util_pct"],
                     ["gpu-power", "GPU power", "W", "power_w"],
                     ["gpu-memory", "GPU memory used", "GiB", "memory_used_gib"],
                     ["gpu-clock", "GPU SM clock", "MHz", "sm_clock_mhz"]];
  function gpuCharts(grid, sel, common) {
    const devices = [];
    sel.runs.forEach((r) => {
      for (const d of (r.telemetry && r.telemetry.gpus) || [])
        devices.push({ name: (sel.runs.length > 1 ? r.name + " " : "") + d.name, d: d });
    });
    if (devices.length === 0) return;
    for (const [key, title, unit, field] of gpuFields) {
      const series = devices.map((g, k) => ({ label: g.name, x: g.d.t_s, y: g.d[field],
                                              color: LB.color(k, devices.length) }));
      LB.lineChart(LB.chartBox(grid, id(sel, key), title), Object.assign(
          { series: series, yLabel: unit, legend: true, emptyReason: "NVML gave no " + field },
          common));
    }
  }

  // ---- per-request timeline ----
  function timeline(parent, sel) {
    const have = sel.runs.map((r, i) => [r, i]).filter(([r]) => r.timeline && r.timeline.shown > 0);
    const grid = LB.section(parent, "Per-request timeline",
                            "One row per request in scheduled order: queue (scheduled → sent), " +
                            "time to first token (sent → first token), decode (first token → " +
                            "done); failed requests in red.");
    const box = LB.chartBox(grid, id(sel, "request-timeline"), "Requests", true);
    if (have.length === 0) return LB.empty(box, "no per-request records");
    const select = el("select", { class: "timeline-run" });
    for (const [r, i] of have) select.appendChild(el("option", { value: String(i) }, r.name));
    if (have.length > 1) box.insertBefore(select, box.firstChild.nextSibling);
    const caption = el("p", { class: "note" });
    box.appendChild(caption);
    let current = null;
    const draw = () => {
      const r = sel.runs[Number(select.value)];
      const t = r.timeline;
      caption.textContent = t.shown < t.total ? "An even sample of " + t.shown + " of " +
                            t.total + " requests." : t.total + " requests.";
      if (current) {
        current.u.destroy();
        LB.charts.splice(LB.charts.indexOf(current), 1);
      }
      const lo = Math.min(...t.scheduled);
      const hi = Math.max(...t.done);
      const u = LB.lineChart(box, {
        series: [{ label: "requests", x: [lo, hi], y: [0, t.shown], color: "#00000000" }],
        xLabel: "time (s)", yLabel: "request", height: 380, legend: "off",
        draw: (u) => drawRequests(u, t) });
      current = LB.charts[LB.charts.length - 1];
      current.points = t.shown;
      box.insertBefore(u.root, caption);
    };
    select.addEventListener("change", () => { draw(); LB.markDrawn([current]); });
    draw();
  }
  function drawRequests(u, t) {
    const ctx = u.ctx;
    const row = Math.max(1, u.bbox.height / t.shown);
    ctx.save();
    for (let i = 0; i < t.shown; i++) {
      const y = u.valToPos(i + 1, "y", true);
      const seg = (a, b, c) => {
        if (a === null || b === null) return;
        const x0 = u.valToPos(a, "x", true);
        ctx.fillStyle = c;
        ctx.fillRect(x0, y, Math.max(1, u.valToPos(b, "x", true) - x0), row);
      };
      if (!t.ok[i]) {
        seg(t.sent[i], t.done[i], "#d62728");
        continue;
      }
      seg(t.scheduled[i], t.sent[i], "#ff7f0e");
      seg(t.sent[i], t.first[i], "#1f77b4");
      seg(t.first[i], t.done[i], "#2ca02c");
    }
    ctx.restore();
  }

  // ---- simulated engine ----
  function engine(parent, sel) {
    const sims = sel.runs.map((r, i) => [r, i]).filter(([r]) => r.kind === "simulate");
    if (sims.length === 0) return;
    const grid = LB.section(parent, "Simulated engine over time",
                            "simulate's engine timeline (sim_timeline, docs/simulator.md \"Over " +
                            "time\"), at each bucket's start.");
    const mk = (key, scale, suffix, dash) => sims.filter(([r]) => r.sim_timeline).map(([r, i]) => ({
      label: r.name + suffix,
      x: r.sim_timeline.map((b) => b.start_s),
      y: r.sim_timeline.map((b) => (b[key] === null ? null : b[key] * scale)),
      color: sel.colors[i], dash: dash,
    }));
    const reason = "the simulate results carry no sim_timeline";
    const sync = sel.prefix + "time";
    LB.lineChart(LB.chartBox(grid, id(sel, "sim-kv"), "KV-cache usage"), {
      series: mk("mean_kv_cache_usage", 100, " mean").concat(
          mk("max_kv_cache_usage", 100, " max", [4, 3])),
      xLabel: "simulated time (s)", yLabel: "% of blocks", legend: true, emptyReason: reason,
      sync: sync });
    LB.lineChart(LB.chartBox(grid, id(sel, "sim-queue"), "Running and waiting requests"), {
      series: mk("mean_running", 1, " running (mean)").concat(
          mk("max_waiting", 1, " waiting (max)", [4, 3])),
      xLabel: "simulated time (s)", yLabel: "requests", legend: true, emptyReason: reason,
      sync: sync });
    LB.lineChart(LB.chartBox(grid, id(sel, "sim-preempt"), "Preemptions per bucket"), {
      series: mk("preemptions", 1, ""), xLabel: "simulated time (s)", yLabel: "preemptions",
      emptyReason: reason, sync: sync });
    LB.lineChart(LB.chartBox(grid, id(sel, "sim-prefix"), "Prefix-cache hit rate"), {
      series: mk("prefix_cache_hit_rate", 100, ""), xLabel: "simulated time (s)",
      yLabel: "% of queried tokens", emptyReason: reason, sync: sync });
  }
})(window.LB = window.LB || {});
