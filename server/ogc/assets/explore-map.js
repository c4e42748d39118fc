// The explorer's map: a world outline from this service, the chosen box, and the dataset's layer
// (a grid of aggregate cells, detections, perimeters or stations), each feature clickable.
(function () {
  'use strict';
  var X = window.Explore;
  var map, box = null, layer = null, canvas = null;
  var CELLS = [10, 5, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.01];

  X.initMap = function (onMove) {
    map = L.map('map', { minZoom: 1, worldCopyJump: false }).setView([30, 0], 2);
    // The grid on a canvas (a year's grid holds tens of thousands of cells); rows as SVG, each an element one can click.
    // Its own pane under the rows', so an empty canvas left by a grid never covers them.
    map.createPane('grid').style.zIndex = 350;
    canvas = L.canvas({ pane: 'grid' });
    fetch(X.config.assets + '/world.json').then(function (r) { return r.json(); }).then(function (land) {
      L.geoJSON(land, { interactive: false, style: { color: '#8a8a8a', weight: 1, fillColor: '#e8e4da', fillOpacity: 1 } }).addTo(map).bringToBack();
    });
    map.on('moveend', onMove);
  };
  X.zoom = function () { return map.getZoom(); };
  X.resizeMap = function () { map.invalidateSize(); };

  /** The grid's cell for the zoom: about 16 screen pixels, from the sizes the aggregate offers. */
  X.cellForZoom = function (zoom) {
    var target = 16 / Math.pow(2, zoom);
    return CELLS.reduce(function (best, c) { return Math.abs(Math.log(c / target)) < Math.abs(Math.log(best / target)) ? c : best; });
  };

  var round = function (v) { return String(Math.round(v * 100) / 100); };
  /**
   * Longitudes west..east seen on any copy of the world, as the API takes them: within ±180, west
   * above east across the antimeridian; null when they span the whole world.
   */
  function lonRange(west, east) {
    if (east - west >= 360) return null;
    var w = ((west + 180) % 360 + 360) % 360 - 180, e = w + (east - west);
    return [w, e > 180 ? e - 360 : e];
  }
  function boxText(west, south, east, north) {
    var lon = lonRange(west, east) || [-180, 180];
    return [lon[0], Math.max(-90, south), lon[1], Math.min(90, north)].map(round).join(',');
  }
  /** The map's view as a bbox, inside the world; null when it shows the whole world. */
  X.viewBox = function () {
    var b = map.getBounds();
    return lonRange(b.getWest(), b.getEast()) ? boxText(b.getWest(), b.getSouth(), b.getEast(), b.getNorth()) : null;
  };
  X.parseBox = function (text) {
    var v = (text || '').split(',').map(Number);
    return v.length === 4 && v.every(isFinite) ? v : null;
  };

  X.showBox = function (text) {
    if (box) map.removeLayer(box);
    box = null;
    var v = X.parseBox(text);
    if (!v || v[0] > v[2]) return;
    box = L.rectangle([[v[1], v[0]], [v[3], v[2]]], { color: '#333', weight: 2, dashArray: '6 4', fill: false, interactive: false }).addTo(map);
  };
  X.fitBox = function (text) {
    var v = X.parseBox(text);
    if (v && v[0] <= v[2]) map.fitBounds([[v[1], v[0]], [v[3], v[2]]], { maxZoom: 10 });
  };

  /** Press, drag, release on the map: the box, as minLon,minLat,maxLon,maxLat. */
  X.drawBox = function (onDone) {
    map.dragging.disable();
    map.getContainer().style.cursor = 'crosshair';
    var start = null, rect = null;
    function down(e) { start = e.latlng; }
    function move(e) {
      if (!start) return;
      if (rect) map.removeLayer(rect);
      rect = L.rectangle([start, e.latlng], { color: '#333', weight: 1, interactive: false }).addTo(map);
    }
    function up(e) {
      if (!start) return;
      var a = start, b = e.latlng;
      if (rect) map.removeLayer(rect);
      map.off('mousedown', down).off('mousemove', move).off('mouseup', up);
      map.dragging.enable();
      map.getContainer().style.cursor = '';
      onDone(boxText(Math.min(a.lng, b.lng), Math.min(a.lat, b.lat), Math.max(a.lng, b.lng), Math.max(a.lat, b.lat)));
    }
    map.on('mousedown', down).on('mousemove', move).on('mouseup', up);
  };

  /** Properties as a table node: Leaflet would read a string as HTML, and values are data. */
  function popup(props) {
    var rows = Object.keys(props).map(function (k) {
      var v = props[k];
      return X.el('tr', {}, [X.el('th', {}, [k]), X.el('td', {}, [v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)])]);
    });
    return X.el('table', { class: 'props' }, [X.el('tbody', {}, rows)]);
  }

  function colour(t) {
    var a = [255, 224, 138], b = [127, 0, 0];
    return 'rgb(' + a.map(function (x, i) { return Math.round(x + (b[i] - x) * t); }).join(',') + ')';
  }

  /** Replaces the dataset's layer; `drawn` is recorded on the page for whoever checks it. */
  function setLayer(next, kind, drawn) {
    if (layer) map.removeLayer(layer);
    layer = next ? next.addTo(map) : null;
    document.body.setAttribute('data-layer', kind);
    document.body.setAttribute('data-drawn', String(drawn));
  }
  X.clearLayer = function () { setLayer(null, 'none', 0); };

  /** Aggregate cells coloured by `stat` on a log scale from the smallest to the largest. */
  X.drawGrid = function (fc, stat) {
    var values = fc.features.map(function (f) { return f.properties[stat] || 0; });
    var max = Math.max.apply(null, values.concat([1]));
    var grid = L.geoJSON(fc, {
      renderer: canvas,
      style: function (f) { return { stroke: false, fillOpacity: 0.75, fillColor: colour(Math.log1p(Math.max(0, f.properties[stat] || 0)) / Math.log1p(max)) }; },
      onEachFeature: function (f, l) { l.bindPopup(popup(f.properties)); },
    });
    setLayer(grid, 'grid', fc.features.length);
  };

  /** Rows with their geometry (detections, perimeters, stations), each opening its properties. */
  X.drawFeatures = function (fc, kind, onPick) {
    var features = L.geoJSON(fc, {
      pointToLayer: function (f, latlng) { return L.circleMarker(latlng, { radius: 5, color: '#7f0000', weight: 1, fillColor: '#e34a33', fillOpacity: 0.8 }); },
      style: function (f) { return f.geometry && f.geometry.type !== 'Point' ? { color: '#b22222', weight: 2, fillOpacity: 0.3 } : {}; },
      onEachFeature: function (f, l) {
        l.bindPopup(popup(f.properties));
        if (onPick) l.on('click', function () { onPick(f); });
      },
    });
    setLayer(features, kind, fc.features.length);
    // To the rows drawn: a perimeter or a few detections are specks on the world.
    if (fc.features.length) map.fitBounds(features.getBounds(), { maxZoom: 8, padding: [24, 24] });
  };
})();
