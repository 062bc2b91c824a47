// llmbench HTML report: reads the data embedded by src/llmbench/report/html.cpp (the JSON in
// #llmbench-data, its fields in docs/report.md "Embedded data") and draws every chart with uPlot.
// Every chart's element gets data-status ("drawn", "empty" or "error"), data-points (the data
// points given to it) and data-ink (canvas pixels in a series colour after drawing), and <body>
// gets data-report-status="ready" and data-errors when all are done: the browser test reads them.
(function () {
  "use strict";
  const errors = [];
  window.addEventListener("error", (e) => errors.push(String(e.message)));
  const data = JSON.parse(document.getElementById("llmbench-data").textContent);
  const main = document.getElementById("report");
  const charts = [];
  // Saturated colours: the ink count below tells them from the grey axes and grid.
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                   "#17becf", "#e377c2", "#8c564b", "#bcbd22", "#0b3dd6"];
  const color = (i) => palette[i % palette.length];
  const runs = data.runs || [];

  // ---- small DOM helpers ----
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function section(title, note) {
    const s = el("section");
    s.appendChild(el("h2", {}, title));
    if (note) s.appendChild(el("p", { class: "note" }, note));
    const grid = el("div", { class: "grid" });
    s.appendChild(grid);
    main.appendChild(s);
    return grid;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || Number.isNaN(v)) return "n/a";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    return v.toFixed(digits === undefined ? 2 : digits);
  }
  function chartBox(grid, id, title) {
    const box = el("div", { class: "chart", "data-chart": id });
    box.appendChild(el("h3", {}, title));
    grid.appendChild(box);
    return box;
  }
  function empty(box, reason) {
    box.dataset.status = "empty";
    box.dataset.points = "0";
    box.appendChild(el("p", { class: "empty" }, "Not available: " + reason));
  }

  // ---- charts ----
  // Draws `series` ([{label, x[], y[], dash, points}]) over a shared x (uPlot.join aligns them).
  function lineChart(box, spec) {
    const tables = spec.series.map((s) => [s.x, s.y]);
    const points = spec.series.reduce(
        (n, s) => n + s.y.filter((v) => v !== null && Number.isFinite(v)).length, 0);
    if (points === 0) return empty(box, spec.emptyReason || "no data points");
    const joined = tables.length === 1 ? tables[0] : uPlot.join(tables);
    const width = Math.max(360, box.clientWidth - 16);
    const xs = spec.series.flatMap((s) => s.x).filter((v) => v !== null && Number.isFinite(v));
    const xScale = { time: false };
    const xLo = Math.min(...xs);
    const xHi = Math.max(...xs);
    if (xLo === xHi) {  // one x value (every sample equal): give the axis a width around it
      const pad = Math.max(1, Math.abs(xLo) * 0.05);
      xScale.range = [xLo - pad, xHi + pad];
    }
    const opts = {
      width: width,
      height: spec.height || 260,
      scales: { x: xScale, y: spec.yScale || {} },
      axes: [{ label: spec.xLabel, stroke: "#444", grid: { stroke: "#e6e6e6" } },
             { label: spec.yLabel, stroke: "#444", grid: { stroke: "#e6e6e6" }, size: 60 }],
      legend: { show: spec.series.length > 1 || !!spec.legend },
      series: [{ label: spec.xLabel }].concat(spec.series.map((s, i) => ({
        label: s.label,
        stroke: s.color || color(i),
        width: s.width || 1.5,
        dash: s.dash,
        spanGaps: true,
        paths: s.paths,
        fill: s.fill,
        // A sparse series shows its points (uPlot's default); a sweep's always does.
        points: s.points ? { show: true, size: 6, fill: s.color || color(i) }
                         : (s.paths || s.noPoints ? { show: false } : {}),
      }))),
      hooks: { draw: spec.draw ? [spec.draw] : [] },
    };
    box.dataset.series = String(spec.series.length);
    const u = new uPlot(opts, joined, box);
    charts.push({ box: box, u: u, points: points });
    return u;
  }
  // Horizontal or vertical guide lines with a label, drawn after the series.
  function guides(lines) {
    return (u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.setLineDash([6, 4]);
      ctx.font = 11 * devicePixelRatio + "px sans-serif";
      for (const g of lines) {
        ctx.strokeStyle = g.color;
        ctx.fillStyle = g.color;
        ctx.beginPath();
        if (g.y !== undefined) {
          const y = u.valToPos(g.y, "y", true);
          ctx.moveTo(u.bbox.left, y);
          ctx.lineTo(u.bbox.left + u.bbox.width, y);
          ctx.stroke();
          ctx.fillText(g.label, u.bbox.left + 4, y - 4);
        } else {
          const x = u.valToPos(g.x, "x", true);
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.fillText(g.label, x + 4, u.bbox.top + 12);
        }
      }
      ctx.restore();
    };
  }
  // Knee markers: rings at (x, y) with a label.
  function markers(list, next) {
    return (u) => {
      if (next) next(u);
      const ctx = u.ctx;
      ctx.save();
      ctx.lineWidth = 2 * devicePixelRatio;
      ctx.font = 11 * devicePixelRatio + "px sans-serif";
      for (const m of list) {
        const x = u.valToPos(m.x, "x", true);
        const y = u.valToPos(m.y, "y", true);
        ctx.strokeStyle = m.color;
        ctx.fillStyle = m.color;
        ctx.beginPath();
        ctx.arc(x, y, 7 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.stroke();
        ctx.fillText(m.label, x + 9 * devicePixelRatio, y - 6 * devicePixelRatio);
      }
      ctx.restore();
    };
  }

  // ---- summary ----
  function summaryTable() {
    const s = el("section");
    s.appendChild(el("h2", {}, "Summary"));
    const cols = [["completed", "done", 0], ["failed", "failed", 0],
                  ["duration", "duration s", 2], ["request_throughput", "req/s", 2],
                  ["output_throughput", "out tok/s", 1], ["mean_ttft_ms", "TTFT mean", 2],
                  ["p99_ttft_ms", "TTFT p99", 2], ["mean_tpot_ms", "TPOT mean", 2],
                  ["p99_tpot_ms", "TPOT p99", 2], ["mean_itl_ms", "ITL mean", 2],
                  ["p99_itl_ms", "ITL p99", 2], ["mean_e2el_ms", "E2EL mean", 1],
                  ["p99_e2el_ms", "E2EL p99", 1], ["max_concurrent_requests", "max in flight", 0]];
    const table = el("table", { class: "summary", "data-rows": String(runs.length) });
    const head = el("tr");
    head.appendChild(el("th", {}, "run"));
    head.appendChild(el("th", {}, "kind"));
    for (const c of cols) head.appendChild(el("th", { title: c[0] }, c[1]));
    head.appendChild(el("th", {}, "notes"));
    table.appendChild(head);
    runs.forEach((r, i) => {
      const tr = el("tr");
      const name = el("td", { class: "run" });
      name.appendChild(el("span", { class: "swatch", style: "background:" + color(i) }));
      name.appendChild(document.createTextNode((r.group ? r.group + " " : "") + r.name));
      tr.appendChild(name);
      tr.appendChild(el("td", {}, r.kind));
      for (const c of cols) tr.appendChild(el("td", { class: "num" }, fmt(r.summary[c[0]], c[2])));
      tr.appendChild(el("td", { class: "notes" }, (r.notes || []).join("; ")));
      table.appendChild(tr);
    });
    s.appendChild(table);
    s.appendChild(el("p", { class: "note" },
                     "Latencies in ms (docs/metrics.md defines each); percentiles exact over " +
                     "all samples, as in the results JSON."));
    main.appendChild(s);
  }

  // ---- multi-turn runs: TTFT by turn ----
  function byTurn() {
    const withTurns = runs.filter((r) => Array.isArray(r.by_turn) && r.by_turn.length > 0);
    if (withTurns.length === 0) return;
    const s = el("section");
    s.appendChild(el("h2", {}, "TTFT by turn"));
    const table = el("table", { class: "summary by-turn" });
    const head = el("tr");
    for (const h of ["run", "turn", "done", "failed", "TTFT mean", "TTFT median", "TTFT p99",
                     "input tok", "cached tok"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    for (const r of withTurns) {
      for (const t of r.by_turn) {
        const tr = el("tr");
        tr.appendChild(el("td", { class: "run" }, r.name));
        for (const [v, d] of [[t.turn, 0], [t.count, 0], [t.failed, 0], [t.mean_ttft_ms, 2],
                              [t.median_ttft_ms, 2], [t.p99_ttft_ms, 2],
                              [t.mean_input_tokens, 0], [t.mean_cached_tokens, 0]]) {
          tr.appendChild(el("td", { class: "num" }, fmt(v, d)));
        }
        table.appendChild(tr);
      }
    }
    s.appendChild(table);
    for (const r of withTurns) {
      if (r.turn_finding && r.turn_finding.text) {
        s.appendChild(el("p", { class: r.turn_finding.said ? "finding" : "note" },
                         r.name + ": " + r.turn_finding.text));
      }
    }
    s.appendChild(el("p", { class: "note" },
                     "Turn 2 repeats turn 1 and its answer: a server's prefix cache shows as a " +
                     "lower TTFT at a longer input (docs/workloads.md, \"Conversations\")."));
    main.appendChild(s);
  }

  // ---- distributions ----
  const metrics = [["ttft", "TTFT"], ["tpot", "TPOT"], ["itl", "ITL"], ["e2el", "E2EL"]];
  function distributions() {
    const grid = section("Latency distributions",
                         "CDFs and histograms over the completed requests (ITL: one sample per " +
                         "token after the first). Histograms share bins across runs; the bins " +
                         "end at the largest p99, values above are counted in the legend.");
    for (const [key, label] of metrics) {
      const series = runs.map((r, i) => ({ label: r.name, x: r.cdf[key].x, y: r.cdf[key].p,
                                           color: color(i) }));
      lineChart(chartBox(grid, key + "-cdf", label + " CDF"), {
        series: series, xLabel: label + " (ms)", yLabel: "fraction ≤ x",
        yScale: { range: [0, 1] }, emptyReason: "no " + label + " samples" });
      histogramChart(chartBox(grid, key + "-hist", label + " histogram"),
                     data.histograms[key], label + " (ms)", "fraction of samples");
    }
  }
  function histogramChart(box, h, xLabel, yLabel) {
    if (!h || !h.edges || h.edges.length < 2) return empty(box, "no samples");
    const series = h.runs.map((hr, i) => ({
      label: runs[i].name + (hr.above > 0 ? " (" + hr.above + " above)" : ""),
      x: h.edges,
      y: hr.fractions.concat([hr.fractions[hr.fractions.length - 1]]),
      color: color(i),
      paths: uPlot.paths.stepped({ align: 1 }),
      fill: color(i) + "33",
    })).filter((s, i) => h.runs[i].count > 0);
    lineChart(box, { series: series, xLabel: xLabel, yLabel: yLabel, legend: true,
                     emptyReason: "no samples" });
  }
  function lengths() {
    const grid = section("Request lengths", "Input and output tokens of the completed requests " +
                         "(server usage when it sent it, docs/metrics.md).");
    histogramChart(chartBox(grid, "input-len-hist", "Input length"), data.histograms.input_tokens,
                   "input tokens", "fraction of requests");
    histogramChart(chartBox(grid, "output-len-hist", "Output length"),
                   data.histograms.output_tokens, "output tokens", "fraction of requests");
  }

  // ---- over time ----
  function overTime() {
    const grid = section("Over time", "Time windows of the results (docs/sweep.md \"Time " +
                         "windows\"), at each window's start, seconds since the run started.");
    const perRun = (key, suffix) => runs.map((r, i) => ({
      label: r.name + (suffix || ""),
      x: (r.windows || []).map((w) => w.start_s),
      y: (r.windows || []).map((w) => w[key]),
      color: color(i),
    })).filter((s) => s.x.length > 0);
    lineChart(chartBox(grid, "throughput-time", "Output throughput"), {
      series: perRun("output_throughput"), xLabel: "time (s)", yLabel: "tok/s",
      emptyReason: "no time windows" });
    lineChart(chartBox(grid, "inflight-time", "Requests in flight (mean per window)"), {
      series: perRun("mean_in_flight"), xLabel: "time (s)", yLabel: "requests",
      emptyReason: "no time windows" });
    for (const [key, label] of [["ttft", "TTFT"], ["itl", "ITL"]]) {
      const series = perRun("p99_" + key + "_ms", " p99").concat(
          perRun("mean_" + key + "_ms", " mean").map((s) => Object.assign(s, { dash: [4, 3] })));
      lineChart(chartBox(grid, key + "-time", label + " percentiles over time"), {
        series: series, xLabel: "time (s)", yLabel: "ms", legend: true,
        emptyReason: "no time windows with " + label + " samples" });
    }
  }

  // ---- per-request timeline ----
  function timeline() {
    const have = runs.map((r, i) => [r, i]).filter(([r]) => r.timeline && r.timeline.shown > 0);
    const grid = section("Per-request timeline",
                         "One row per request in scheduled order: queue (scheduled → sent), " +
                         "time to first token (sent → first token), decode (first token → " +
                         "done); failed requests in red.");
    const box = chartBox(grid, "request-timeline", "Requests");
    box.classList.add("wide");
    if (have.length === 0) return empty(box, "no per-request records");
    const select = el("select", { id: "timeline-run" });
    for (const [r, i] of have) select.appendChild(el("option", { value: String(i) }, r.name));
    box.insertBefore(select, box.firstChild.nextSibling);
    const caption = el("p", { class: "note" });
    box.appendChild(caption);
    let current = null;
    const draw = () => {
      const r = runs[Number(select.value)];
      const t = r.timeline;
      caption.textContent = t.shown < t.total ? "An even sample of " + t.shown + " of " +
                            t.total + " requests." : t.total + " requests.";
      if (current) {
        current.u.destroy();
        charts.splice(charts.indexOf(current), 1);
      }
      const lo = Math.min(...t.scheduled);
      const hi = Math.max(...t.done);
      const u = lineChart(box, {
        series: [{ label: "requests", x: [lo, hi], y: [0, t.shown], color: "#00000000" }],
        xLabel: "time (s)", yLabel: "request", height: 420,
        draw: (u) => drawRequests(u, t) });
      current = charts[charts.length - 1];
      current.points = t.shown;
      box.insertBefore(u.root, caption);
    };
    select.addEventListener("change", draw);
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
  function engine() {
    const sims = runs.map((r, i) => [r, i]).filter(([r]) => r.kind === "simulate");
    if (sims.length === 0) return;
    const grid = section("Simulated engine over time",
                         "simulate's engine timeline (sim_timeline, docs/simulator.md \"Over " +
                         "time\"), at each bucket's start.");
    const mk = (key, scale, suffix, dash) => sims.filter(([r]) => r.sim_timeline).map(([r, i]) => ({
      label: r.name + suffix,
      x: r.sim_timeline.map((b) => b.start_s),
      y: r.sim_timeline.map((b) => (b[key] === null ? null : b[key] * scale)),
      color: color(i), dash: dash,
    }));
    const reason = "the simulate results carry no sim_timeline";
    lineChart(chartBox(grid, "sim-kv", "KV-cache usage"), {
      series: mk("mean_kv_cache_usage", 100, " mean").concat(
          mk("max_kv_cache_usage", 100, " max", [4, 3])),
      xLabel: "simulated time (s)", yLabel: "% of blocks", legend: true, emptyReason: reason });
    lineChart(chartBox(grid, "sim-queue", "Running and waiting requests"), {
      series: mk("mean_running", 1, " running (mean)").concat(
          mk("max_waiting", 1, " waiting (max)", [4, 3])),
      xLabel: "simulated time (s)", yLabel: "requests", legend: true, emptyReason: reason });
    lineChart(chartBox(grid, "sim-preempt", "Preemptions per bucket"), {
      series: mk("preemptions", 1, ""), xLabel: "simulated time (s)", yLabel: "preemptions",
      emptyReason: reason });
    lineChart(chartBox(grid, "sim-prefix", "Prefix-cache hit rate"), {
      series: mk("prefix_cache_hit_rate", 100, ""), xLabel: "simulated time (s)",
      yLabel: "% of queried tokens", emptyReason: reason });
  }

  // ---- sweeps ----
  function sweeps() {
    for (const s of data.sweeps || []) sweep(s);
  }
  function groupsOf(s, xKey, yKey) {
    const groups = new Map();
    for (const p of s.points) {
      if (p.status !== "ok") continue;
      const x = xKey === "load" ? p.load : p.metrics[xKey];
      const y = p.metrics[yKey];
      if (x === null || y === null) continue;
      if (!groups.has(p.group)) groups.set(p.group, []);
      groups.get(p.group).push([x, y]);
    }
    return [...groups.entries()].map(([g, pts], i) => {
      pts.sort((a, b) => a[0] - b[0]);
      return { label: g || s.name, x: pts.map((p) => p[0]), y: pts.map((p) => p[1]),
               color: color(i), points: true };
    });
  }
  function sweep(s) {
    const grid = section("Sweep " + s.name + " (" + s.mode + ")",
                         "Each point one run; knees by Kneedle (docs/sweep.md \"Knee\"), SLO " +
                         "bounds of --slo as dashed lines, the Pareto frontier (no point has " +
                         "more throughput at lower latency) dashed black.");
    const knees = s.knees || [];
    if (s.load_axis) {
      const m = knees.filter((k) => k.throughput_knee && k.throughput_knee.found).map((k) => ({
        x: k.throughput_knee.load, y: k.throughput_knee.output_throughput, color: "#d62728",
        label: "knee " + (k.group ? k.group + " " : "") + fmt(k.throughput_knee.load, 0) }));
      lineChart(chartBox(grid, "sweep-throughput", "Throughput against " + s.load_axis), {
        series: groupsOf(s, "load", "output_throughput"), xLabel: s.load_axis,
        yLabel: "output tok/s", draw: markers(m), emptyReason: "no point ran" });
    }
    const slo = (s.slo && s.slo.constraints) || [];
    const latencyKeys = ["p99_ttft_ms", "p99_tpot_ms"];
    for (const c of slo) {
      if (!latencyKeys.includes(c.metric) && !/throughput|goodput/.test(c.metric))
        latencyKeys.push(c.metric);
    }
    for (const key of latencyKeys) {
      const series = groupsOf(s, "output_throughput", key);
      const front = (s.pareto && s.pareto[key]) || [];
      if (front.length > 1) {  // first, so the measured points are drawn over it
        const pts = front.map((i) => s.points[i]);
        series.unshift({ label: "Pareto frontier", x: pts.map((p) => p.metrics.output_throughput),
                         y: pts.map((p) => p.metrics[key]), color: "#000000", dash: [8, 5],
                         width: 3, noPoints: true });
      }
      const lines = slo.filter((c) => c.metric === key).map((c) => ({
        y: c.bound, color: "#9467bd", label: "SLO " + c.text }));
      for (const c of slo.filter((c) => c.metric === "output_throughput"))
        lines.push({ x: c.bound, color: "#9467bd", label: "SLO " + c.text });
      const m = key !== "p99_ttft_ms" ? [] : knees.filter(
          (k) => k.latency_knee && k.latency_knee.found).map((k) => ({
            x: k.latency_knee.output_throughput, y: k.latency_knee.p99_ttft_ms,
            color: "#d62728", label: "latency knee" }));
      lineChart(chartBox(grid, "sweep-" + key, key + " against output throughput"), {
        series: series, xLabel: "output tok/s", yLabel: key, legend: true,
        draw: markers(m, guides(lines)), emptyReason: "no point ran" });
    }
  }

  // ---- after drawing: what the browser test reads ----
  function inkOf(u) {
    const c = u.ctx.canvas;
    const px = u.ctx.getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    for (let i = 0; i < px.length; i += 4) {
      const r = px[i], g = px[i + 1], b = px[i + 2];
      if (px[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) ink++;
    }
    return ink;
  }
  function finish() {
    for (const c of charts) {
      try {
        c.box.dataset.ink = String(inkOf(c.u));
        c.box.dataset.points = String(c.points);
        c.box.dataset.status = Number(c.box.dataset.ink) > 0 ? "drawn" : "error";
      } catch (e) {
        c.box.dataset.status = "error";
        errors.push(String(e));
      }
    }
    document.body.dataset.charts = String(document.querySelectorAll(".chart").length);
    document.body.dataset.errors = String(errors.length);
    if (errors.length) document.body.dataset.errorText = errors.join(" | ");
    document.body.dataset.reportStatus = "ready";
  }

  try {
    const g = data.generator || {};
    document.getElementById("subtitle").textContent =
        runs.length + " run(s), " + (data.sweeps || []).length + " sweep(s); llmbench " +
        (g.version || "") + " (" + String(g.git_sha || "").slice(0, 12) + ")";
    summaryTable();
    byTurn();
    sweeps();
    distributions();
    lengths();
    overTime();
    timeline();
    engine();
  } catch (e) {
    errors.push(String(e && e.stack ? e.stack : e));
    console.error(e);
  }
  // uPlot commits its first draw in a microtask; a timer runs after it.
  setTimeout(finish, 50);
})();
