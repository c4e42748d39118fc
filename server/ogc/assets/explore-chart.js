// Charts drawn by hand in SVG (no library): rows per time bucket as bars, across which a drag
// narrows the window, and series of a quantity as lines.
(function () {
  'use strict';
  var X = window.Explore;
  var NS = 'http://www.w3.org/2000/svg';
  var COLOURS = ['#b22222', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
  var PAD = { left: 56, right: 8, top: 8, bottom: 22 };

  function node(tag, attrs, text) {
    var n = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text !== undefined) n.textContent = text;
    return n;
  }

  /** The drawing area, in the SVG's own pixels, and the time-to-x scale over [from, to). */
  function frame(svg, span) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var w = Math.max(200, svg.clientWidth || 600), h = Math.max(80, svg.clientHeight || 160);
    svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    var plot = { x0: PAD.left, x1: w - PAD.right, y0: PAD.top, y1: h - PAD.bottom };
    plot.x = function (t) { return plot.x0 + ((t - span.from) / (span.to - span.from)) * (plot.x1 - plot.x0); };
    plot.t = function (x) { return span.from + ((x - plot.x0) / (plot.x1 - plot.x0)) * (span.to - span.from); };
    svg.appendChild(node('text', { x: plot.x0, y: h - 6, class: 'axis' }, X.toInput(span.from).replace('T', ' ')));
    svg.appendChild(node('text', { x: plot.x1, y: h - 6, class: 'axis', 'text-anchor': 'end' }, X.toInput(span.to).replace('T', ' ')));
    return plot;
  }

  function yAxis(svg, plot, max, label) {
    svg.appendChild(node('line', { x1: plot.x0, x2: plot.x1, y1: plot.y1, y2: plot.y1, class: 'base' }));
    svg.appendChild(node('text', { x: plot.x0 - 4, y: plot.y0 + 10, class: 'axis', 'text-anchor': 'end' }, label(max)));
  }

  /** A drag across the plot picks [from, to), snapped outwards to the buckets' edges. */
  function brush(svg, plot, snap, onPick) {
    var band = node('rect', { class: 'brush', y: plot.y0, height: plot.y1 - plot.y0, x: 0, width: 0 });
    svg.appendChild(band);
    var start = null;
    var at = function (e) {
      var r = svg.getBoundingClientRect();
      return Math.min(plot.x1, Math.max(plot.x0, ((e.clientX - r.left) / r.width) * svg.viewBox.baseVal.width));
    };
    svg.onpointerdown = function (e) { start = at(e); svg.setPointerCapture(e.pointerId); };
    svg.onpointermove = function (e) {
      if (start === null) return;
      var x = at(e);
      band.setAttribute('x', Math.min(start, x));
      band.setAttribute('width', Math.abs(x - start));
    };
    svg.onpointerup = function (e) {
      if (start === null) return;
      var a = Math.min(start, at(e)), b = Math.max(start, at(e));
      start = null;
      band.setAttribute('width', 0);
      if (b - a >= 3) onPick(snap(plot.t(a), false), snap(plot.t(b), true));
    };
  }

  /** buckets: [{ t, end, count }] in ms; onPick(fromMs, toMs) when a range is dragged. */
  X.barChart = function (svg, buckets, span, onPick) {
    var plot = frame(svg, span);
    var max = buckets.reduce(function (m, b) { return Math.max(m, b.count); }, 0);
    yAxis(svg, plot, max, X.groups);
    buckets.forEach(function (b) {
      var x0 = plot.x(Math.max(b.t, span.from)), x1 = plot.x(Math.min(b.end, span.to));
      var h = max ? ((plot.y1 - plot.y0) * b.count) / max : 0;
      var bar = node('rect', { class: 'bar', x: x0, width: Math.max(1, x1 - x0 - 1), y: plot.y1 - h, height: h });
      bar.appendChild(node('title', {}, X.toInput(b.t).replace('T', ' ') + ': ' + X.groups(b.count) + ' rows'));
      svg.appendChild(bar);
    });
    var snap = function (t, up) {
      var hit = buckets.filter(function (b) { return b.t <= t && t < b.end; })[0];
      if (!hit) return Math.round(t / 1000) * 1000;
      return Math.max(span.from, Math.min(span.to, up ? hit.end : hit.t));
    };
    brush(svg, plot, snap, onPick);
  };

  /** series: [{ name, points: [{ t, v }] }]; returns the colour of each, in order. */
  X.lineChart = function (svg, series, span) {
    var plot = frame(svg, span);
    var values = [].concat.apply([], series.map(function (s) { return s.points.map(function (p) { return p.v; }); })).filter(function (v) { return v !== null; });
    var lo = Math.min.apply(null, values.concat([0])), hi = Math.max.apply(null, values.concat([1]));
    var y = function (v) { return plot.y1 - ((v - lo) / (hi - lo || 1)) * (plot.y1 - plot.y0); };
    yAxis(svg, plot, hi, function (v) { return String(Math.round(v * 100) / 100); });
    svg.appendChild(node('text', { x: plot.x0 - 4, y: plot.y1, class: 'axis', 'text-anchor': 'end' }, String(Math.round(lo * 100) / 100)));
    return series.map(function (s, i) {
      var colour = COLOURS[i % COLOURS.length];
      var d = s.points.filter(function (p) { return p.v !== null; }).map(function (p, j) { return (j ? 'L' : 'M') + plot.x(p.t).toFixed(1) + ',' + y(p.v).toFixed(1); }).join('');
      var line = node('path', { d: d || 'M0,0', class: 'line', stroke: colour });
      line.appendChild(node('title', {}, s.name));
      svg.appendChild(line);
      s.points.forEach(function (p) {
        if (p.v === null) return;
        var dot = node('circle', { cx: plot.x(p.t), cy: y(p.v), r: 2.5, fill: colour });
        dot.appendChild(node('title', {}, s.name + ' ' + X.toInput(p.t).replace('T', ' ') + ': ' + p.v));
        svg.appendChild(dot);
      });
      return colour;
    });
  };
})();
