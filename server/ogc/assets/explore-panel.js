// The explorer's controls and summary: the form (dataset, window, box, the dataset's filters),
// the exact row count, whether one request would be cut, and downloads of exactly that view.
(function () {
  'use strict';
  var X = window.Explore;
  var $ = X.byId;
  var VIEW_ONLY = ['dataset', 'from', 'to', 'colour', 'quantity'];

  function option(value, text, selected) {
    var o = X.el('option', { value: value }, [text]);
    o.selected = selected;
    return o;
  }
  function labelled(text, input, title) { return X.el('label', title ? { title: title } : {}, [text + ' ', input]); }

  /** The dataset's filters (bbox has its own fieldset), then what the map and charts show. */
  function buildFilters(d, view) {
    var box = $('filters');
    Array.prototype.slice.call(box.querySelectorAll('label')).forEach(function (l) { box.removeChild(l); });
    d.filters.forEach(function (f) {
      if (f.name === 'bbox') return;
      var input;
      if (f.enum) {
        input = X.el('select', { id: 'filter-' + f.name, name: f.name }, [option('', f.default === null ? 'any' : 'default (' + f.default + ')', !view[f.name])]);
        f.enum.forEach(function (v) { input.appendChild(option(v, v, view[f.name] === v)); });
      } else input = X.el('input', { id: 'filter-' + f.name, name: f.name, value: view[f.name] || '', size: 12 });
      box.appendChild(labelled(f.name, input, f.description));
    });
    $('area').hidden = !d.filters.some(function (f) { return f.name === 'bbox'; });
    var show = $('layer');
    Array.prototype.slice.call(show.querySelectorAll('label')).forEach(function (l) { show.removeChild(l); });
    var choice = d.grid ? { name: 'colour', text: 'Grid coloured by', values: ['count'].concat(d.measures.map(function (m) { return m + '.sum'; })) } : d.geometry !== 'wkb' ? { name: 'quantity', text: 'Quantity', values: d.measures } : null;
    show.hidden = !choice;
    if (!choice) return;
    var select = X.el('select', { id: choice.name, name: choice.name }, choice.values.map(function (v, i) { return option(v, v, view[choice.name] ? view[choice.name] === v : i === 0); }));
    show.appendChild(labelled(choice.text, select));
  }

  /** What of a shared URL the form cannot hold, so replaced: a dataset, a choice or a time it does not know. */
  function notUnderstood(view, d) {
    var named = function (k) { return k + ' "' + view[k] + '"'; };
    var bad = [];
    if (view.dataset && view.dataset !== d.name) bad.push(named('dataset'));
    ['from', 'to'].forEach(function (k) { if (view[k] && isNaN(X.toMs(view[k]))) bad.push(named(k)); });
    if (view.dataset === d.name) d.filters.forEach(function (f) { if (f.enum && view[f.name] && f.enum.indexOf(view[f.name]) < 0) bad.push(named(f.name)); });
    return bad;
  }

  /** The form from a view (the URL's): a missing window is the last 30 days. */
  X.fillForm = function (view) {
    var select = $('dataset');
    while (select.firstChild) select.removeChild(select.firstChild);
    var d = X.dataset(view.dataset);
    X.config.datasets.forEach(function (x) { select.appendChild(option(x.name, x.title + ' (' + x.name + ')', x.name === d.name)); });
    var to = X.toMs(view.to), from = X.toMs(view.from);
    if (isNaN(to)) to = Math.floor(Date.now() / 60000) * 60000;
    if (isNaN(from)) from = to - 30 * 86400000;
    $('from').value = X.toInput(from);
    $('to').value = X.toInput(to);
    $('bbox').value = view.bbox || '';
    buildFilters(d, view);
    var bad = notUnderstood(view, d);
    $('url-note').textContent = bad.length ? 'Not understood in this URL, so replaced: ' + bad.join(', ') + '.' : '';
  };

  /** The view the form shows: dataset, window, box, filters, what to draw (never the key). */
  X.readForm = function () {
    var view = { dataset: $('dataset').value, from: $('from').value, to: $('to').value };
    if (!$('area').hidden) view.bbox = $('bbox').value.trim();
    Array.prototype.forEach.call(document.querySelectorAll('#filters [name], #layer [name]'), function (i) { view[i.name] = i.value.trim(); });
    return view;
  };

  /** The data endpoint's parameters for a view: its window and filters, nothing of the page's own. */
  X.dataParams = function (view) {
    var p = { from: view.from, to: view.to };
    Object.keys(view).forEach(function (k) { if (VIEW_ONLY.indexOf(k) < 0 && view[k]) p[k] = view[k]; });
    return p;
  };

  X.wireForm = function (change) {
    var onChange = function (view) { $('url-note').textContent = ''; change(view); };
    $('view').onsubmit = function (e) { e.preventDefault(); onChange(X.readForm()); };
    $('dataset').onchange = function () { var v = X.readForm(); buildFilters(X.dataset(v.dataset), {}); onChange(X.readForm()); };
    Array.prototype.forEach.call(document.querySelectorAll('[data-days]'), function (b) {
      b.onclick = function () {
        var to = Math.floor(Date.now() / 60000) * 60000;
        $('to').value = X.toInput(to);
        $('from').value = X.toInput(to - Number(b.getAttribute('data-days')) * 86400000);
        onChange(X.readForm());
      };
    });
    $('use-view').onclick = function () { $('bbox').value = X.viewBox() || ''; onChange(X.readForm()); };
    $('clear-box').onclick = function () { $('bbox').value = ''; onChange(X.readForm()); };
    $('draw-box').onclick = function () {
      $('draw-box').setAttribute('aria-pressed', 'true');
      X.status('Press and drag on the map to draw the box.');
      X.drawBox(function (bbox) {
        $('draw-box').setAttribute('aria-pressed', 'false');
        X.status('');
        $('bbox').value = bbox;
        onChange(X.readForm());
      });
    };
    Array.prototype.forEach.call(document.querySelectorAll('[data-copy]'), function (b) {
      b.onclick = function () { navigator.clipboard.writeText($(b.getAttribute('data-copy')).textContent).then(function () { b.textContent = 'Copied'; }); };
    });
  };
})();
