// The explorer: each view (dataset, window, box, filters) is counted exactly by the aggregate
// endpoint, charted per bucket, and mapped: a grid of cells while there are too many rows to
// draw, the rows themselves once there are few enough; stations and series for sensors and
// fire danger. A newer view cancels the requests of the one before.
(function () {
  'use strict';
  var X = window.Explore;
  var $ = X.byId;
  /** Rows drawn one by one up to this many; past it, the grid of aggregate cells. */
  var DRAW_LIMIT = 5000;
  var SERIES_SHOWN = 8;
  var view = null, controller = null, gridController = null, mode = 'none', moved = null;

  function assign(a, b) { var o = {}; [a, b].forEach(function (x) { Object.keys(x).forEach(function (k) { o[k] = x[k]; }); }); return o; }
  function spanOf(v) { return { from: X.toMs(v.from), to: X.toMs(v.to) }; }
  function intervalFor(s) { var days = (s.to - s.from) / 86400000; return days <= 3 ? 'hour' : days <= 400 ? 'day' : 'month'; }
  function bucketEnd(t, iv) {
    if (iv === 'hour') return t + 3600000;
    if (iv === 'day') return t + 86400000;
    var d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  function note(text) { $('map-note').textContent = text; }

  function fail(e) {
    if (e.name === 'AbortError') return;
    document.body.setAttribute('data-ready', 'error');
    if (e.status === 401 || e.status === 403) return X.askKey(e.message, function () { show(X.readForm()); });
    X.status(e.message);
  }

  function aggregate(extra, signal) { return X.get('/api/v1/' + view.dataset + '/aggregate', assign(X.dataParams(view), extra), { signal: signal || controller.signal }); }

  function drawCounts(fc, iv, span) {
    var buckets = fc.features.map(function (f) { var t = Date.parse(f.properties.bucket); return { t: t, end: bucketEnd(t, iv), count: f.properties.count }; });
    $('counts-caption').textContent = 'Rows per ' + iv + ' (UTC). Drag across the bars to narrow the window to them.';
    X.barChart($('chart'), buckets, span, function (from, to) {
      $('from').value = X.toInput(from);
      $('to').value = X.toInput(to);
      show(X.readForm());
    });
  }

  /** The view's box met with the map's view (when zoomed in), so fine cells stay few. */
  function gridBox() {
    var chosen = X.parseBox(view.bbox), seen = X.zoom() >= 4 ? X.parseBox(X.viewBox()) : null;
    if (!chosen && seen) return seen.join(',');
    // A box across the antimeridian is asked for whole: the meeting of two such is not one box.
    if (!seen || chosen[0] > chosen[2] || seen[0] > seen[2]) return view.bbox || null;
    var b = [Math.max(chosen[0], seen[0]), Math.max(chosen[1], seen[1]), Math.min(chosen[2], seen[2]), Math.min(chosen[3], seen[3])];
    return b[0] <= b[2] && b[1] <= b[3] ? b.join(',') : view.bbox;
  }

  function refreshGrid() {
    if (gridController) gridController.abort();
    gridController = new AbortController();
    var cell = X.cellForZoom(X.zoom());
    var stat = view.colour || 'count';
    var extra = { interval: 'all', groupBy: 'grid', cell: String(cell), bbox: gridBox() };
    if (stat !== 'count') extra.stats = stat;
    return aggregate(extra, gridController.signal).then(function (r) {
      X.drawGrid(r.body, stat);
      var cut = r.body.meta.truncated;
      note(X.counted(r.body.features.length, 'cell', 'cells') + ' of ' + cell + '° coloured by ' + stat + (cut ? ' (cut at the aggregate limit: zoom in or narrow the window)' : '') + '; zoom in for finer cells, click one for its numbers.');
    });
  }

  function drawRows(kind, one) {
    return X.get('/api/v1/' + view.dataset, X.dataParams(view), { signal: controller.signal }).then(function (r) {
      X.drawFeatures(r.body, kind);
      note(X.counted(r.body.features.length, one, kind) + ' drawn; click one for its properties.');
    });
  }

  function drawStations() {
    var p = { simulated: view.simulated, stationId: view.stationId };
    return X.get('/api/v1/sensor-stations', p, { signal: controller.signal }).then(function (r) {
      X.drawFeatures(r.body, 'stations', function (f) {
        $('filter-stationId').value = f.properties.stationId;
        show(X.readForm());
      });
      note(X.counted(r.body.features.length, 'station', 'stations') + '; click one to see its series alone.');
    });
  }

  function drawLayer(d, n) {
    mode = 'none';
    if (d.geometry === 'station') return drawStations();
    if (d.geometry === 'none') return X.clearLayer(), note('');
    // Never more than one response holds: what is drawn is all there is.
    if (n > 0 && n <= Math.min(DRAW_LIMIT, X.config.rowLimit)) return d.geometry === 'wkb' ? drawRows('perimeters', 'perimeter') : drawRows('detections', 'detection');
    if (d.grid) return (mode = 'grid'), refreshGrid();
    X.clearLayer();
    note(n ? X.groups(n) + ' rows are too many to draw: narrow the window or the box to at most ' + X.groups(Math.min(DRAW_LIMIT, X.config.rowLimit)) + '.' : 'Nothing in this view.');
  }

  /** Mean of the chosen quantity per bucket, one line per station or area code; weeks past three months, so a year of every station stays one answer. */
  function drawSeries(d, span) {
    var days = (span.to - span.from) / 86400000, iv = days <= 3 ? 'hour' : days <= 92 ? 'day' : 'week';
    var q = view.quantity || d.measures[0], key = d.keys[0], stat = q + '.mean';
    return aggregate({ interval: iv, groupBy: key, stats: stat }).then(function (r) {
      var by = {};
      r.body.features.forEach(function (f) {
        var name = String(f.properties[key]);
        (by[name] = by[name] || []).push({ t: Date.parse(f.properties.bucket), v: f.properties[stat] });
      });
      var names = Object.keys(by).sort();
      var shown = names.slice(0, SERIES_SHOWN).map(function (n) { return { name: n, points: by[n] }; });
      $('series').hidden = false;
      var next = r.body.meta.next;
      var cut = r.body.meta.truncated ? ' Cut at the aggregate limit' + (next ? ' before ' + next.from : '') + ': narrow the window or filter by ' + key + '.' : '';
      $('series-caption').textContent = 'Mean ' + q + ' per ' + iv + ' and ' + key + (names.length > SERIES_SHOWN ? ': the first ' + SERIES_SHOWN + ' of ' + names.length + ' (filter by ' + key + ' for others)' : '') + '.' + cut;
      var colours = X.lineChart($('series-chart'), shown, span);
      var legend = $('series-legend');
      while (legend.firstChild) legend.removeChild(legend.firstChild);
      shown.forEach(function (s, i) { legend.appendChild(X.el('li', { style: 'color:' + colours[i] }, [s.name])); });
    });
  }

  function show(next) {
    if (controller) controller.abort();
    if (gridController) gridController.abort();
    controller = new AbortController();
    view = next;
    X.writeView(view);
    X.status('');
    X.clearSummary();
    X.showBox(view.bbox);
    document.body.removeAttribute('data-ready');
    var d = X.dataset(view.dataset);
    $('map').hidden = d.geometry === 'none';
    X.resizeMap();
    $('series').hidden = true;
    var span = spanOf(view), iv = intervalFor(span);
    var counted = aggregate({ interval: 'all' }).then(function (r) {
      var n = r.body.features.length ? r.body.features[0].properties.count : 0;
      X.showSummary(view, n, { from: r.headers.get('x-window-from'), to: r.headers.get('x-window-to') });
      return n;
    });
    var charted = aggregate({ interval: iv }).then(function (r) { drawCounts(r.body, iv, span); });
    var mapped = counted.then(function (n) { return drawLayer(d, n); });
    var series = d.geometry === 'station' || d.geometry === 'none' ? drawSeries(d, span) : null;
    var mine = controller;
    Promise.all([counted, charted, mapped, series]).then(function () { if (mine === controller) document.body.setAttribute('data-ready', 'true'); }).catch(fail);
  }

  function onMove() {
    if (!view || mode !== 'grid') return;
    clearTimeout(moved);
    moved = setTimeout(function () { refreshGrid().catch(fail); }, 250);
  }

  var start = X.readView();
  X.fillForm(start);
  X.initMap(onMove);
  X.wireForm(show);
  if (start.bbox) X.fitBox(start.bbox);
  if (X.hasKey()) show(X.readForm());
  else X.askKey(null, function () { show(X.readForm()); });
})();
