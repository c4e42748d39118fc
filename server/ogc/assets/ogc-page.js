// The OGC API pages: the JSON of this same URL, fetched with the key typed into this tab (kept in
// sessionStorage, sent as a bearer header, never put in a URL), drawn as links, a map, a table.
(function () {
  'use strict';
  var STORE = 'research-read-api-key';
  var status = document.getElementById('status');
  var content = document.getElementById('content');
  var form = document.getElementById('key-form');
  var assets = document.body.getAttribute('data-assets');
  // Where the API is: the server's PUBLIC_URL when it has one, else this page's own origin.
  var base = document.body.getAttribute('data-base') || location.origin;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function withF(href, f) {
    var u = new URL(href, location.href);
    u.searchParams.set('f', f);
    return u.pathname + u.search;
  }
  function link(l) {
    var json = /json/.test(l.type) && l.rel !== 'service-desc';
    return el('li', {}, [el('a', { href: json ? withF(l.href, 'html') : l.href, rel: l.rel }, [l.title || l.href]), ' (' + l.rel + ')']);
  }
  function links(list) { return el('ul', {}, list.map(link)); }

  function askKey(message) {
    status.textContent = message || 'This service needs a key.';
    form.hidden = false;
    form.onsubmit = function (e) {
      e.preventDefault();
      sessionStorage.setItem(STORE, document.getElementById('key').value.trim());
      form.hidden = true;
      load();
    };
  }

  function load() {
    var key = sessionStorage.getItem(STORE);
    if (!key) return askKey();
    status.textContent = 'Loading…';
    fetch(withF(location.href, 'json'), { headers: { Authorization: 'Bearer ' + key } }).then(function (r) {
      return r.json().then(function (body) {
        if (r.status === 401 || r.status === 403) { sessionStorage.removeItem(STORE); return askKey(body.detail); }
        if (!r.ok) throw new Error(body.detail || 'status ' + r.status);
        status.textContent = '';
        render(body, r.headers);
      });
    }).catch(function (e) { status.textContent = 'Could not load this page: ' + e.message; });
  }

  function render(body, headers) {
    if (body.type === 'FeatureCollection') return renderItems(body, headers);
    if (body.type === 'Feature') {
      content.appendChild(el('h1', {}, [String(body.id)]));
      drawMap({ type: 'FeatureCollection', features: [body] });
      content.appendChild(table([body]));
      return content.appendChild(links(body.links || []));
    }
    if (body.collections) {
      content.appendChild(el('h1', {}, ['Collections']));
      body.collections.forEach(function (c) {
        content.appendChild(el('h2', {}, [el('a', { href: withF(c.links[0].href, 'html') }, [c.title])]));
        content.appendChild(el('p', {}, [c.description]));
      });
      return;
    }
    if (body.extent) return renderCollection(body);
    if (body.conformsTo) return content.appendChild(el('ul', {}, body.conformsTo.map(function (c) { return el('li', {}, [c]); })));
    if (body.links && !body.$schema) {
      content.appendChild(el('h1', {}, [body.title || '']));
      content.appendChild(el('p', {}, [body.description || '']));
      return content.appendChild(links(body.links));
    }
    content.appendChild(el('pre', {}, [JSON.stringify(body, null, 2)]));
  }

  function renderCollection(c) {
    content.appendChild(el('h1', {}, [c.title]));
    content.appendChild(el('p', {}, [c.description]));
    var t = c.extent.temporal;
    if (t) content.appendChild(el('p', {}, ['Time covered: ' + (t.interval[0][0] || '…') + ' to ' + (t.interval[0][1] || '…')]));
    content.appendChild(links(c.links));
  }

  function drawMap(fc) {
    var box = el('div', { id: 'map' });
    content.appendChild(box);
    var map = L.map(box, { worldCopyJump: true }).setView([20, 0], 2);
    fetch(assets + '/world.json').then(function (r) { return r.json(); }).then(function (land) {
      L.geoJSON(land, { interactive: false, style: { color: '#8a8a8a', weight: 1, fillColor: '#e8e4da', fillOpacity: 1 } }).addTo(map).bringToBack();
    });
    var features = L.geoJSON(fc, {
      pointToLayer: function (f, latlng) { return L.circleMarker(latlng, { radius: 4, color: '#b22222', weight: 1, fillOpacity: 0.7 }); },
      style: { color: '#b22222', weight: 1 },
      // A node, not a string: Leaflet would read a string as HTML, and ids are data.
      onEachFeature: function (f, layer) { layer.bindTooltip(el('span', {}, [String(f.id !== undefined ? f.id : '')])); },
    }).addTo(map);
    var drawn = features.getLayers().length;
    if (drawn) map.fitBounds(features.getBounds(), { maxZoom: 9, padding: [20, 20] });
    document.body.setAttribute('data-features-drawn', String(drawn));
  }

  function table(features) {
    var shown = features.slice(0, 20);
    if (!shown.length) return el('p', {}, ['No features in this page.']);
    var names = Object.keys(shown[0].properties || {});
    var head = el('tr', {}, names.map(function (n) { return el('th', {}, [n]); }));
    var rows = shown.map(function (f) { return el('tr', {}, names.map(function (n) { var v = f.properties[n]; return el('td', {}, [v === null ? '' : String(v)]); })); });
    return el('table', {}, [el('thead', {}, [head]), el('tbody', {}, rows)]);
  }

  function downloads(headers) {
    var from = headers.get('x-window-from'), to = headers.get('x-window-to');
    var id = location.pathname.split('/').slice(-2)[0];
    var q = new URL(location.href).searchParams;
    ['f', 'limit', 'cursor', 'datetime'].forEach(function (p) { q.delete(p); });
    if (from) { q.set('from', from); q.set('to', to); }
    var v1 = base + '/api/v1/' + id + '?' + q.toString();
    var auth = 'curl -f -H "Authorization: Bearer $FIRE_API_KEY" ';
    // The base (PUBLIC_URL) may hold any character a path can: quoted for the shell as a whole.
    var quoted = function (s) { return "'" + s.replace(/'/g, "'\\''") + "'"; };
    return el('div', { class: 'downloads' }, [
      el('h2', {}, ['The same window, whole']),
      el('pre', {}, [auth + quoted(v1 + '&format=csv') + ' -o ' + id + '.csv']),
      el('pre', {}, [auth + '-H "Accept: application/vnd.apache.parquet" ' + quoted(v1) + ' -o ' + id + '.parquet']),
      el('p', {}, ['Windows over the row limit come in pages: fire-api extract walks them and writes a citable manifest.']),
    ]);
  }

  function renderItems(fc, headers) {
    var next = fc.links.filter(function (l) { return l.rel === 'next'; })[0];
    var window = headers.get('x-window-from') ? ' from ' + headers.get('x-window-from') + ' to ' + headers.get('x-window-to') : '';
    content.appendChild(el('h1', {}, [location.pathname.split('/').slice(-2)[0]]));
    content.appendChild(el('p', {}, [fc.numberReturned + ' features in this page' + window + '. ', next ? el('a', { href: withF(next.href, 'html'), rel: 'next' }, ['Next page']) : 'Last page.']));
    drawMap(fc);
    content.appendChild(table(fc.features));
    content.appendChild(downloads(headers));
  }

  load();
})();
