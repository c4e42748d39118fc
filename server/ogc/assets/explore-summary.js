// What the view holds: its exact row count, whether one request would be cut at the row limit,
// and the downloads of exactly that window and those filters (fetched with the key, then saved).
(function () {
  'use strict';
  var X = window.Explore;
  var $ = X.byId;
  var FORMATS = {
    csv: { params: { format: 'csv' }, ext: '.csv' },
    geojson: { params: {}, accept: 'application/geo+json', ext: '.geojson' },
    parquet: { params: {}, accept: 'application/vnd.apache.parquet', ext: '.parquet' },
    arrow: { params: {}, accept: 'application/vnd.apache.arrow.stream', ext: '.arrows' },
  };
  /** fire-api extract's option for each query parameter (client/args.ts). */
  var OPTIONS = { country: '--country', model: '--model', level: '--level', series: '--series', stationId: '--station-id', areaCode: '--area-code', correctionModel: '--correction-model' };
  var current = null;

  X.showCount = function (n) {
    $('row-count').textContent = n === null ? '…' : X.groups(n);
    $('row-word').textContent = n === 1 ? 'row' : 'rows';
  };
  function enableDownloads(on) { Object.keys(FORMATS).forEach(function (name) { $('download-' + name).disabled = !on; }); }
  /** A new view is asked for: until its count arrives, nothing can be downloaded (the last view's would be). */
  X.clearSummary = function () {
    current = null;
    enableDownloads(false);
    X.showCount(null);
  };

  function assign(a, b) { var o = {}; [a, b].forEach(function (x) { Object.keys(x).forEach(function (k) { o[k] = x[k]; }); }); return o; }
  function shellQuote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

  /** The command that walks the whole window into one file with a manifest and citation. */
  function extractCommand(view, window) {
    var p = X.dataParams(view);
    // The client sends simulated=false, or no filter with --include-simulated: never simulated=true.
    if (p.simulated === 'true') return 'fire-api extract cannot ask for simulated stations only: use the OGC items URL below.';
    var parts = ['fire-api extract', view.dataset, '--from', window.from, '--to', window.to];
    Object.keys(OPTIONS).forEach(function (k) { if (p[k]) parts.push(OPTIONS[k], shellQuote(p[k])); });
    // One word with its value: a box starting with a minus is not read as an option.
    if (p.bbox) parts.push(shellQuote('--bbox=' + p.bbox));
    // The client asks for simulated=false unless told otherwise.
    if (view.dataset === 'sensor-readings' && p.simulated !== 'false') parts.push('--include-simulated');
    parts.push('--base-url', shellQuote(X.config.base), '--out', view.dataset + '.csv');
    return parts.join(' ');
  }

  /** The instant 1 µs before `to` (the API's echo: whole seconds, or up to six decimals). */
  function lastMicrosecond(to) {
    var m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(to);
    if (!m) return to;
    var micros = Number((m[2] || '').padEnd(6, '0'));
    if (micros > 0) return m[1] + '.' + String(micros - 1).padStart(6, '0') + 'Z';
    return new Date(Date.parse(m[1] + 'Z') - 1000).toISOString().slice(0, 19) + '.999999Z';
  }

  /** The same rows for QGIS: OGC API items, whose datetime end is inclusive (our `to` is not). */
  function ogcUrl(view, window) {
    var p = X.dataParams(view);
    delete p.from;
    delete p.to;
    p.datetime = window.from + '/' + lastMicrosecond(window.to);
    return X.config.base + '/api/v1/ogc/collections/' + view.dataset + '/items?' + X.query(p);
  }

  /** The count and the window the API used (its echo); the downloads and walk follow them. */
  X.showSummary = function (view, n, window) {
    current = view;
    enableDownloads(true);
    X.showCount(n);
    $('window-echo').textContent = 'in [' + window.from + ', ' + window.to + ')';
    var limit = X.config.rowLimit;
    var cut = n > limit;
    $('truncation').textContent = cut ? '— more than ROW_LIMIT (' + X.groups(limit) + '): one request would be truncated, so walk it (below).' : '— one request holds them all (ROW_LIMIT ' + X.groups(limit) + ').';
    $('truncation').className = cut ? 'cut' : '';
    $('download-note').textContent = cut ? 'Each download is one response: at most ' + X.groups(limit) + ' rows, cut on a time boundary; the rest of the view starts at its X-Next-From.' : '';
    $('csv-url').textContent = X.config.base + '/api/v1/' + view.dataset + '?' + X.query(assign(X.dataParams(view), FORMATS.csv.params));
    $('walk').hidden = !cut;
    $('extract-command').textContent = extractCommand(view, window);
    $('ogc-url').textContent = ogcUrl(view, window);
  };

  /** A download needs the key in a header, so not a plain link: fetched, then saved from memory. */
  function download(name) {
    if (!current) return;
    var f = FORMATS[name];
    var button = $('download-' + name);
    button.disabled = true;
    X.status('Downloading ' + name + '…');
    X.get('/api/v1/' + current.dataset, assign(X.dataParams(current), f.params), { accept: f.accept, blob: true })
      .then(function (r) {
        var url = URL.createObjectURL(r.body);
        var a = X.el('a', { href: url, download: current.dataset + f.ext, hidden: '' });
        document.body.appendChild(a);
        a.click();
        document.body.removeChild(a);
        setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
        X.status('');
      })
      .catch(function (e) {
        if (e.status === 401 || e.status === 403) return X.askKey(e.message, function () { download(name); });
        X.status(e.message);
      })
      .then(function () { button.disabled = !current; });
  }
  Object.keys(FORMATS).forEach(function (name) { $('download-' + name).onclick = function () { download(name); }; });
})();
