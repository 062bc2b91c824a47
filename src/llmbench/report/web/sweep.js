// llmbench HTML report, part 4 of 5: the sweep view. Each metric against the load with its
// percentile band, one line per configuration (the values of the axes that are not a load
// axis), every point marked valid (filled) or invalid (hollow) and, with an SLO, a red cross
// where it misses it; the Pareto frontier of output per GPU against output per user with the
// configurations as series; the points sorted by configuration and load; and a point selector
// that shows one point's own charts below instead of overlaying every point.
(function (LB) {
  "use strict";
  const el = LB.el;
  const finite = (v) => v !== null && v !== undefined && Number.isFinite(v);

  LB.sweeps = function (main, data) {
    (data.sweeps || []).forEach((s, k) => sweep(main, data, s, k === 0 ? "" : "s" + k + "-"));
  };

  // "max-num-seqs=64 gpu=h100" (a knee's group) → "max_num_seqs 64, gpu h100" (a config label).
  const groupLabel = (g) => (g || "").split(" ").filter((t) => t).map((t) => {
    const [k, v] = t.split("=");
    return k.replace(/-/g, "_") + " " + v;
  }).join(", ");

  // The state of one sweep's view, shared by the functions below.
  function context(main, data, s, prefix) {
    const nc = s.configs.length;
    const ran = s.points.filter((p) => p.status === "ok" && finite(p.x));
    const c = {
      data: data, s: s, prefix: prefix, nc: nc, ran: ran,
      colorOf: (i) => LB.color(i, nc),
      label: (i) => s.configs[i] || "all points",
      byConfig: [...Array(Math.max(nc, 1)).keys()].map(
          (i) => ran.filter((p) => p.config === i).sort((a, b) => a.x - b.x)),
      xLog: LB.wantsLog(ran.map((p) => p.x)),
      xLabel: s.x.label,
      slo: (s.slo && s.slo.constraints) || [],
      knees: s.knees || [],
      selected: null,
      charts: [],
      section: el("section", { class: "sweep", id: prefix + "sweep" }),
    };
    c.section.appendChild(el("h2", {}, "Sweep " + s.name));
    main.appendChild(c.section);
    return c;
  }

  function sweep(main, data, s, prefix) {
    const c = context(main, data, s, prefix);
    overview(c);
    c.grid = el("div", { class: "grid" });
    c.section.appendChild(c.grid);
    throughputChart(c);
    latencyCharts(c);
    paretoChart(c);
    pointsPanel(c);
  }

  // ---- what was run and what was found ----
  function overview(c) {
    const top = el("div", { class: "cards n1" });
    LB.configCard(top, { name: c.s.name + " (" + c.s.mode + ")", lines: c.s.config_lines,
                         badges: [] });
    c.section.appendChild(top);
    if (c.nc > 1) {
      const chips = el("p", { class: "configs" });
      chips.appendChild(el("span", { class: "note" }, c.nc + " configurations: "));
      c.s.configs.forEach((name, i) => chips.appendChild(chip(c, name, i)));
      c.section.appendChild(chips);
    }
    LB.headlines(c.section, c.s.headlines, c.prefix + "sweep-answers");
  }
  function chip(c, name, i) {
    const item = el("span", { class: "chip" });
    item.appendChild(el("span", { class: "swatch", style: "background:" + c.colorOf(i) }));
    item.appendChild(document.createTextNode(name || "all points"));
    return item;
  }

  // ---- the charts ----
  // Output throughput against the load, with each configuration's throughput knee.
  function throughputChart(c) {
    const series = [];
    c.byConfig.forEach((pts, i) => {
      if (pts.length === 0) return;
      series.push({ label: c.label(i), x: pts.map((p) => p.x),
                    y: pts.map((p) => p.metrics.output_throughput), color: c.colorOf(i),
                    noPoints: true });
    });
    const marks = c.s.x.key === c.s.load_axis ? c.knees.filter(
        (k) => k.throughput_knee && k.throughput_knee.found).map((k) => ({
          x: k.throughput_knee.load, y: k.throughput_knee.output_throughput,
          color: "#d62728", label: "knee" + (c.nc > 1 ? " " + groupLabel(k.group) : "") + " @ " +
                 LB.fmt(k.throughput_knee.load) })) : [];
    chart(c, "sweep-throughput", "Output throughput against " + c.xLabel, series, "output tok/s",
          (p) => p.metrics.output_throughput,
          LB.markers(marks, sloGuides(c, "output_throughput")), false, [],
          { yInclude: sloBounds(c, "output_throughput") });
  }

  // Each latency: p50 solid, p99 dashed, the band between them; then p99 TTFT against throughput.
  function latencyCharts(c) {
    for (const [key, name] of [["ttft", "TTFT"], ["tpot", "TPOT"], ["itl", "ITL"], ["e2el", "E2EL"]]) {
      const series = [];
      const bands = [];
      c.byConfig.forEach((pts, i) => {
        if (pts.length === 0) return;
        const x = pts.map((p) => p.x);
        series.push({ label: c.label(i) + " p50", x: x, color: c.colorOf(i), noPoints: true,
                      y: pts.map((p) => p.metrics["median_" + key + "_ms"]) });
        series.push({ label: c.label(i) + " p99", x: x, color: c.colorOf(i), noPoints: true,
                      y: pts.map((p) => p.metrics["p99_" + key + "_ms"]), dash: [5, 4], width: 1.2 });
        bands.push({ upper: series.length - 1, lower: series.length - 2,
                     fill: LB.alpha(c.colorOf(i), 0.12) });
      });
      chart(c, "sweep-" + key, name + " against " + c.xLabel + " (p50, band to p99)", series, "ms",
            (p) => p.metrics["median_" + key + "_ms"], sloGuides(c, "_" + key + "_ms"), true, bands,
            { yInclude: sloBounds(c, "_" + key + "_ms") });
    }
    const lt = c.byConfig.map((pts, i) => {
      const sorted = pts.slice().sort(
          (a, b) => a.metrics.output_throughput - b.metrics.output_throughput);
      return { label: c.label(i), x: sorted.map((p) => p.metrics.output_throughput),
               y: sorted.map((p) => p.metrics.p99_ttft_ms), color: c.colorOf(i), noPoints: true };
    }).filter((x) => x.x.length > 0);
    const knees = c.knees.filter((k) => k.latency_knee && k.latency_knee.found).map((k) => ({
      x: k.latency_knee.output_throughput, y: k.latency_knee.p99_ttft_ms, color: "#d62728",
      label: "latency knee" + (c.nc > 1 ? " " + groupLabel(k.group) : "") }));
    const guides = c.slo.filter((k) => k.metric === "p99_ttft_ms").map((k) => (
      { y: k.bound, color: "#9467bd", label: "SLO " + k.text })).concat(
        c.slo.filter((k) => k.metric === "output_throughput").map((k) => (
          { x: k.bound, color: "#9467bd", label: "SLO " + k.text })));
    chart(c, "sweep-latency-throughput", "p99 TTFT against output throughput", lt,
          "p99 TTFT (ms)", (p) => p.metrics.p99_ttft_ms, LB.markers(knees, LB.guides(guides)),
          true, [], { xOf: (p) => p.metrics.output_throughput, xLabel: "output tok/s",
                      xLog: false, yInclude: sloBounds(c, "p99_ttft_ms") });
  }

  // The Pareto chart: configurations as series, the sweep's frontier dashed black.
  function paretoChart(c) {
    const series = c.byConfig.map((pts, i) => {
      const sorted = pts.filter((p) => finite(p.interactivity)).sort(
          (a, b) => a.interactivity - b.interactivity);
      return { label: c.label(i), x: sorted.map((p) => p.interactivity),
               y: sorted.map((p) => p.per_gpu), color: c.colorOf(i), noPoints: true, width: 1 };
    }).filter((x) => x.x.length > 0);
    const front = c.s.points.filter(
        (p) => c.s.pareto.frontier.includes(p.index) && finite(p.interactivity)).sort(
        (a, b) => a.interactivity - b.interactivity);
    if (front.length > 1) {
      series.unshift({ label: "Pareto frontier", x: front.map((p) => p.interactivity),
                       y: front.map((p) => p.per_gpu), color: "#000000", dash: [8, 5],
                       width: 2.5, noPoints: true });
    }
    chart(c, "sweep-pareto", "Pareto: " + c.s.pareto.y + " against output tok/s per user", series,
          c.s.pareto.y, (p) => p.per_gpu, null, false, [],
          { xOf: (p) => p.interactivity, xLabel: c.s.pareto.x, xLog: false });
  }

  // ---- the points: table, selector, detail ----
  function pointsPanel(c) {
    const s = c.s;
    const sorted = s.points.slice().sort((a, b) => (a.config - b.config) ||
                                         ((finite(a.x) ? a.x : 1e300) - (finite(b.x) ? b.x : 1e300)));
    c.rows = sorted.map((p) => ({
      name: p.name, run: p.run !== null ? c.data.runs[p.run] : null, color: c.colorOf(p.config),
      badges: (p.status === "ok" ? [] : [{ text: p.status, tone: "bad", detail: p.error }])
        .concat(p.badges).concat(p.slo === null ? [] : [
          { text: p.slo ? "meets SLO" : "misses SLO", tone: p.slo ? "good" : "bad",
            detail: (p.slo_broken || []).join("; ") }]),
      notes: p.run !== null ? (c.data.runs[p.run].notes || []).join("; ") : p.error,
      onclick: p.run !== null ? () => select(c, p) : null,
    }));
    LB.summaryTable(c.section, c.rows, "Points of " + s.name + " (by configuration and load; " +
                    "click one to see it below)");
    const pick = el("div", { class: "point-pick" });
    pick.appendChild(el("label", { for: c.prefix + "point-select" }, "Point: "));
    c.selector = el("select", { id: c.prefix + "point-select", class: "point-select" });
    for (const p of sorted) {
      if (p.run !== null) c.selector.appendChild(el("option", { value: String(p.index) }, p.name));
    }
    pick.appendChild(c.selector);
    c.section.appendChild(pick);
    c.panel = el("div", { class: "point-detail", id: c.prefix + "point-detail" });
    c.section.appendChild(c.panel);
    c.selector.addEventListener("change", () => {
      const p = s.points.find((q) => String(q.index) === c.selector.value);
      if (p) select(c, p);
    });
    const first = firstPoint(c);
    if (first) select(c, first);
    else LB.empty(LB.chartBox(c.panel, c.prefix + "point-none", "Point"), "no point ran");
  }

  // One point's card, answers and charts below the sweep; its ring in every sweep chart.
  function select(c, p) {
    c.selected = p.index;
    c.selector.value = String(p.index);
    for (const u of c.charts) u.redraw(false);
    LB.dropCharts(c.panel);
    const run = c.data.runs[p.run];
    const cards = el("div", { class: "cards n1" });
    LB.configCard(cards, { name: p.name, color: c.colorOf(p.config),
                           badges: c.rows.find((r) => r.name === p.name).badges,
                           lines: run.config.lines.filter(
                               (l) => ["load", "dataset", "engine", "date"].includes(l.key)) });
    c.panel.appendChild(cards);
    LB.headlines(c.panel, run.verdict.headlines, c.prefix + "point-answers");
    const before = LB.charts.length;
    LB.detail(c.panel, { runs: [run], colors: [c.colorOf(p.config)], prefix: c.prefix + "point-",
                         data: c.data });
    const added = LB.charts.slice(before);
    if (LB.ready) setTimeout(() => LB.markDrawn(added), 50);
  }

  // The point shown first: the SLO answer, else the first knee, else the most throughput.
  function firstPoint(c) {
    const s = c.s;
    const runs = c.ran.filter((p) => p.run !== null);
    if (s.slo && finite(s.slo.answer)) {
      const tag = s.slo.axis + "=" + s.slo.answer + " ";
      const answer = runs.find((p) => (p.label + " ").includes(tag));
      if (answer) return answer;
    }
    const knee = c.knees.find((k) => k.throughput_knee && k.throughput_knee.found);
    if (knee && s.x.key === s.load_axis) {
      const at = runs.find((p) => p.x === knee.throughput_knee.load &&
                           c.label(p.config) === (groupLabel(knee.group) || "all points"));
      if (at) return at;
    }
    return runs.sort((a, b) => b.metrics.output_throughput - a.metrics.output_throughput)[0];
  }

  // ---- one sweep chart ----
  // series: the lines; yOf: a point's y for its marker; draw: guides and knees; yLogOk: a log
  // y axis when the range asks; opt: another x (xOf, xLabel, xLog) and SLO bounds to show.
  function chart(c, id, title, series, yLabel, yOf, draw, yLogOk, bands, opt) {
    const box = LB.chartBox(c.grid, c.prefix + id, title);
    legend(c, box, series.some((x) => x.label === "Pareto frontier"), bands.length > 0);
    const xOf = opt.xOf || ((p) => p.x);
    const ys = series.flatMap((x) => x.y);
    // An SLO bound off the data's range widens the y axis so its line shows (an invisible
    // series, not drawn and not in any legend).
    const xsAll = series.flatMap((x) => x.x).filter(finite);
    for (const b of (xsAll.length > 0 ? opt.yInclude || [] : [])) {
      series.push({ label: "", x: [Math.min(...xsAll), Math.max(...xsAll)], y: [b, b],
                    color: "rgba(0,0,0,0)", noPoints: true });
    }
    const u = LB.lineChart(box, {
      series: series, bands: bands, xLabel: opt.xLabel || c.xLabel, yLabel: yLabel,
      xLog: opt.xLog !== undefined ? opt.xLog : c.xLog, yLog: yLogOk && LB.wantsLog(ys),
      xPad: true, legend: "off", height: 280,
      draw: (u) => { if (draw) draw(u); marks(c, u, xOf, yOf); },
      emptyReason: "no point ran" });
    if (!u) return;
    c.charts.push(u);
    u.over.addEventListener("click", (e) => {
      let best = null;
      let bestD = 14;
      for (const p of c.ran) {
        const d = Math.hypot(u.valToPos(xOf(p), "x") - e.offsetX, u.valToPos(yOf(p), "y") - e.offsetY);
        if (finite(d) && d < bestD) { best = p; bestD = d; }
      }
      if (best && best.run !== null) select(c, best);
    });
  }
  // One entry per configuration (never per point), and the marker key.
  function legend(c, box, frontier, band) {
    const lg = el("div", { class: "sweep-legend" });
    if (c.nc > 1 || c.s.configs[0]) c.s.configs.forEach((name, i) => lg.appendChild(chip(c, name, i)));
    let key = "● valid  ○ invalid";
    if (c.slo.length > 0) key += "  ✕ misses the SLO";
    if (band) key += "  — p50  - - p99";
    if (frontier) key += "  - - Pareto frontier";
    lg.appendChild(el("span", { class: "marker-key" }, key));
    box.appendChild(lg);
  }
  // The points: filled when valid, hollow when invalid, a red cross when the SLO is missed,
  // a black ring around the selected one.
  function marks(c, u, xOf, yOf) {
    const ctx = u.ctx;
    const r = 4.5 * devicePixelRatio;
    ctx.save();
    for (const p of c.ran) {
      if (!finite(xOf(p)) || !finite(yOf(p))) continue;
      const x = u.valToPos(xOf(p), "x", true);
      const y = u.valToPos(yOf(p), "y", true);
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.strokeStyle = c.colorOf(p.config);
      ctx.fillStyle = p.valid === false ? "#ffffff" : c.colorOf(p.config);
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
      if (p.slo === false) cross(ctx, x, y, r * 1.3);
      if (p.index === c.selected) {
        ctx.strokeStyle = "#000000";
        ctx.lineWidth = 2 * devicePixelRatio;
        ctx.beginPath();
        ctx.arc(x, y, r * 2, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    ctx.restore();
  }
  function cross(ctx, x, y, d) {
    ctx.strokeStyle = "#d62728";
    ctx.lineWidth = 2 * devicePixelRatio;
    ctx.beginPath();
    ctx.moveTo(x - d, y - d);
    ctx.lineTo(x + d, y + d);
    ctx.moveTo(x + d, y - d);
    ctx.lineTo(x - d, y + d);
    ctx.stroke();
  }
  // SLO bounds of the metrics whose name contains `part`: the values, and dashed lines.
  function sloBounds(c, part) {
    return c.slo.filter((k) => k.metric.includes(part)).map((k) => k.bound);
  }
  function sloGuides(c, part) {
    return LB.guides(c.slo.filter((k) => k.metric.includes(part)).map((k) => (
      { y: k.bound, color: "#9467bd", label: "SLO " + k.text })));
  }
})(window.LB = window.LB || {});
