// llmbench HTML report, part 1 of 5: shared helpers and the chart wrapper around uPlot.
// The parts are concatenated in order into one script (cmake/EmbedWebAssets.cmake); they share
// the namespace object `LB`. Every chart element gets data-status ("drawn", "empty" or
// "error"), data-points (the data points given to it), data-series and data-ink (canvas pixels
// in a series colour after drawing); the browser test reads them (docs/report.md).
(function (LB) {
  "use strict";
  LB.errors = [];
  LB.charts = [];
  window.addEventListener("error", (e) => LB.errors.push(String(e.message)));

  // ---- colours ----
  // Tableau 10 (saturated, so the ink count tells them from the grey axes and grid). A chart
  // with more series than the palette gets n evenly spaced hues instead, so no colour repeats
  // within a chart.
  const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                   "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#0b3dd6"];
  LB.color = function (i, n) {
    if ((n || 0) <= palette.length) return palette[i % palette.length];
    const hue = Math.round((i * 360) / n);
    return "hsl(" + hue + ", 70%, 42%)";
  };
  // `c` with alpha `a` (0..1), for fills: hex or hsl.
  LB.alpha = function (c, a) {
    if (c.startsWith("#")) {
      const n = parseInt(c.slice(1), 16);
      return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
    }
    return c.replace("hsl(", "hsla(").replace(")", ", " + a + ")");
  };

  // ---- DOM ----
  LB.el = function (tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  LB.section = function (parent, title, note, id) {
    const s = LB.el("section", id ? { id: id } : {});
    s.appendChild(LB.el("h2", {}, title));
    if (note) s.appendChild(LB.el("p", { class: "note" }, note));
    const grid = LB.el("div", { class: "grid" });
    s.appendChild(grid);
    parent.appendChild(s);
    return grid;
  };
  LB.fmt = function (v, digits) {
    if (v === null || v === undefined || Number.isNaN(v)) return "n/a";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return Math.abs(v) >= 10000 ? v.toLocaleString("en-US") : String(v);
    if (digits === undefined) digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
    return v.toFixed(digits);
  };
  LB.chartBox = function (grid, id, title, wide) {
    const box = LB.el("div", { class: "chart" + (wide ? " wide" : ""), "data-chart": id });
    box.appendChild(LB.el("h3", {}, title));
    grid.appendChild(box);
    return box;
  };
  LB.empty = function (box, reason) {
    box.dataset.status = "empty";
    box.dataset.points = "0";
    box.appendChild(LB.el("p", { class: "empty" }, "Not available: " + reason));
  };
  LB.badge = function (b) {
    return LB.el("span", { class: "badge " + b.tone, title: b.detail || "" }, b.text);
  };

  // ---- scales ----
  const finite = (v) => v !== null && v !== undefined && Number.isFinite(v);
  // A log axis when every value is positive and they span a factor of 30 or more: a 40 s point
  // then leaves the 50 ms points readable.
  LB.wantsLog = function (values) {
    const v = values.filter(finite);
    if (v.length < 2 || Math.min(...v) <= 0) return false;
    return Math.max(...v) / Math.min(...v) >= 30;
  };

  // ---- the chart ----
  // spec: { series: [{label, x[], y[], color, dash, width, points, paths, fill, noPoints}],
  //         bands: [{upper, lower, fill}] (indices into series), xLabel, yLabel, xLog, yLog,
  //         yScale, height, legend (true, false or "off"), sync (cursor sync key),
  //         span ([from, to]: the load period, shaded), draw (after the series), emptyReason }
  LB.lineChart = function (box, spec) {
    const points = spec.series.reduce((n, s) => n + s.y.filter(finite).length, 0);
    if (points === 0) return LB.empty(box, spec.emptyReason || "no data points");
    const tables = spec.series.map((s) => [s.x, s.y]);
    const joined = tables.length === 1 ? tables[0] : uPlot.join(tables);
    const width = Math.max(360, box.clientWidth - 16);
    const xs = spec.series.flatMap((s) => s.x).filter(finite);
    const xScale = { time: false };
    if (spec.xLog) Object.assign(xScale, { distr: 3, log: 10 });
    const xLo = Math.min(...xs);
    const xHi = Math.max(...xs);
    if (xLo === xHi) {  // one x value (every sample equal): give the axis a width around it
      const pad = Math.max(1, Math.abs(xLo) * 0.05);
      xScale.range = [xLo - pad, xHi + pad];
    } else if (spec.xRange) {
      xScale.range = spec.xRange;
    } else if (spec.xPad) {  // sweep points: none on the frame
      xScale.range = spec.xLog ? [xLo / 1.3, xHi * 1.3]
                               : [xLo - (xHi - xLo) * 0.04, xHi + (xHi - xLo) * 0.04];
    }
    const yScale = Object.assign({}, spec.yScale || {});
    if (spec.yLog) Object.assign(yScale, { distr: 3, log: 10 });
    const axisSize = (u, values) => {
      if (!values) return 50;
      const longest = values.reduce((m, v) => Math.max(m, String(v).length), 0);
      return Math.max(44, 14 + longest * 7);
    };
    const series = spec.series.map((s, i) => ({
      label: s.label,
      stroke: s.color || LB.color(i, spec.series.length),
      width: s.width || 1.5,
      dash: s.dash,
      spanGaps: true,
      paths: s.paths,
      fill: s.fill,
      points: s.points ? { show: true, size: 6, fill: s.color || LB.color(i, spec.series.length) }
                       : (s.paths || s.noPoints ? { show: false } : {}),
    }));
    const hooks = { draw: [], drawClear: [] };
    if (spec.span) hooks.drawClear.push(loadSpan(spec.span));
    if (spec.draw) hooks.draw.push(spec.draw);
    const opts = {
      width: width,
      height: spec.height || 260,
      scales: { x: xScale, y: yScale },
      axes: [{ label: spec.xLabel, stroke: "#444", grid: { stroke: "#e6e6e6" } },
             { label: spec.yLabel, stroke: "#444", grid: { stroke: "#e6e6e6" }, size: axisSize }],
      // Labels only: a live legend reads "--" until the cursor is over the chart.
      legend: { show: spec.legend !== "off" && (spec.series.length > 1 || !!spec.legend),
                live: false },
      series: [{ label: spec.xLabel }].concat(series),
      bands: (spec.bands || []).map((b) => ({ series: [b.upper + 1, b.lower + 1], fill: b.fill })),
      hooks: hooks,
    };
    if (spec.sync) opts.cursor = { sync: { key: spec.sync } };
    box.dataset.series = String(spec.series.length);
    const u = new uPlot(opts, joined, box);
    LB.charts.push({ box: box, u: u, points: points });
    return u;
  };

  // The load period [first send, last send] shaded, "drain" after it: time charts line up with
  // what the load was doing.
  function loadSpan(span) {
    return (u) => {
      const ctx = u.ctx;
      const x0 = u.valToPos(span[0], "x", true);
      const x1 = u.valToPos(span[1], "x", true);
      ctx.save();
      ctx.fillStyle = "rgba(120, 120, 120, 0.08)";
      const left = Math.max(u.bbox.left, x0);
      const right = Math.min(u.bbox.left + u.bbox.width, x1);
      if (right > left) ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
      ctx.restore();
    };
  }

  // Text placed inside the plot area: moved left and down as needed so it is never clipped.
  LB.label = function (u, text, x, y) {
    const ctx = u.ctx;
    const w = ctx.measureText(text).width;
    const pad = 4 * devicePixelRatio;
    const right = u.bbox.left + u.bbox.width - pad;
    const top = u.bbox.top + 12 * devicePixelRatio;
    ctx.fillText(text, Math.max(u.bbox.left + pad, Math.min(x, right - w)),
                 Math.min(u.bbox.top + u.bbox.height - pad, Math.max(y, top)));
  };

  // Horizontal or vertical guide lines with a label, drawn after the series.
  LB.guides = function (lines, next) {
    return (u) => {
      if (next) next(u);
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
          if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) continue;
          ctx.moveTo(u.bbox.left, y);
          ctx.lineTo(u.bbox.left + u.bbox.width, y);
          ctx.stroke();
          LB.label(u, g.label, u.bbox.left + 6 * devicePixelRatio, y - 4 * devicePixelRatio);
        } else {
          const x = u.valToPos(g.x, "x", true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          LB.label(u, g.label, x + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
        }
      }
      ctx.restore();
    };
  };

  // Rings at (x, y) with a label (knees).
  // Markers at one place share one ring; their labels stack instead of overprinting.
  LB.markers = function (list, next) {
    return (u) => {
      if (next) next(u);
      const ctx = u.ctx;
      ctx.save();
      ctx.lineWidth = 2 * devicePixelRatio;
      ctx.font = 11 * devicePixelRatio + "px sans-serif";
      const placed = [];
      for (const m of list) {
        const x = u.valToPos(m.x, "x", true);
        const y = u.valToPos(m.y, "y", true);
        ctx.strokeStyle = m.color;
        ctx.fillStyle = m.color;
        ctx.beginPath();
        ctx.arc(x, y, 8 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.stroke();
        let ly = y - 8 * devicePixelRatio;
        const step = 13 * devicePixelRatio;
        while (placed.some((p) => Math.abs(p.x - x) < 120 * devicePixelRatio &&
                                  Math.abs(p.y - ly) < step)) ly -= step;
        placed.push({ x: x, y: ly });
        LB.label(u, m.label, x + 10 * devicePixelRatio, ly);
      }
      ctx.restore();
    };
  };

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
  LB.markDrawn = function (list) {
    for (const c of list) {
      try {
        c.box.dataset.ink = String(inkOf(c.u));
        c.box.dataset.points = String(c.points);
        c.box.dataset.status = Number(c.box.dataset.ink) > 0 ? "drawn" : "error";
      } catch (e) {
        c.box.dataset.status = "error";
        LB.errors.push(String(e));
      }
    }
  };
  // Destroys the charts inside `container` (a panel being redrawn).
  LB.dropCharts = function (container) {
    for (let i = LB.charts.length - 1; i >= 0; i--) {
      if (container.contains(LB.charts[i].box)) {
        LB.charts[i].u.destroy();
        LB.charts.splice(i, 1);
      }
    }
    container.textContent = "";
  };
})(window.LB = window.LB || {});
