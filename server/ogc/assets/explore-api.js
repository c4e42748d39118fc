// The explorer's talk with the API: the key typed once per tab (sessionStorage, the same entry
// as the OGC pages, sent as a bearer header, never put in a URL), each refusal put in words, and
// the view kept in the page's own URL so that a shared URL shows the same view.
(function () {
  'use strict';
  var STORE = 'research-read-api-key';
  var body = document.body;
  var X = (window.Explore = {});

  X.config = {
    assets: body.getAttribute('data-assets'),
    // Where the API is: the server's PUBLIC_URL when it has one, else this page's own origin.
    base: body.getAttribute('data-base') || location.origin,
    rowLimit: Number(body.getAttribute('data-row-limit')),
    datasets: JSON.parse(body.getAttribute('data-datasets')),
  };
  X.dataset = function (name) {
    return X.config.datasets.filter(function (d) { return d.name === name; })[0] || X.config.datasets[0];
  };

  X.el = function (tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  };
  X.byId = function (id) { return document.getElementById(id); };
  X.status = function (text) { X.byId('status').textContent = text; };

  /** The view as the page's URL holds it: every parameter but the key, which is never in it. */
  X.readView = function () {
    var view = {};
    new URLSearchParams(location.search).forEach(function (v, k) { if (k !== 'key') view[k] = v; });
    return view;
  };
  X.writeView = function (view) {
    var q = X.query(view);
    history.replaceState(null, '', location.pathname + (q ? '?' + q : ''));
  };
  /** A query string of the non-empty values, in the order given. */
  X.query = function (params) {
    var q = new URLSearchParams();
    Object.keys(params).forEach(function (k) { if (params[k] !== undefined && params[k] !== null && params[k] !== '') q.set(k, params[k]); });
    return q.toString();
  };

  var form = X.byId('key-form');
  /** Shows the key form; `then` runs once a key is stored. */
  X.askKey = function (message, then) {
    X.status(message || 'This service needs a key: type it once for this tab.');
    form.hidden = false;
    X.byId('key').focus();
    form.onsubmit = function (e) {
      e.preventDefault();
      sessionStorage.setItem(STORE, X.byId('key').value.trim());
      form.hidden = true;
      X.status('');
      then();
    };
  };
  X.hasKey = function () { return !!sessionStorage.getItem(STORE); };

  function seconds(headers) {
    var wait = headers.get('retry-after');
    return wait ? ' Try again in ' + wait + ' s.' : '';
  }
  /** What a refusal means, in words: the problem's own detail, and the wait when there is one. */
  function inWords(status, problem, headers) {
    var detail = problem && problem.detail ? ' ' + problem.detail : '';
    if (status === 401) return 'The key was not accepted (401).' + detail;
    if (status === 403) return 'This key may not read this (403).' + detail;
    if (status === 429) return 'Too many requests with this key (429).' + detail + seconds(headers);
    if (status === 503) return 'The data cannot be served just now (503).' + detail + seconds(headers);
    return 'The API answered ' + status + '.' + detail;
  }

  /** GET base + path?params (path from /api/v1) with the key in the Authorization header; resolves { body, headers } (JSON, or a Blob with `blob`). */
  X.get = function (path, params, opts) {
    opts = opts || {};
    var headers = { Authorization: 'Bearer ' + sessionStorage.getItem(STORE) };
    if (opts.accept) headers.Accept = opts.accept;
    var q = X.query(params || {});
    return fetch(X.config.base + path + (q ? '?' + q : ''), { headers: headers, signal: opts.signal }).then(function (r) {
      if (r.ok) return (opts.blob ? r.blob() : r.json()).then(function (b) { return { body: b, headers: r.headers }; });
      return r.json().catch(function () { return null; }).then(function (problem) {
        var e = new Error(inWords(r.status, problem, r.headers));
        e.status = r.status;
        if (r.status === 401 || r.status === 403) sessionStorage.removeItem(STORE);
        throw e;
      });
    });
  };

  /** Times: the API's `YYYY-MM-DD[THH:MM[:SS]]` without an offset is UTC. */
  X.toMs = function (text) {
    if (!text) return NaN;
    var t = /^\d{4}-\d\d-\d\d$/.test(text) ? text + 'T00:00:00' : text;
    return Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(t) ? t : t + 'Z');
  };
  /** The form a datetime-local input and the URL hold: UTC, to the second, no offset. */
  X.toInput = function (ms) { return new Date(ms).toISOString().slice(0, 19); };
  X.groups = function (n) { return Number(n).toLocaleString('en'); };
  /** `3 detections`, `1 detection`. */
  X.counted = function (n, one, many) { return X.groups(n) + ' ' + (n === 1 ? one : many); };
})();
