/* mfu-report --html: draws the report from the data mfu-report put in the
 * page (the script element #mfu-data: the analyses' rows as JSON, see
 * src/report/html.c). Plain DOM and inline SVG, no library, no request.
 * Numbers are printed as the table format prints them (src/report/format.c:
 * the column's header carries the unit), and an unknown value is a gap or
 * a dash, never 0. This file never holds a less-than sign followed by a
 * slash: it sits inside a script element. */
(function () {
  'use strict';

  var SVGNS = 'http://www.w3.org/2000/svg';
  var D = null;          /* the data */
  var failures = [];     /* what failed to draw, for the page and for tests */

  /* ---- small helpers ---- */

  function attrs(e, a) {
    if (a) {
      for (var k in a) {
        if (Object.prototype.hasOwnProperty.call(a, k) && a[k] !== undefined && a[k] !== null)
          e.setAttribute(k, a[k]);
      }
    }
    return e;
  }
  /* an HTML element; text is always text, never markup */
  function h(tag, a, parent, text) {
    var e = attrs(document.createElement(tag), a);
    if (text !== undefined && text !== null)
      e.textContent = text;
    if (parent)
      parent.appendChild(e);
    return e;
  }
  // The hover tip of a chart over time, at x (in the chart's W units,
  // margins M): lines is [[title], [label, value, source, color], ...].
  function showTip(tipDiv, lines, svg, wrap, x, W, M) {
    while (tipDiv.firstChild)
      tipDiv.removeChild(tipDiv.firstChild);
    lines.forEach(function (l, k) {
      var line = h('div', null, tipDiv);
      if (k === 0) {
        h('b', null, line, l[0]);
        return;
      }
      if (l[3])
        h('span', { 'class': 'swatch', style: 'background:' + l[3] }, line);
      line.appendChild(document.createTextNode(l[0] + ': '));
      h('b', null, line, l[1]);
      if (l[2])
        h('span', { 'class': 'src' }, line, '  ' + l[2]);
    });
    tipDiv.style.display = 'block';
    var rect = svg.getBoundingClientRect(), scale = rect.width / W;
    var left = x * scale + 14, top = svg.offsetTop + M.t * scale + 4;
    if (left + tipDiv.offsetWidth > wrap.clientWidth)
      left = Math.max(0, x * scale - tipDiv.offsetWidth - 14);
    tipDiv.style.left = left + 'px';
    tipDiv.style.top = top + 'px';
  }
  // Pan and zoom of a chart over time: the wheel and + and - zoom (about
  // the pointer for the wheel), a drag or the arrow keys pan, a double click,
  // 0 or Home show it all. c: get() [v0, v1] and set(a, b) the view shown,
  // full() the whole extent, view(a, b) and zoom(f, x) as the chart does
  // them, at(evt) the data x under the pointer, per() data units per pixel,
  // hover(evt) and unhover() its tip.
  function panZoom(svg, bIn, bOut, bAll, c) {
    var drag = null;
    function all() { var f = c.full(); c.view(f[0], f[1]); }
    svg.addEventListener('mousemove', function (evt) { if (!drag) c.hover(evt); });
    svg.addEventListener('mouseleave', function () { if (!drag) c.unhover(); });
    svg.addEventListener('wheel', function (evt) {
      evt.preventDefault();
      c.zoom(evt.deltaY < 0 ? 1 / 1.35 : 1.35, c.at(evt));
    }, { passive: false });
    svg.addEventListener('mousedown', function (evt) {
      if (evt.button !== 0) return;
      evt.preventDefault();
      var v = c.get();
      drag = { x: evt.clientX, a: v[0], b: v[1], per: c.per() };
      c.unhover();
    });
    window.addEventListener('mousemove', function (evt) {
      if (!drag) return;
      var f = c.full(), span = drag.b - drag.a;
      var a = clamp(drag.a - (evt.clientX - drag.x) * drag.per, f[0], f[1] - span);
      c.set(a, a + span);
    });
    window.addEventListener('mouseup', function () { drag = null; });
    svg.addEventListener('dblclick', all);
    svg.addEventListener('keydown', function (evt) {
      var v = c.get(), span = v[1] - v[0], k = evt.key;
      if (k === '+' || k === '=') c.zoom(1 / 1.5);
      else if (k === '-' || k === '_') c.zoom(1.5);
      else if (k === 'ArrowLeft') c.view(v[0] - span * 0.1, v[1] - span * 0.1);
      else if (k === 'ArrowRight') c.view(v[0] + span * 0.1, v[1] + span * 0.1);
      else if (k === '0' || k === 'Home') all();
      else return;
      evt.preventDefault();
    });
    bIn.addEventListener('click', function () { c.zoom(1 / 1.5); });
    bOut.addEventListener('click', function () { c.zoom(1.5); });
    bAll.addEventListener('click', all);
  }
  function sv(tag, a, parent, text) {
    var e = attrs(document.createElementNS(SVGNS, tag), a);
    if (text !== undefined && text !== null)
      e.textContent = text;
    if (parent)
      parent.appendChild(e);
    return e;
  }
  function tip(e, text) { sv('title', null, e, text); return e; }
  /* control characters and the bidirectional controls shown as escapes,
   * as the table format shows them (\n, \t, \x1b, \u202e) */
  function vis(v) {
    return String(v).replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      var k = c.charCodeAt(0);
      if (c === '\n') return '\\n';
      if (c === '\t') return '\\t';
      if (c === '\r') return '\\r';
      return k < 0x100 ? '\\x' + ('0' + k.toString(16)).slice(-2) : '\\u' + ('000' + k.toString(16)).slice(-4);
    });
  }
  function known(v) { return v !== null && v !== undefined && !(typeof v === 'number' && !isFinite(v)); }
  function num(v) { return known(v) && typeof v === 'number'; }
  function r2(v) { return Math.round(v * 100) / 100; }
  function clamp(v, lo, hi) { return v < lo ? lo : v > hi ? hi : v; }

  /* A section as {cols: {name: {label, style, i}}, rows: [{name: value}]} */
  function section(name) {
    var s = (D.sections && D.sections[name]) || (name === 'run' ? D.run : null);
    var out = { cols: {}, order: [], rows: [] };
    if (!s)
      return out;
    s.columns.forEach(function (c, i) {
      out.cols[c[0]] = { name: c[0], label: c[1], style: c[2], i: i };
      out.order.push(c[0]);
    });
    s.rows.forEach(function (r) {
      var o = {};
      s.columns.forEach(function (c, i) { o[c[0]] = r[i]; });
      out.rows.push(o);
    });
    return out;
  }

  /* ---- numbers as the table format prints them ---- */

  function fixed(v, d) {
    var s = (Math.round(Math.abs(v) * Math.pow(10, d)) / Math.pow(10, d)).toFixed(d);
    return (v < 0 && Number(s) !== 0 ? '-' : '') + s;
  }
  /* engineering notation with 3 significant digits: 1.23 G */
  function eng(v) {
    var pre = ['', ' k', ' M', ' G', ' T', ' P', ' E'], a = Math.abs(v), p = 0;
    if (!isFinite(v))
      return String(v);
    if (a < 1000)
      return a === Math.floor(a) ? v.toFixed(0) : String(Number(v.toPrecision(3)));
    while (a >= 999.5 && p < 6) {
      a /= 1000;
      p++;
    }
    return fixed(v < 0 ? -a : a, a < 9.995 ? 2 : a < 99.95 ? 1 : 0) + pre[p];
  }
  function fmt(v, style) {
    if (!known(v))
      return null;
    if (typeof v !== 'number')
      return vis(v);
    switch (style) {
    case 'ms': return fixed(v, 3);
    case 'pct': return fixed(v * 100, 2);
    case 'util': return fixed(v * 100, 2) + (v > 1 ? '!' : '');
    case 'ratio': return fixed(v, 2);
    case 'eng': return eng(v);
    default:
      return v === Math.floor(v) && Math.abs(v) < 9e15 ? v.toFixed(0) : String(Number(v.toPrecision(6)));
    }
  }
  /* the unit a column's header ends with */
  function unitOf(col) {
    if (!col)
      return '';
    if (col.style === 'ms') return 'ms';
    if (col.style === 'pct' || col.style === 'util') return '%';
    var m = /(FLOP\/s|bytes\/s|ops\/s|FLOP\/B|FLOP|bytes|ops)$/.exec(col.label);
    return m ? (m[1] === 'FLOP/B' ? 'FLOP/byte' : m[1]) : '';
  }
  /* "12.34 %", "1.23 G FLOP/s"; null when unknown */
  function withUnit(v, col) {
    var t = fmt(v, col ? col.style : 'auto'), u = unitOf(col);
    if (t === null)
      return null;
    return u ? t + (u === '%' ? ' ' : ' ') + u : t;
  }
  var UNKNOWN_TIP = 'unknown: not declared, not counted, or no peak (see the notes)';
  function dash(parent, why) {
    return h('span', { 'class': 'unknown', title: why || UNKNOWN_TIP }, parent, '\u2013');
  }
  /* a table cell's content: the number, a flagged one (above 100%), or a dash */
  function cell(td, v, col) {
    var t = fmt(v, col ? col.style : 'auto');
    if (t === null) {
      dash(td);
      return;
    }
    if (col && col.style === 'util' && v > 1)
      h('span', { 'class': 'flagged', title: 'above 100%: impossible (see the notes)' }, td, t);
    else
      td.textContent = t;
  }

  /* ---- tables ---- */

  function isNumCol(sec, name) {
    var c = sec.cols[name];
    if (!c || c.style === 'text')
      return false;
    for (var i = 0; i < sec.rows.length; i++) {
      var v = sec.rows[i][name];
      if (known(v))
        return typeof v === 'number';
    }
    return c.style !== 'auto';
  }
  /* A table of @names of section @sec (every column without @names). */
  function table(parent, sec, names, opts) {
    opts = opts || {};
    names = (names || sec.order).filter(function (n) { return sec.cols[n]; });
    var wrap = h('div', { 'class': 'tablewrap' }, parent);
    var t = h('table', { 'class': opts.cls || null }, wrap);
    var tr = h('tr', null, h('thead', null, t));
    var numeric = {};
    names.forEach(function (n) {
      numeric[n] = isNumCol(sec, n);
      h('th', { 'class': numeric[n] ? 'num' : null, title: n }, tr, sec.cols[n].label);
    });
    var tb = h('tbody', null, t);
    sec.rows.forEach(function (r) {
      if (opts.filter && !opts.filter(r))
        return;
      var row = h('tr', null, tb);
      names.forEach(function (n) {
        var td = h('td', { 'class': numeric[n] ? 'num' : (opts.textClass && opts.textClass[n]) || 'text' }, row);
        if (opts.render && opts.render[n])
          opts.render[n](td, r[n], r);
        else
          cell(td, r[n], sec.cols[n]);
      });
    });
    return t;
  }
  /* field/value list: rows [label, value text or node] */
  function kvTable(parent, rows) {
    var t = h('table', { 'class': 'kv' }, h('div', { 'class': 'tablewrap' }, parent));
    var tb = h('tbody', null, t);
    rows.forEach(function (r) {
      var tr = h('tr', null, tb);
      h('th', { scope: 'row' }, tr, r[0]);
      var td = h('td', null, tr);
      if (r[1] === null || r[1] === undefined)
        dash(td, r[2]);
      else if (typeof r[1] === 'object')
        td.appendChild(r[1]);
      else
        td.textContent = r[1];
    });
    return t;
  }

  /* ---- the page's sections ---- */

  function heading(id, title, intro) {
    var s = document.getElementById(id);
    h('h2', null, s, title);
    if (intro)
      h('p', { 'class': 'how' }, s, intro);
    return s;
  }
  function verdict(parent, text) {
    if (text)
      h('p', { 'class': 'verdict' }, parent, text);
  }
  function guarded(id, fn) {
    try {
      fn();
    } catch (e) {
      failures.push(id + ': ' + (e && e.message ? e.message : String(e)));
      var s = document.getElementById(id) || document.body;
      h('p', { 'class': 'chart-error' }, s, 'This part of the report could not be drawn: ' +
        (e && e.message ? e.message : String(e)));
    }
  }

  function summaryRow() {
    var s = section('summary');
    return { sec: s, r: s.rows[0] || {} };
  }
  function peakWord(src) {
    if (!src)
      return 'no peak';
    var m = /^(\w+)/.exec(src);
    return m ? m[1] : src;
  }
  function flopUnit() {
    var r = section('run').rows[0] || {};
    return r.dtype === 'int8' ? 'ops/s' : 'FLOP/s';
  }

  function shellWord(w) {
    return /^[A-Za-z0-9_.,:\/=+@%-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'";
  }
  function commandLine(json) {
    try {
      var a = JSON.parse(json);
      if (Array.isArray(a))
        return a.map(function (w) { return shellWord(String(w)); }).join(' ');
    } catch (e) { /* not an argv: show it as it is */ }
    return json;
  }

  /* Overview: what ran, and the key figures with their units and sources. */
  function drawOverview() {
    var run = section('run').rows[0] || {};
    var S = summaryRow(), s = S.r, c = S.sec.cols;
    var sec = document.getElementById('overview');
    var sub = document.querySelector('header.page .subtitle');
    if (run.command) {
      document.title = 'mfu report: ' + commandLine(run.command);
      sub.textContent = commandLine(run.command);
    }
    var meta = [];
    if (run.host) meta.push(run.host);
    if (run.cpu_name) meta.push(run.cpu_name);
    if (known(run.start_unix_ns)) meta.push(new Date(run.start_unix_ns / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
    meta.push('database ' + D.db);
    if (D.skip_steps > 0) meta.push('--skip-steps ' + D.skip_steps + ': the first ' + D.skip_steps + ' complete steps are left out everywhere');
    if (D.quiet) meta.push('--quiet: notes on counters this machine cannot open are left out');
    h('p', { 'class': 'muted' }, sec, meta.join(' \u00b7 '));

    var cards = h('div', { 'class': 'cards' }, sec);
    function card(key, name, source, title) {
      var col = c[name], v = s[name];
      var d = h('div', { 'class': 'card' + (col && col.style === 'util' && v > 1 ? ' flag' : ''), title: title || null }, cards);
      h('div', { 'class': 'k' }, d, key);
      var vd = h('div', { 'class': 'v' }, d);
      var t = col ? fmt(v, col.style) : null;
      if (t === null)
        dash(vd);
      else {
        vd.appendChild(document.createTextNode(t));
        var u = unitOf(col);
        if (u)
          h('span', { 'class': 'u' }, vd, u);
      }
      if (source)
        h('div', { 'class': 's' }, d, source);
    }
    var fsrc = s.flops_source ? s.flops_source + ' FLOPs' : 'no FLOPs';
    card('MFU', 'mfu', fsrc + ' / (wall \u00d7 peak, ' + peakWord(s.peak_source) + ')',
      'model FLOPs / (step wall time x peak FLOP/s), over the complete steps');
    card('HFU', 'hfu', 'counted FLOPs / (wall \u00d7 peak, ' + peakWord(s.peak_source) + ')',
      'FLOPs counted by the PMU / (wall x peak FLOP/s)');
    card('MBU', 'mbu', 'declared bytes / (wall \u00d7 peak, ' + peakWord(s.peak_bw_source) + ')',
      'model bytes / (wall x peak bytes/s)');
    card('end-to-end MFU', 'e2e_mfu', 'gaps between steps included');
    card('run MFU', 'run_mfu', 'library FLOPs / (run wall \u00d7 peak, ' + peakWord(s.peak_source) + ')',
      'the whole run, steps or none: the FLOPs of its library calls / (exec to end x peak FLOP/s)');
    card('busy MFU', 'busy_mfu', 'library FLOPs / (CPU time \u00d7 peak per CPU)',
      'the whole run over the CPU time it used: library FLOPs / (task-clock x peak FLOP/s / CPUs)');
    card('library FLOP', 'run_lib_flops', known(s.run_lib_calls) ? s.run_lib_calls + ' calls, whole run' +
      (num(s.lib_in_steps) ? ', ' + fmt(s.lib_in_steps, 'pct') + ' % in steps' : '') : 'not counted');
    card('steps', 'steps', known(s.incomplete_steps) && s.incomplete_steps > 0 ? s.incomplete_steps + ' incomplete left out' : 'complete steps');
    card('mean step', 'mean_step_ms', known(s.p50_step_ms) ? 'p50 ' + fmt(s.p50_step_ms, 'ms') + ' ms, p95 ' + fmt(s.p95_step_ms, 'ms') + ' ms' : 'no step time known');
    card('achieved', 'model_flops_per_s', 'MFU numerator over the steps\u2019 wall time');
    card('CPU utilization', 'cpu_util', 'CPU time of all threads / (wall \u00d7 ' + (fmt(s.ncpu, 'auto') || '?') + ' CPUs)');
    card('peak FLOP/s', 'peak_flops', (s.dtype || '') + ', ' + (s.peak_source || 'unknown'));
    card('peak bytes/s', 'peak_bw', s.peak_bw_source || 'unknown');
  }

  /* The notes: every caveat, the alerts first in colour. */
  function drawNotes() {
    var sec = heading('notes', 'Notes', 'What to know before reading the numbers: missing counters, the peaks used and their sources, ' +
      'steps without declared FLOPs, lost records, anomalies, warm-up, impossible values (the notes analysis).');
    var n = section('notes');
    if (!n.rows.length) {
      h('p', { 'class': 'muted' }, sec, 'No notes.');
      return;
    }
    var ul = h('ul', { 'class': 'notes' }, sec);
    n.rows.forEach(function (r) {
      var cls = r.alert ? 'alert' : r.missing ? 'missing' : null;
      var li = h('li', { 'class': cls }, ul);
      h('span', { 'class': 'badge' + (cls ? ' ' + cls : ''), title: r.alert ? 'a number shown cannot be right' : r.missing ? 'explains values that are unknown' : null }, li, r.kind);
      li.appendChild(document.createTextNode(vis(r.text)));
    });
  }

  /* ---- axes ---- */

  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), e = raw / p;
    return p * (e >= 7.5 ? 10 : e >= 3.5 ? 5 : e >= 1.5 ? 2 : 1);
  }
  /* At most 100 ticks: an edited database's values can make the step 0,
   * or too small to move v (1e20 + 1 == 1e20), and the loop endless. */
  function ticks(lo, hi, n) {
    var step = niceStep(hi - lo, n), out = [];
    for (var v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9 && out.length < 100; v += step)
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return { ticks: out, step: step };
  }
  function tickText(v, step) {
    var d = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    return v.toFixed(Math.min(d, 9));
  }

  /* ---- MFU, HFU and MBU per step ---- */

  var SERIES = [
    { key: 'mfu', label: 'MFU', color: '#0072B2', on: true,
      how: 'FLOPs / (wall \u00d7 peak FLOP/s)' },
    { key: 'hfu', label: 'HFU', color: '#D55E00', on: true,
      how: 'counted FLOPs / (wall \u00d7 peak FLOP/s)' },
    { key: 'mbu', label: 'MBU', color: '#009E73', on: true,
      how: 'declared bytes / (wall \u00d7 peak bytes/s)' },
    { key: 'cpu_util', label: 'CPU util', color: '#7f7f7f', on: false,
      how: 'CPU time / (wall \u00d7 CPUs)' }
  ];

  function lowerBound(a, x, n) {
    var lo = 0, hi = n;
    while (lo < hi) {
      var m = (lo + hi) >> 1;
      if (a[m] < x) lo = m + 1; else hi = m;
    }
    return lo;
  }

  function drawSeries() {
    var sec = heading('series', 'MFU, HFU and MBU per step',
      'One point per complete step (the steps analysis): utilization in % of the run\u2019s peaks, at the step\u2019s begin. ' +
      'Scroll or press + and \u2212 to zoom, drag or use the arrow keys to pan, double-click or 0 to see the whole run. ' +
      'With more steps than pixels, each pixel column draws the first, lowest, highest and last value of its steps; ' +
      'hover shows one step\u2019s exact values. An unknown value is a gap.');
    var st = D.steps, n = st.rows.length;
    var ci = {};
    st.columns.forEach(function (c, i) { ci[c[0]] = i; });
    var colOf = {};
    st.columns.forEach(function (c) { colOf[c[0]] = { name: c[0], label: c[1], style: c[2] }; });
    var step = new Float64Array(n), t = new Float64Array(n), wall = new Float64Array(n), src = new Int16Array(n);
    var val = {};
    SERIES.forEach(function (s) { val[s.key] = new Float64Array(n); });
    for (var i = 0; i < n; i++) {
      var r = st.rows[i];
      step[i] = r[ci.step];
      t[i] = num(r[ci.begin_ms]) ? r[ci.begin_ms] / 1000 : NaN;
      wall[i] = num(r[ci.wall_ms]) ? r[ci.wall_ms] : NaN;
      var fs = r[ci.flops_source];
      src[i] = typeof fs === 'number' ? fs : -1;
      SERIES.forEach(function (s) {
        var v = r[ci[s.key]];
        val[s.key][i] = num(v) ? v : NaN;
      });
    }
    var texts = (st.texts && st.texts.flops_source) || [];
    var present = {};
    SERIES.forEach(function (s) {
      var a = val[s.key], c = 0;
      for (var i = 0; i < n; i++)
        if (a[i] === a[i]) c++;
      present[s.key] = c;
    });
    var S = summaryRow().r;

    var wrap = h('div', { 'class': 'chart', id: 'series-chart' }, sec);
    if (n === 0) {
      h('p', { 'class': 'muted' }, wrap, 'No complete step' + (D.skip_steps ? ' after --skip-steps ' + D.skip_steps : '') +
        ': nothing to draw (the notes say why).');
      wrap.setAttribute('data-steps', '0');
      return;
    }
    var controls = h('div', { 'class': 'controls' }, wrap, null);
    var xsel = h('select', { 'aria-label': 'x axis' }, h('label', { 'class': 'noprint' }, controls, 'x axis: '));
    h('option', { value: 'time' }, xsel, 'time since start (s)');
    h('option', { value: 'step' }, xsel, 'step number');
    var bIn = h('button', { type: 'button', title: 'zoom in (+)' }, controls, '+');
    var bOut = h('button', { type: 'button', title: 'zoom out (\u2212)' }, controls, '\u2212');
    var bAll = h('button', { type: 'button', title: 'the whole run (0)' }, controls, 'whole run');
    var legend = h('div', { 'class': 'legend' }, controls);
    SERIES.forEach(function (s) {
      var lab = h('label', { title: s.how }, legend);
      var cb = h('input', { type: 'checkbox' }, lab);
      cb.checked = s.on && present[s.key] > 0;
      cb.addEventListener('change', function () { s.on = cb.checked; redraw(); });
      h('span', { 'class': 'swatch', style: 'background:' + s.color }, lab);
      lab.appendChild(document.createTextNode(s.label + (present[s.key] ? '' : ' (unknown in every step)')));
      s.on = cb.checked;
    });
    var range = h('div', { 'class': 'range' }, wrap);
    var svg = sv('svg', { role: 'img', tabindex: '0', 'aria-label': 'MFU, HFU and MBU per step', 'data-steps': String(n) }, wrap);
    var tipDiv = h('div', { 'class': 'tooltip' }, wrap);

    var mode = 'time', xs = t, v0 = 0, v1 = 1, full0 = 0, full1 = 1;
    var W = 1000, H = 340, M = { l: 62, r: 18, t: 14, b: 46 };
    function extent() {
      xs = mode === 'time' ? t : step;
      full0 = xs[0];
      full1 = xs[n - 1];
      if (!(full1 > full0)) {
        full0 -= 0.5;
        full1 += 0.5;
      }
      var pad = (full1 - full0) * 0.01;
      full0 -= pad;
      full1 += pad;
      v0 = full0;
      v1 = full1;
    }
    function minSpan() { return Math.max((full1 - full0) / 1e6, (full1 - full0) / n * 4); }
    function setView(a, b) {
      var span = b - a, fs = full1 - full0;
      span = clamp(span, minSpan(), fs);
      if (a < full0) a = full0;
      if (a + span > full1) a = full1 - span;
      v0 = a;
      v1 = a + span;
      redraw();
    }
    function zoom(f, at) {
      if (at === undefined)
        at = (v0 + v1) / 2;
      setView(at - (at - v0) * f, at + (v1 - at) * f);
    }

    var pw, ph, yMax, hoverI = -1;
    function X(x) { return M.l + (x - v0) / (v1 - v0) * pw; }
    function Y(y) { return M.t + ph - y / yMax * ph; }

    function redraw() {
      W = Math.max(640, Math.round(wrap.clientWidth || 1000));
      pw = W - M.l - M.r;
      ph = H - M.t - M.b;
      while (svg.firstChild)
        svg.removeChild(svg.firstChild);
      attrs(svg, { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H });
      var i0 = Math.max(0, lowerBound(xs, v0, n) - 1), i1 = Math.min(n, lowerBound(xs, v1, n) + 1);
      var shown = SERIES.filter(function (s) { return s.on; });
      yMax = 0;
      shown.forEach(function (s) {
        var a = val[s.key];
        for (var i = i0; i < i1; i++)
          if (a[i] > yMax) yMax = a[i];
      });
      yMax = yMax > 0 ? yMax * 1.08 : 0.01;
      var yt = ticks(0, yMax * 100, 6);
      yMax = Math.max(yMax, yt.ticks[yt.ticks.length - 1] / 100);
      yt = ticks(0, yMax * 100, 6);
      var clipId = 'series-clip';
      sv('rect', { x: M.l, y: M.t, width: pw, height: ph }, sv('clipPath', { id: clipId }, sv('defs', null, svg)));
      var grid = sv('g', { 'class': 'grid' }, svg), axis = sv('g', { 'class': 'axis' }, svg);
      yt.ticks.forEach(function (v) {
        var y = Y(v / 100);
        sv('line', { x1: M.l, x2: M.l + pw, y1: y, y2: y }, grid);
        sv('text', { x: M.l - 6, y: y + 4, 'text-anchor': 'end' }, axis, tickText(v, yt.step));
      });
      var xt = ticks(v0, v1, Math.max(3, Math.floor(pw / 110)));
      xt.ticks.forEach(function (v) {
        var x = X(v);
        if (x < M.l - 0.5 || x > M.l + pw + 0.5) return;
        sv('line', { x1: x, x2: x, y1: M.t, y2: M.t + ph }, grid);
        sv('text', { x: x, y: M.t + ph + 16, 'text-anchor': 'middle' }, axis, tickText(v, xt.step));
      });
      sv('line', { x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph }, axis);
      sv('line', { x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph }, axis);
      sv('text', { 'class': 'axislabel', x: M.l + pw / 2, y: H - 8, 'text-anchor': 'middle' }, svg,
        mode === 'time' ? 'time since the target started (s), at each step\u2019s begin' : 'step number');
      sv('text', { 'class': 'axislabel', transform: 'translate(14,' + (M.t + ph / 2) + ') rotate(-90)', 'text-anchor': 'middle' }, svg,
        'utilization (% of peak)');
      if (yMax >= 1) {
        var y100 = Y(1);
        sv('line', { x1: M.l, x2: M.l + pw, y1: y100, y2: y100, stroke: '#b42318', 'stroke-dasharray': '5 4' }, svg);
        sv('text', { x: M.l + pw - 4, y: y100 - 4, 'text-anchor': 'end', fill: '#b42318' }, svg, '100%: above it is impossible (see the notes)');
      }
      var plot = sv('g', { 'clip-path': 'url(#' + clipId + ')' }, svg);
      var count = 0;
      for (var k = i0; k < i1; k++)
        if (xs[k] >= v0 && xs[k] <= v1) count++;
      var perStep = (i1 - i0) <= pw / 3;
      svg.setAttribute('data-drawn', perStep ? 'points' : 'buckets');
      shown.forEach(function (s) {
        var a = val[s.key], d = '', pen = false;
        if (perStep) {
          var g = sv('g', { 'class': 'series series-' + s.key }, plot);
          for (var i = i0; i < i1; i++) {
            if (a[i] !== a[i] || xs[i] !== xs[i]) {
              pen = false;
              continue;
            }
            d += (pen ? 'L' : 'M') + r2(X(xs[i])) + ',' + r2(Y(a[i]));
            pen = true;
          }
          sv('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': 1.5 }, g);
          for (var j = i0; j < i1; j++) {
            if (a[j] !== a[j] || xs[j] !== xs[j])
              continue;
            sv('circle', { 'class': 'pt pt-' + s.key, cx: r2(X(xs[j])), cy: r2(Y(a[j])), r: 2.6, fill: s.color }, g);
          }
          return;
        }
        /* min/max per pixel column: first, lowest, highest, last (M4) */
        var col = -1, first = 0, lo = 0, hi = 0, last = 0, has = false, gap = true;
        function flush() {
          if (!has) return;
          var x = r2(M.l + col + 0.5);
          d += (gap ? 'M' : 'L') + x + ',' + r2(Y(first)) + 'L' + x + ',' + r2(Y(lo)) + 'L' + x + ',' + r2(Y(hi)) + 'L' + x + ',' + r2(Y(last));
          gap = false;
          has = false;
        }
        for (var q = i0; q < i1; q++) {
          var x = xs[q];
          if (x !== x) continue;
          var c = Math.floor((x - v0) / (v1 - v0) * pw);
          if (c !== col) {
            flush();
            col = c;
          }
          var y = a[q];
          if (y !== y) {
            flush();
            gap = true;
            continue;
          }
          if (!has) {
            first = lo = hi = y;
            has = true;
          }
          if (y < lo) lo = y;
          if (y > hi) hi = y;
          last = y;
        }
        flush();
        sv('path', { 'class': 'series series-' + s.key, d: d, fill: 'none', stroke: s.color, 'stroke-width': 1.2, 'stroke-linejoin': 'round' }, plot);
      });
      if (!shown.length || shown.every(function (s) { return !present[s.key]; }))
        sv('text', { 'class': 'nodata', x: M.l + pw / 2, y: M.t + ph / 2, 'text-anchor': 'middle' }, svg,
          'No utilization is known for any step: no declared or library FLOPs, no FLOP counters, or no peak (see the notes).');
      var cross = sv('line', { y1: M.t, y2: M.t + ph, stroke: '#57606a', 'stroke-width': 1, visibility: 'hidden' }, svg);
      var marks = sv('g', null, svg);
      var overlay = sv('rect', { x: M.l, y: M.t, width: pw, height: ph, fill: 'transparent', 'class': 'overlay' }, svg);
      overlay.style.cursor = 'crosshair';
      svg._cross = cross;
      svg._marks = marks;
      var first = i0 < n ? Math.max(i0, lowerBound(xs, v0, n)) : 0, lastI = Math.min(n, lowerBound(xs, v1 + 1e-12 * Math.abs(v1), n)) - 1;
      range.textContent = count === n ? 'the whole run: ' + n + ' step' + (n === 1 ? '' : 's') + ' (' + (perStep ? 'one point each' : 'min/max per pixel column') + ')'
        : 'steps ' + (first < n ? step[first] : '?') + '\u2013' + (lastI >= 0 ? step[lastI] : '?') + ' shown: ' + count + ' of ' + n +
          ' (' + (perStep ? 'one point each' : 'min/max per pixel column') + ')';
      if (hoverI >= 0)
        showHover(hoverI);
    }

    function stepLines(i) {
      var lines = [];
      lines.push(['step ' + step[i], '']);
      lines.push(['begins', num(t[i]) ? fixed(t[i], 6) + ' s after the start' : '\u2013']);
      lines.push(['wall', fmt(wall[i], 'ms') + ' ms']);
      SERIES.forEach(function (s) {
        var v = val[s.key][i], how = s.how;
        if (s.key === 'mfu') {
          var w = src[i] >= 0 ? texts[src[i]] : null;
          how = (w ? w + ' FLOPs' : 'FLOPs') + ' / (wall \u00d7 peak, ' + peakWord(S.peak_source) + ')';
        } else if (s.key === 'hfu')
          how = 'counted FLOPs / (wall \u00d7 peak, ' + peakWord(S.peak_source) + ')';
        else if (s.key === 'mbu')
          how = 'declared bytes / (wall \u00d7 peak bytes/s, ' + peakWord(S.peak_bw_source) + ')';
        lines.push([s.label, v === v ? fmt(v, 'util') + ' %' : 'unknown', how, s.color]);
      });
      return lines;
    }
    function showHover(i) {
      hoverI = i;
      var x = X(xs[i]);
      if (x < M.l || x > M.l + pw) {
        hideHover();
        return;
      }
      attrs(svg._cross, { x1: x, x2: x, visibility: 'visible' });
      var marks = svg._marks;
      while (marks.firstChild)
        marks.removeChild(marks.firstChild);
      SERIES.forEach(function (s) {
        var v = val[s.key][i];
        if (s.on && v === v)
          sv('circle', { cx: x, cy: Y(v), r: 4.5, fill: 'none', stroke: s.color, 'stroke-width': 2 }, marks);
      });
      showTip(tipDiv, stepLines(i), svg, wrap, x, W, M);
    }
    function hideHover() {
      hoverI = -1;
      tipDiv.style.display = 'none';
      if (svg._cross)
        svg._cross.setAttribute('visibility', 'hidden');
      if (svg._marks)
        while (svg._marks.firstChild)
          svg._marks.removeChild(svg._marks.firstChild);
    }
    function dataX(evt) {
      var rect = svg.getBoundingClientRect();
      var px = (evt.clientX - rect.left) * W / rect.width;
      return v0 + (px - M.l) / pw * (v1 - v0);
    }
    function nearest(x) {
      var k = lowerBound(xs, x, n);
      if (k >= n) return n - 1;
      if (k > 0 && x - xs[k - 1] < xs[k] - x) return k - 1;
      return k;
    }

    panZoom(svg, bIn, bOut, bAll, {
      get: function () { return [v0, v1]; },
      set: function (a, b) { v0 = a; v1 = b; redraw(); },
      full: function () { return [full0, full1]; },
      view: setView, zoom: zoom, at: dataX,
      per: function () { return (v1 - v0) / (pw * svg.getBoundingClientRect().width / W); },
      hover: function (evt) { showHover(nearest(dataX(evt))); }, unhover: hideHover
    });
    xsel.addEventListener('change', function () {
      mode = xsel.value;
      extent();
      hideHover();
      redraw();
    });
    var pending = 0;
    window.addEventListener('resize', function () {
      if (pending) return;
      pending = requestAnimationFrame(function () { pending = 0; redraw(); });
    });
    var anyTime = false;
    for (var q = 0; q < n; q++)
      if (t[q] === t[q]) { anyTime = true; break; }
    if (!anyTime) {
      mode = 'step';
      xsel.value = 'step';
    }
    extent();
    redraw();
  }

  /* ---- MFU over time: the intervals ---- */

  var TSERIES = [
    { key: 'mfu', label: 'MFU', color: '#0072B2', on: true,
      how: 'library FLOPs / (interval \u00d7 peak FLOP/s)' },
    { key: 'cpu_util', label: 'CPU util', color: '#7f7f7f', on: false,
      how: 'CPU time / (interval \u00d7 CPUs)' }
  ];

  /* One value per interval of the recorder's readings (the intervals
   * analysis, every -I ms), drawn as a step line: each interval holds its
   * value from its start to its end. With more intervals than pixel
   * columns, a column draws the time-weighted mean of its intervals (the
   * MFU of that stretch of time: their FLOPs over their time) and a band
   * from the lowest to the highest. */
  function drawTimeline() {
    var sec = heading('timeline', 'MFU over time',
      'The whole run, steps or none (the intervals analysis: the recorder reads the library calls of every process and the ' +
      'counters every -I ms): the MFU of each interval from the FLOPs of its library calls (BLAS, oneDNN), in % of the peak. ' +
      'Scroll or press + and \u2212 to zoom, drag or use the arrow keys to pan, double-click or 0 to see the whole run. With ' +
      'more intervals than pixels, each pixel column draws the mean over its time and a band from the lowest to the highest ' +
      'interval. An unknown value is a gap.');
    var iv = D.intervals || { columns: [], rows: [] }, n = iv.rows.length;
    var ci = {};
    iv.columns.forEach(function (c, i) { ci[c[0]] = i; });
    var S = summaryRow().r;
    var wrap = h('div', { 'class': 'chart', id: 'timeline-chart' }, sec);
    wrap.setAttribute('data-intervals', String(n));
    if (n === 0) {
      h('p', { 'class': 'muted' }, wrap, 'No interval reading: the recorder read no counters over time (mfu-record -I 0' +
        (D.skip_steps ? ', or --skip-steps ' + D.skip_steps + ' left out every step' : '') + ').');
      return;
    }
    var t1 = new Float64Array(n), t0 = new Float64Array(n), val = {};
    var fps = new Float64Array(n), lf = new Float64Array(n), calls = new Float64Array(n);
    TSERIES.forEach(function (s) { val[s.key] = new Float64Array(n); });
    function get(r, k) { var v = ci[k] === undefined ? null : r[ci[k]]; return num(v) ? v : NaN; }
    for (var i = 0; i < n; i++) {
      var r = iv.rows[i];
      t1[i] = get(r, 't_ms') / 1000;
      t0[i] = t1[i] - get(r, 'interval_ms') / 1000;
      fps[i] = get(r, 'lib_flops_per_s');
      lf[i] = get(r, 'lib_flops');
      calls[i] = get(r, 'lib_calls');
      TSERIES.forEach(function (s) { val[s.key][i] = get(r, s.key); });
    }
    var present = {};
    TSERIES.forEach(function (s) {
      var a = val[s.key], c = 0;
      for (var i = 0; i < n; i++)
        if (a[i] === a[i]) c++;
      present[s.key] = c;
    });
    if (!present.mfu)
      TSERIES[1].on = true;
    var controls = h('div', { 'class': 'controls' }, wrap, null);
    var bIn = h('button', { type: 'button', title: 'zoom in (+)' }, controls, '+');
    var bOut = h('button', { type: 'button', title: 'zoom out (\u2212)' }, controls, '\u2212');
    var bAll = h('button', { type: 'button', title: 'the whole run (0)' }, controls, 'whole run');
    var legend = h('div', { 'class': 'legend' }, controls);
    TSERIES.forEach(function (s) {
      var lab = h('label', { title: s.how }, legend);
      var cb = h('input', { type: 'checkbox' }, lab);
      cb.checked = s.on && present[s.key] > 0;
      cb.addEventListener('change', function () { s.on = cb.checked; redraw(); });
      h('span', { 'class': 'swatch', style: 'background:' + s.color }, lab);
      lab.appendChild(document.createTextNode(s.label + (present[s.key] ? '' : ' (unknown in every interval)')));
      s.on = cb.checked;
    });
    var range = h('div', { 'class': 'range' }, wrap);
    var svg = sv('svg', { role: 'img', tabindex: '0', 'aria-label': 'MFU over time', 'data-intervals': String(n) }, wrap);
    var tipDiv = h('div', { 'class': 'tooltip' }, wrap);

    var full0 = t0[0] === t0[0] ? Math.min(t0[0], t1[0]) : t1[0], full1 = t1[n - 1];
    if (!(full1 > full0)) {
      full0 -= 0.5;
      full1 += 0.5;
    }
    var v0 = full0, v1 = full1;
    var W = 1000, H = 300, M = { l: 62, r: 18, t: 14, b: 46 }, pw, ph, yMax, hoverI = -1;
    function X(x) { return M.l + (x - v0) / (v1 - v0) * pw; }
    function Y(y) { return M.t + ph - y / yMax * ph; }
    function setView(a, b) {
      var span = clamp(b - a, Math.max((full1 - full0) / 1e6, (full1 - full0) / n * 4), full1 - full0);
      if (a < full0) a = full0;
      if (a + span > full1) a = full1 - span;
      v0 = a;
      v1 = a + span;
      redraw();
    }
    function zoom(f, at) {
      if (at === undefined)
        at = (v0 + v1) / 2;
      setView(at - (at - v0) * f, at + (v1 - at) * f);
    }
    function redraw() {
      W = Math.max(640, Math.round(wrap.clientWidth || 1000));
      pw = W - M.l - M.r;
      ph = H - M.t - M.b;
      while (svg.firstChild)
        svg.removeChild(svg.firstChild);
      attrs(svg, { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H });
      /* the intervals that overlap the view */
      var i0 = Math.max(0, lowerBound(t1, v0, n)), i1 = Math.min(n, lowerBound(t1, v1, n) + 1);
      var shown = TSERIES.filter(function (s) { return s.on; });
      yMax = 0;
      shown.forEach(function (s) {
        var a = val[s.key];
        for (var i = i0; i < i1; i++)
          if (a[i] > yMax) yMax = a[i];
      });
      if (num(S.run_mfu) && S.run_mfu > yMax && TSERIES[0].on) yMax = S.run_mfu;
      yMax = yMax > 0 ? yMax * 1.08 : 0.01;
      var yt = ticks(0, yMax * 100, 6);
      yMax = Math.max(yMax, yt.ticks[yt.ticks.length - 1] / 100);
      yt = ticks(0, yMax * 100, 6);
      sv('rect', { x: M.l, y: M.t, width: pw, height: ph }, sv('clipPath', { id: 'timeline-clip' }, sv('defs', null, svg)));
      var grid = sv('g', { 'class': 'grid' }, svg), axis = sv('g', { 'class': 'axis' }, svg);
      yt.ticks.forEach(function (v) {
        var y = Y(v / 100);
        sv('line', { x1: M.l, x2: M.l + pw, y1: y, y2: y }, grid);
        sv('text', { x: M.l - 6, y: y + 4, 'text-anchor': 'end' }, axis, tickText(v, yt.step));
      });
      var xt = ticks(v0, v1, Math.max(3, Math.floor(pw / 110)));
      xt.ticks.forEach(function (v) {
        var x = X(v);
        if (x < M.l - 0.5 || x > M.l + pw + 0.5) return;
        sv('line', { x1: x, x2: x, y1: M.t, y2: M.t + ph }, grid);
        sv('text', { x: x, y: M.t + ph + 16, 'text-anchor': 'middle' }, axis, tickText(v, xt.step));
      });
      sv('line', { x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph }, axis);
      sv('line', { x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph }, axis);
      sv('text', { 'class': 'axislabel', x: M.l + pw / 2, y: H - 8, 'text-anchor': 'middle' }, svg,
        'time since the target started (s)');
      sv('text', { 'class': 'axislabel', transform: 'translate(14,' + (M.t + ph / 2) + ') rotate(-90)', 'text-anchor': 'middle' }, svg,
        'utilization (% of peak)');
      if (yMax >= 1) {
        var y100 = Y(1);
        sv('line', { x1: M.l, x2: M.l + pw, y1: y100, y2: y100, stroke: '#b42318', 'stroke-dasharray': '5 4' }, svg);
        sv('text', { x: M.l + pw - 4, y: y100 - 4, 'text-anchor': 'end', fill: '#b42318' }, svg, '100%: above it is impossible (see the notes)');
      }
      var plot = sv('g', { 'clip-path': 'url(#timeline-clip)' }, svg);
      var perInterval = (i1 - i0) <= pw / 2;
      svg.setAttribute('data-drawn', perInterval ? 'intervals' : 'buckets');
      shown.forEach(function (s) {
        var a = val[s.key], d = '', band = '', pen = false;
        if (perInterval) {
          for (var i = i0; i < i1; i++) {
            if (a[i] !== a[i] || t0[i] !== t0[i]) {
              pen = false;
              continue;
            }
            var y = r2(Y(a[i]));
            d += (pen ? 'L' : 'M') + r2(X(t0[i])) + ',' + y + 'L' + r2(X(t1[i])) + ',' + y;
            pen = true;
          }
          sv('path', { 'class': 'series tseries-' + s.key, d: d, fill: 'none', stroke: s.color, 'stroke-width': 1.5 }, plot);
          return;
        }
        /* per pixel column: the time-weighted mean, and the range */
        var col = -1, sw = 0, st = 0, lo = 0, hi = 0, has = false, gap = true, lows = [], highs = [];
        function flush() {
          if (!has) return;
          var x = r2(M.l + col + 0.5), y = r2(Y(sw / st));
          d += (gap ? 'M' : 'L') + x + ',' + y;
          lows.push([x, r2(Y(lo))]);
          highs.push([x, r2(Y(hi))]);
          gap = false;
          has = false;
        }
        function flushBand() {
          if (lows.length) {
            band += 'M' + highs.map(function (p) { return p[0] + ',' + p[1]; }).join('L') +
              'L' + lows.reverse().map(function (p) { return p[0] + ',' + p[1]; }).join('L') + 'Z';
          }
          lows = [];
          highs = [];
        }
        for (var q = i0; q < i1; q++) {
          var c = Math.floor((t1[q] - v0) / (v1 - v0) * pw), y = a[q], dt = t1[q] - t0[q];
          if (c !== col) {
            flush();
            col = c;
            sw = st = 0;
          }
          if (y !== y || !(dt > 0)) {
            flush();
            flushBand();
            gap = true;
            sw = st = 0;
            continue;
          }
          if (!has) {
            lo = hi = y;
            has = true;
          }
          sw += y * dt;
          st += dt;
          if (y < lo) lo = y;
          if (y > hi) hi = y;
        }
        flush();
        flushBand();
        sv('path', { 'class': 'band tband-' + s.key, d: band, fill: s.color, 'fill-opacity': 0.18, stroke: 'none' }, plot);
        sv('path', { 'class': 'series tseries-' + s.key, d: d, fill: 'none', stroke: s.color, 'stroke-width': 1.2, 'stroke-linejoin': 'round' }, plot);
      });
      if (TSERIES[0].on && num(S.run_mfu)) {
        var yr = Y(S.run_mfu);
        sv('line', { 'class': 'runmfu', x1: M.l, x2: M.l + pw, y1: yr, y2: yr, stroke: '#0072B2', 'stroke-dasharray': '2 3' }, svg);
        sv('text', { x: M.l + 4, y: yr - 4, fill: '#0072B2' }, svg, 'run MFU ' + fmt(S.run_mfu, 'util') + ' %');
      }
      if (!shown.length || shown.every(function (s) { return !present[s.key]; }))
        sv('text', { 'class': 'nodata', x: M.l + pw / 2, y: M.t + ph / 2, 'text-anchor': 'middle' }, svg,
          'No MFU is known for any interval: library calls not counted, none made, or no peak (see the notes).');
      var cross = sv('line', { y1: M.t, y2: M.t + ph, stroke: '#57606a', 'stroke-width': 1, visibility: 'hidden' }, svg);
      var overlay = sv('rect', { x: M.l, y: M.t, width: pw, height: ph, fill: 'transparent', 'class': 'overlay' }, svg);
      overlay.style.cursor = 'crosshair';
      svg._cross = cross;
      var count = i1 - i0;
      range.textContent = (count >= n ? 'the whole run: ' : count + ' of ') + n + ' interval' + (n === 1 ? '' : 's') +
        ' (' + (perInterval ? 'one step each' : 'mean and range per pixel column') + ')';
      if (hoverI >= 0)
        showHover(hoverI);
    }
    function lines(i) {
      var out = [['interval ' + fixed(t0[i], 3) + '\u2013' + fixed(t1[i], 3) + ' s', '']];
      out.push(['length', fmt((t1[i] - t0[i]) * 1000, 'ms') + ' ms']);
      out.push(['MFU', val.mfu[i] === val.mfu[i] ? fmt(val.mfu[i], 'util') + ' %' : 'unknown',
        'library FLOPs / (interval \u00d7 peak, ' + peakWord(S.peak_source) + ')', TSERIES[0].color]);
      out.push(['library FLOP/s', fps[i] === fps[i] ? eng(fps[i]) + ' ' + flopUnit() : 'unknown']);
      out.push(['library FLOPs', lf[i] === lf[i] ? eng(lf[i]) + ' in ' + calls[i] + ' call' + (calls[i] === 1 ? '' : 's') : 'unknown']);
      out.push(['CPU util', val.cpu_util[i] === val.cpu_util[i] ? fmt(val.cpu_util[i], 'util') + ' %' : 'unknown',
        'CPU time / (interval \u00d7 CPUs)', TSERIES[1].color]);
      return out;
    }
    function showHover(i) {
      hoverI = i;
      var x = X(t1[i]);
      if (x < M.l - 1 || x > M.l + pw + 1) {
        hideHover();
        return;
      }
      attrs(svg._cross, { x1: x, x2: x, visibility: 'visible' });
      showTip(tipDiv, lines(i), svg, wrap, x, W, M);
    }
    function hideHover() {
      hoverI = -1;
      tipDiv.style.display = 'none';
      if (svg._cross)
        svg._cross.setAttribute('visibility', 'hidden');
    }
    function dataX(evt) {
      var rect = svg.getBoundingClientRect();
      return v0 + ((evt.clientX - rect.left) * W / rect.width - M.l) / pw * (v1 - v0);
    }
    /* the interval that holds time x (the first that ends at or after it) */
    function at(x) {
      var k = lowerBound(t1, x, n);
      return k >= n ? n - 1 : k;
    }
    panZoom(svg, bIn, bOut, bAll, {
      get: function () { return [v0, v1]; },
      set: function (a, b) { v0 = a; v1 = b; redraw(); },
      full: function () { return [full0, full1]; },
      view: setView, zoom: zoom, at: dataX,
      per: function () { return (v1 - v0) / (pw * svg.getBoundingClientRect().width / W); },
      hover: function (evt) { showHover(at(dataX(evt))); }, unhover: hideHover
    });
    var pending = 0;
    window.addEventListener('resize', function () {
      if (pending) return;
      pending = requestAnimationFrame(function () { pending = 0; redraw(); });
    });
    redraw();
  }

  /* ---- step time per phase ---- */

  var PARTS = [
    { key: 'blocked_ms', label: 'blocked', color: '#9aa4ae', how: 'off-CPU, waiting (context switches, exact)' },
    { key: 'runnable_ms', label: 'runnable', color: '#E69F00', how: 'off-CPU, preempted (context switches, exact)' },
    { key: 'kernel_ms', label: 'kernel', color: '#CC79A7', how: 'on-CPU in the kernel (cpu-clock samples)' },
    { key: 'sync_ms', label: 'sync', color: '#F0E442', how: 'waiting for other threads on a CPU (samples)' },
    { key: 'dispatch_ms', label: 'dispatch', color: '#D55E00', how: 'interpreters, framework layers, allocators, copies (samples)' },
    { key: 'unclassified_ms', label: 'unclassified', color: '#56B4E9', how: 'the program\u2019s own code, not a known kernel (samples)' },
    { key: 'compute_ms', label: 'compute', color: '#009E73', how: 'compute kernels (samples)' }
  ];

  function hatch(defs, id) {
    var p = sv('pattern', { id: id, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    sv('rect', { width: 6, height: 6, fill: '#ffffff' }, p);
    sv('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#a8b0b8', 'stroke-width': 3 }, p);
    return 'url(#' + id + ')';
  }
  function legendOf(parent, items) {
    var lg = h('div', { 'class': 'legend' }, parent);
    items.forEach(function (it) {
      var l = h('span', { title: it.how || null }, lg);
      h('span', { 'class': 'swatch' + (it.hatch ? ' hatch' : ''), style: it.hatch ? null : 'background:' + it.color }, l);
      l.appendChild(document.createTextNode(it.label));
    });
  }

  function drawPhases() {
    var sec = heading('phases', 'Step time by phase',
      'Where the wall time of the steps and of each phase went (the breakdown and phase_breakdown analyses), in ms summed over the ' +
      'complete occurrences, for the thread that ran each: off-CPU time from context switches (exact), the on-CPU rest split by the ' +
      'code classes of cpu-clock samples. A part that no sample places is hatched (not split), never 0.');
    verdict(sec, D.verdicts && D.verdicts.breakdown);
    var pb = section('phase_breakdown'), ph = section('phases'), bs = D.breakdown_steps || { steps: 0, sum: {}, known: {} };
    var byName = {};
    pb.rows.forEach(function (r) { byName[r.phase] = r; });
    var bars = [];
    if (bs.steps > 0 && num(bs.sum.wall_ms))
      bars.push({ name: 'all steps', cls: 'bar bar-steps', count: bs.steps, wall: bs.sum.wall_ms, parts: bs.sum,
        samples: bs.sum.samples, what: 'steps (driver thread)' });
    ph.rows.forEach(function (r) {
      var b = byName[r.phase];
      bars.push({ name: r.phase, cls: 'bar bar-phase', count: b ? b.count : r.count, wall: b ? b.wall_ms : r.total_ms,
        parts: b || {}, samples: b ? b.samples : null, what: 'phase' });
    });
    var wrap = h('div', { 'class': 'chart', id: 'phases-chart', 'data-phases': String(ph.rows.length) }, sec);
    if (!bars.length) {
      h('p', { 'class': 'muted' }, wrap, 'No complete step and no phase: nothing to draw.');
      return;
    }
    legendOf(wrap, PARTS.concat([{ label: 'not split (no samples)', hatch: true, how: 'wall time no sample places' }]));
    var labelW = 0;
    bars.forEach(function (b) { labelW = Math.max(labelW, Math.min(String(b.name).length, 28)); });
    var W = 1000, rowH = 26, M = { l: Math.max(90, labelW * 7 + 16), r: 210, t: 8, b: 40 };
    var H = M.t + M.b + bars.length * rowH, pw = W - M.l - M.r;
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'step time by phase' }, wrap);
    var fillHatch = hatch(sv('defs', null, svg), 'hatch-phases');
    var max = 0;
    bars.forEach(function (b) { if (num(b.wall) && b.wall > max) max = b.wall; });
    if (!(max > 0)) max = 1;
    var xt = ticks(0, max, 8);
    var xMax = Math.max(max, xt.ticks[xt.ticks.length - 1]);
    function X(v) { return M.l + v / xMax * pw; }
    var grid = sv('g', { 'class': 'grid' }, svg), axis = sv('g', { 'class': 'axis' }, svg);
    xt.ticks.forEach(function (v) {
      sv('line', { x1: X(v), x2: X(v), y1: M.t, y2: H - M.b }, grid);
      sv('text', { x: X(v), y: H - M.b + 15, 'text-anchor': 'middle' }, axis, tickText(v, xt.step));
    });
    sv('line', { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b }, axis);
    sv('text', { 'class': 'axislabel', x: M.l + pw / 2, y: H - 8, 'text-anchor': 'middle' }, svg, 'wall time (ms, summed over the occurrences)');
    bars.forEach(function (b, k) {
      var y = M.t + k * rowH + 4, bh = rowH - 8;
      var g = sv('g', { 'class': b.cls, 'data-name': b.name }, svg);
      var name = vis(b.name);
      var lt = sv('text', { x: M.l - 6, y: y + bh / 2 + 4, 'text-anchor': 'end' }, g, name.length > 28 ? name.slice(0, 27) + '\u2026' : name);
      tip(lt, name);
      if (!num(b.wall)) {
        sv('text', { x: M.l + 4, y: y + bh / 2 + 4, 'class': 'nodata' }, g, 'wall time unknown');
        return;
      }
      var x = 0, sum = 0;
      PARTS.forEach(function (p) {
        var v = b.parts[p.key];
        if (!num(v) || v <= 0) return;
        var seg = sv('rect', { x: r2(X(x)), y: y, width: Math.max(0.5, r2(X(x + v) - X(x))), height: bh, fill: p.color, 'class': 'seg seg-' + p.label }, g);
        tip(seg, name + ': ' + p.label + ' ' + fmt(v, 'ms') + ' ms (' + fixed(v / b.wall * 100, 1) + ' % of ' + fmt(b.wall, 'ms') + ' ms); ' + p.how);
        x += v;
        sum += v;
      });
      var rest = b.wall - sum;
      if (rest > b.wall * 1e-6) {
        var seg = sv('rect', { x: r2(X(x)), y: y, width: Math.max(0.5, r2(X(x + rest) - X(x))), height: bh, fill: fillHatch, stroke: '#a8b0b8', 'stroke-width': 0.5, 'class': 'seg seg-unknown' }, g);
        tip(seg, name + ': ' + fmt(rest, 'ms') + ' ms not split: ' + (num(b.samples) && b.samples > 0 ? 'steps or occurrences without a sample' : 'no cpu-clock sample in it (sampling off, or too short)'));
      }
      var note = fmt(b.wall, 'ms') + ' ms \u00b7 ' + b.count + (b.what === 'phase' ? ' occ.' : ' steps');
      sv('text', { x: X(b.wall) + 6, y: y + bh / 2 + 4, 'class': 'axis' }, g, note);
    });

    h('h3', null, sec, 'Phases');
    if (!ph.rows.length) {
      h('p', { 'class': 'muted' }, sec, 'No phase was marked (mfu_phase_begin / mfu.phase).');
      return;
    }
    table(sec, ph, ['phase', 'count', 'total_ms', 'mean_ms', 'p50_ms', 'p95_ms', 'share', 'union_ms', 'mfu', 'hfu', 'mbu',
      'flops_source', 'model_flops_per_s', 'model_bytes_per_s', 'cpu_ms']);
  }

  /* ---- waterfall: from the peak to MFU ---- */

  function drawWaterfall() {
    var sec = heading('waterfall', 'From peak to MFU (waterfall)',
      'All complete steps together (the waterfall analysis): the CPU capacity (wall \u00d7 CPUs) minus what was idle, then the CPU time ' +
      'split by the code classes of samples, leaves the compute share; the compute kernels\u2019 efficiency (FLOPs / (compute CPU-seconds ' +
      '\u00d7 per-core peak)) takes it down to MFU = compute share \u00d7 efficiency. Shares are % of the capacity.');
    verdict(sec, D.verdicts && D.verdicts.waterfall);
    var wf = section('waterfall'), r = wf.rows[0];
    var wrap = h('div', { 'class': 'chart', id: 'waterfall-chart' }, sec);
    if (!r || r.step !== null) {
      h('p', { 'class': 'muted' }, wrap, 'No complete step: no waterfall.');
      return;
    }
    var cap = r.capacity_ms;
    var bars = [{ label: 'capacity', kind: 'total', v: 1, how: fmt(cap, 'ms') + ' ms = wall \u00d7 CPUs' }];
    [['idle', 'off-CPU: no thread used it (exact CPU time)'], ['sync', 'spinning while waiting for threads (samples)'],
      ['kernel', 'in the kernel (samples)'], ['dispatch', 'runtime layers (samples)'],
      ['unclassified', 'the program\u2019s own code (samples)']].forEach(function (p) {
      bars.push({ label: p[0], kind: 'loss', v: r[p[0]], how: p[1] });
    });
    bars.push({ label: 'compute', kind: 'total', v: r.compute, how: 'compute kernels (samples; 95% interval ' +
      (num(r.compute_lo) ? fixed(r.compute_lo * 100, 2) + '\u2013' + fixed(r.compute_hi * 100, 2) + ' %' : 'unknown') + ')',
      lo: r.compute_lo, hi: r.compute_hi });
    var eff = r.compute_efficiency;
    bars.push({ label: 'efficiency', kind: 'eff', v: num(r.compute) && num(eff) ? r.compute * (1 - eff) : null,
      how: 'compute-kernel efficiency ' + (num(eff) ? fmt(eff, 'util') + ' %' : 'unknown (no sample in a compute kernel, no FLOPs or no peak)') });
    bars.push({ label: 'MFU', kind: 'total', v: r.mfu, how: 'FLOPs / (wall \u00d7 peak)' });

    var W = 1000, H = 370, M = { l: 56, r: 16, t: 26, b: 52 }, pw = W - M.l - M.r, ph = H - M.t - M.b;
    var top = 1;
    var level = 1;
    bars.forEach(function (b) {
      if (b.kind === 'loss' && num(b.v)) level -= b.v;
      if (num(b.v) && b.v > top) top = b.v;
      if (b.kind === 'loss' && level > top) top = level;
    });
    var yt = ticks(0, top * 100, 5), yMax = Math.max(top, yt.ticks[yt.ticks.length - 1] / 100);
    function Y(v) { return M.t + ph - v / yMax * ph; }
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'waterfall from peak to MFU' }, wrap);
    var fillHatch = hatch(sv('defs', null, svg), 'hatch-waterfall');
    var grid = sv('g', { 'class': 'grid' }, svg), axis = sv('g', { 'class': 'axis' }, svg);
    yt.ticks.forEach(function (v) {
      sv('line', { x1: M.l, x2: M.l + pw, y1: Y(v / 100), y2: Y(v / 100) }, grid);
      sv('text', { x: M.l - 6, y: Y(v / 100) + 4, 'text-anchor': 'end' }, axis, tickText(v, yt.step));
    });
    sv('line', { x1: M.l, x2: M.l + pw, y1: Y(0), y2: Y(0) }, axis);
    sv('text', { 'class': 'axislabel', transform: 'translate(14,' + (M.t + ph / 2) + ') rotate(-90)', 'text-anchor': 'middle' }, svg, '% of the CPU capacity');
    var slot = pw / bars.length, bw = slot * 0.62;
    var colors = { capacity: '#8fb8de', idle: '#9aa4ae', sync: '#F0E442', kernel: '#CC79A7', dispatch: '#D55E00',
      unclassified: '#56B4E9', compute: '#009E73', efficiency: '#b8c4cf', MFU: '#0072B2' };
    level = 1;
    var prevTop = null;
    bars.forEach(function (b, k) {
      var x = M.l + k * slot + (slot - bw) / 2, g = sv('g', { 'class': 'wf wf-' + b.label }, svg), y0, y1, text;
      sv('text', { x: x + bw / 2, y: H - M.b + 16, 'text-anchor': 'middle' }, g, b.label);
      if (b.label === 'capacity')
        sv('text', { x: x + bw / 2, y: H - M.b + 30, 'text-anchor': 'middle', 'class': 'axis' }, g, fmt(cap, 'ms') + ' ms');
      if (b.kind === 'loss') {
        if (!num(b.v) || !num(level)) {
          /* the first unknown part holds all that is left unsplit; the
           * ones after it are unknown too, with no bar */
          if (num(level)) {
            var rr = sv('rect', { x: x, y: Y(level), width: bw, height: Math.max(1, Y(0) - Y(level)), fill: fillHatch, stroke: '#a8b0b8', 'stroke-width': 0.5 }, g);
            tip(rr, fixed(level * 100, 2) + ' % of the capacity is CPU time that no sample splits (no samples): ' + b.label + ' and what follows are unknown');
            sv('text', { x: x + bw / 2, y: Y(level) - 6, 'text-anchor': 'middle', 'class': 'unknown' }, g, fixed(level * 100, 2) + ' % not split');
          } else
            tip(sv('text', { x: x + bw / 2, y: Y(0) - 8, 'text-anchor': 'middle', 'class': 'unknown' }, g, 'unknown'), b.label + ': unknown (no samples)');
          level = NaN;
          prevTop = null;
          return;
        }
        y0 = level;
        y1 = level - b.v;
        level = y1;
        text = '\u2212' + fixed(b.v * 100, 2) + ' %';
      } else if (b.kind === 'eff') {
        if (!num(b.v)) {
          sv('text', { x: x + bw / 2, y: Y(0) - 8, 'text-anchor': 'middle', 'class': 'unknown' }, g, 'unknown');
          tip(g, b.how);
          return;
        }
        y0 = r.compute;
        y1 = r.compute - b.v;
        text = (b.v >= 0 ? '\u2212' : '+') + fixed(Math.abs(b.v) * 100, 2) + ' %';
      } else {
        if (!num(b.v)) {
          sv('text', { x: x + bw / 2, y: Y(0) - 8, 'text-anchor': 'middle', 'class': 'unknown' }, g, 'unknown');
          tip(g, b.label + ': unknown; ' + b.how);
          return;
        }
        y0 = b.v;
        y1 = 0;
        text = fmt(b.v, 'util') + ' %';
      }
      var hi = Math.max(y0, y1), lo = Math.min(y0, y1);
      var rect = sv('rect', { x: x, y: Y(hi), width: bw, height: Math.max(1, Y(lo) - Y(hi)), fill: colors[b.label] || '#888' }, g);
      tip(rect, b.label + ': ' + text + (b.label === 'capacity' ? '' : ' (' + fmt(Math.abs(y0 - y1) * cap, 'ms') + ' ms of ' + fmt(cap, 'ms') + ' ms)') + '; ' + b.how);
      sv('text', { x: x + bw / 2, y: Y(hi) - 6, 'text-anchor': 'middle', 'class': (b.kind === 'total' && b.v > 1) ? 'flagged' : null }, g,
        b.label === 'capacity' ? '100 %' : text);
      if (num(b.lo) && num(b.hi))
        sv('line', { x1: x + bw / 2, x2: x + bw / 2, y1: Y(b.lo), y2: Y(b.hi), stroke: '#1b1f24', 'stroke-width': 1.5 }, g);
      if (prevTop !== null && b.kind !== 'total')
        sv('line', { x1: x - (slot - bw), x2: x, y1: Y(prevTop), y2: Y(prevTop), stroke: '#8c959f', 'stroke-dasharray': '3 3' }, svg);
      prevTop = b.kind === 'total' ? hi : Math.min(y0, y1);
    });
    h('p', { 'class': 'how' }, sec, r.samples + ' samples place the split; compute-kernel efficiency ' +
      (num(eff) ? fmt(eff, 'util') + ' %' : 'unknown') + '; MFU ' + (num(r.mfu) ? fmt(r.mfu, 'util') + ' %' : 'unknown') + '.');
  }

  /* ---- roofline ---- */

  function drawRoofline() {
    var fu = flopUnit();
    var sec = heading('roofline', 'Roofline',
      'Achieved ' + fu + ' against arithmetic intensity (FLOPs per byte moved), both axes logarithmic. A horizontal line is a FLOP/s peak, ' +
      'a diagonal one a memory-bandwidth peak (' + fu + ' = bytes/s \u00d7 intensity); the thick line is the roof of the peaks MFU and MBU use. ' +
      'A point left of the ridge (where the two meet) is bound by memory bandwidth, right of it by compute; its height below the roof is what is left. ' +
      'Circles: declared model FLOPs over declared model bytes (model_flops_per_s / model_bytes_per_s); squares: counted FLOPs over DRAM bytes ' +
      '(needs a PMU and a memory-controller PMU).');
    var pk = section('peaks'), S = summaryRow(), s = S.r, run = section('run').rows[0] || {};
    var dtype = s.dtype || run.dtype;
    var flops = [], bws = [];
    pk.rows.forEach(function (p) {
      if (p.scope !== 'all' || !num(p.value) || p.value <= 0) return;
      if (p.kind === 'flops' && p.dtype === dtype) flops.push(p);
      else if (p.kind === 'bandwidth') bws.push(p);
    });
    if (!flops.length && num(s.peak_flops))
      flops.push({ kind: 'flops', dtype: dtype, source: peakWord(s.peak_source), value: s.peak_flops, used: 1, detail: s.peak_source });
    if (!bws.length && num(s.peak_bw))
      bws.push({ kind: 'bandwidth', source: peakWord(s.peak_bw_source), value: s.peak_bw, used: 1, detail: s.peak_bw_source });
    var usedF = num(s.peak_flops) ? s.peak_flops : null, usedB = num(s.peak_bw) ? s.peak_bw : null;

    var pts = [];
    function add(name, kind, x, y, why) {
      if (num(x) && num(y) && x > 0 && y > 0)
        pts.push({ name: name, kind: kind, x: x, y: y, why: why });
    }
    add('whole run', 'model', s.model_flops_per_s / s.model_bytes_per_s, s.model_flops_per_s, 'summary');
    add('whole run', 'hw', s.hw_flops / s.dram_bytes, s.hw_flops_per_s, 'summary');
    var undrawn = []; /* phases with no point, and why */
    section('phases').rows.forEach(function (p) {
      var n = pts.length;
      add(p.phase, 'model', p.model_flops_per_s / p.model_bytes_per_s, p.model_flops_per_s, 'phases');
      add(p.phase, 'hw', p.ai_hw, p.hw_flops_per_s, 'phases');
      if (pts.length > n)
        return;
      if (num(p.model_flops_per_s) && p.model_flops_per_s > 0 && p.model_bytes_per_s === 0)
        undrawn.push(vis(p.phase) + ' (declared 0 bytes: its intensity has no bound; ' + eng(p.model_flops_per_s) + ' ' + fu + ')');
      else if (!num(p.model_flops_per_s) || !num(p.model_bytes_per_s))
        undrawn.push(vis(p.phase) + ' (declared no ' + (num(p.model_flops_per_s) ? 'bytes' : num(p.model_bytes_per_s) ? 'FLOPs' : 'FLOPs or bytes') + ')');
      else
        undrawn.push(vis(p.phase) + ' (no FLOPs or no bytes in its time)');
    });
    var wrap = h('div', { 'class': 'chart', id: 'roofline-chart', 'data-points': String(pts.length) }, sec);
    if (!flops.length && !bws.length && !pts.length) {
      h('p', { 'class': 'muted' }, wrap, 'No peak and no intensity known: nothing to draw (see the notes).');
      return;
    }
    var xs = [], ys = [];
    pts.forEach(function (p) { xs.push(p.x); ys.push(p.y); });
    flops.forEach(function (p) { ys.push(p.value); });
    var ridge = usedF && usedB ? usedF / usedB : null;
    if (ridge) xs.push(ridge);
    bws.forEach(function (b) { flops.forEach(function (f) { xs.push(f.value / b.value); }); });
    /* one decade per grid line: only finite, positive values (an edited
     * database's 0 or 1e308 / 5e-324 would make the decades endless) */
    function finitePos(v) { return v > 0 && isFinite(v); }
    xs = xs.filter(finitePos);
    ys = ys.filter(finitePos);
    if (!xs.length) xs.push(1);
    if (!ys.length) ys.push(1e9);
    var lx0 = Math.floor(Math.log10(Math.min.apply(null, xs))) - 1, lx1 = Math.ceil(Math.log10(Math.max.apply(null, xs))) + 1;
    var ly1 = Math.ceil(Math.log10(Math.max.apply(null, ys)) + 0.05);
    var ly0 = Math.min(Math.floor(Math.log10(Math.min.apply(null, ys))), ly1 - 3) - (pts.length ? 0 : 0);
    if (pts.length)
      ly0 = Math.min(ly0, Math.floor(Math.log10(Math.min.apply(null, pts.map(function (p) { return p.y; })))));
    var W = 1000, H = 460, M = { l: 74, r: 24, t: 16, b: 48 }, pw = W - M.l - M.r, ph = H - M.t - M.b;
    function X(v) { return M.l + (Math.log10(v) - lx0) / (lx1 - lx0) * pw; }
    function Y(v) { return M.t + ph - (Math.log10(v) - ly0) / (ly1 - ly0) * ph; }
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'roofline' }, wrap);
    sv('rect', { x: M.l, y: M.t, width: pw, height: ph }, sv('clipPath', { id: 'roof-clip' }, sv('defs', null, svg)));
    var grid = sv('g', { 'class': 'grid' }, svg), axis = sv('g', { 'class': 'axis' }, svg);
    for (var e = lx0; e <= lx1; e++) {
      sv('line', { x1: X(Math.pow(10, e)), x2: X(Math.pow(10, e)), y1: M.t, y2: M.t + ph }, grid);
      sv('text', { x: X(Math.pow(10, e)), y: M.t + ph + 16, 'text-anchor': 'middle' }, axis, e >= 0 && e < 4 ? String(Math.pow(10, e)) : eng(Math.pow(10, e)).replace(' ', ''));
    }
    for (var f = ly0; f <= ly1; f++) {
      sv('line', { x1: M.l, x2: M.l + pw, y1: Y(Math.pow(10, f)), y2: Y(Math.pow(10, f)) }, grid);
      sv('text', { x: M.l - 6, y: Y(Math.pow(10, f)) + 4, 'text-anchor': 'end' }, axis, eng(Math.pow(10, f)));
    }
    sv('line', { x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph }, axis);
    sv('line', { x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph }, axis);
    sv('text', { 'class': 'axislabel', x: M.l + pw / 2, y: H - 8, 'text-anchor': 'middle' }, svg, 'arithmetic intensity (FLOP/byte)');
    sv('text', { 'class': 'axislabel', transform: 'translate(14,' + (M.t + ph / 2) + ') rotate(-90)', 'text-anchor': 'middle' }, svg, 'achieved ' + fu);
    var plot = sv('g', { 'clip-path': 'url(#roof-clip)' }, svg);
    var xa = Math.pow(10, lx0), xb = Math.pow(10, lx1);
    function dashOf(src) { return src === 'spec' ? '7 4' : src === 'user' ? '2 3' : null; }
    var labels = sv('g', null, svg);
    flops.forEach(function (p, k) {
      var y = Y(p.value), l = sv('line', { x1: M.l, x2: M.l + pw, y1: y, y2: y, stroke: '#0b5cad', 'stroke-width': 1.2, 'stroke-dasharray': dashOf(p.source), opacity: 0.8, 'class': 'ceiling ceiling-flops' }, plot);
      var txt = (p.dtype || '') + ' ' + p.source + ' ' + eng(p.value) + ' ' + fu + (p.used ? ' (used)' : '');
      tip(l, txt + ': ' + (p.detail || ''));
      tip(sv('text', { x: M.l + pw - 4, y: y - 4 - k * 0, 'text-anchor': 'end', fill: '#0b5cad' }, labels, txt), p.detail || '');
    });
    bws.forEach(function (b, k) {
      var l = sv('line', { x1: X(xa), y1: Y(b.value * xa), x2: X(xb), y2: Y(b.value * xb), stroke: '#8a5a00', 'stroke-width': 1.2, 'stroke-dasharray': dashOf(b.source), opacity: 0.8, 'class': 'ceiling ceiling-bw' }, plot);
      var txt = b.source + ' ' + eng(b.value) + ' bytes/s' + (b.used ? ' (used)' : '');
      tip(l, txt + ': ' + (b.detail || ''));
      /* the label where the line enters the plot from the bottom, or at its left */
      var xl = Math.max(xa, Math.pow(10, ly0) / b.value) * Math.pow(10, 0.15 + 0.25 * k);
      var t = sv('text', { x: X(xl) + 4, y: Y(b.value * xl) - 4, fill: '#8a5a00', transform: 'rotate(' + (-Math.atan2(Y(b.value * xl) - Y(b.value * xl * 10), X(xl * 10) - X(xl)) * 180 / Math.PI) + ',' + (X(xl) + 4) + ',' + (Y(b.value * xl) - 4) + ')' }, labels, txt);
      tip(t, b.detail || '');
    });
    if (usedF && usedB) {
      var rx = usedF / usedB;
      sv('path', { d: 'M' + r2(X(xa)) + ',' + r2(Y(usedB * xa)) + 'L' + r2(X(rx)) + ',' + r2(Y(usedF)) + 'L' + r2(X(xb)) + ',' + r2(Y(usedF)),
        fill: 'none', stroke: '#1b1f24', 'stroke-width': 2.5, 'class': 'roof' }, plot);
      sv('line', { x1: X(rx), x2: X(rx), y1: Y(usedF), y2: M.t + ph, stroke: '#8c959f', 'stroke-dasharray': '2 3' }, plot);
      sv('text', { x: X(rx) + 4, y: M.t + ph - 6, fill: '#57606a' }, labels, 'ridge ' + fmt(rx, 'ratio') + ' FLOP/byte');
    }
    var ptg = sv('g', null, svg);
    var colorsP = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7f7f7f', '#1b1f24'];
    var names = [];
    pts.forEach(function (p) { if (names.indexOf(p.name) < 0) names.push(p.name); });
    pts.forEach(function (p) {
      var c = colorsP[names.indexOf(p.name) % colorsP.length], x = X(p.x), y = Y(p.y), g = sv('g', { 'class': 'point point-' + p.kind }, ptg);
      if (p.kind === 'model')
        sv('circle', { cx: r2(x), cy: r2(y), r: 5.5, fill: c, stroke: '#fff', 'stroke-width': 1 }, g);
      else
        sv('rect', { x: r2(x - 5), y: r2(y - 5), width: 10, height: 10, fill: c, stroke: '#fff', 'stroke-width': 1 }, g);
      var label = vis(p.name);
      sv('text', { x: x + 8, y: y - 6, fill: c }, g, label.length > 24 ? label.slice(0, 23) + '\u2026' : label);
      var roof = usedF && usedB ? Math.min(usedF, usedB * p.x) : usedF;
      tip(g, vis(p.name) + ' (' + (p.kind === 'model' ? 'declared model FLOPs / model bytes' : 'counted FLOPs / DRAM bytes') + ', ' + p.why + '): ' +
        fmt(p.x, 'ratio') + ' FLOP/byte, ' + eng(p.y) + ' ' + fu +
        (roof ? ' = ' + fixed(p.y / roof * 100, 2) + ' % of the roof there (' + (usedB && p.x < usedF / usedB ? 'memory-bound side' : 'compute-bound side') + ')' : ''));
    });
    if (!pts.length) {
      sv('text', { 'class': 'nodata', x: M.l + 12, y: M.t + 20 }, svg, 'No point: no arithmetic intensity is known (see below).');
      h('p', { 'class': 'how' }, sec, 'No point: the intensity of the run and of every phase is unknown. Declare the bytes a step ' +
        'moves (mfu_step_model(flops, bytes), mfu.step(flops=..., bytes=...)), or record on a machine with a PMU and a ' +
        'memory-controller PMU for counted FLOPs over DRAM bytes.');
    }
    var lg = [];
    names.forEach(function (nm, k) { lg.push({ label: vis(nm), color: colorsP[k % colorsP.length] }); });
    if (lg.length)
      legendOf(sec, lg);
    if (undrawn.length)
      h('p', { 'class': 'how', id: 'roofline-undrawn' }, sec, 'Phases not drawn: ' + undrawn.join('; ') + '.');
    h('p', { 'class': 'how' }, sec, 'Lines: solid measured (mfu-calibrate), dashed spec sheet, dotted --peak-flops/--peak-bw. ' +
      'Hover a line or a point for its source and numbers.');
  }

  /* ---- top functions ---- */

  function drawFunctions() {
    var sec = heading('functions', 'Top functions',
      'Per phase, the top 5 functions of each class from cpu-clock samples (the dispatch analysis): dispatch (interpreters, ' +
      'framework layers, allocators, copies), sync, unclassified (the program\u2019s own code) and compute kernels. share: of the ' +
      'phase\u2019s on-CPU samples, with its 95% interval; est ms: samples \u00d7 the thread\u2019s exact on-CPU time per sample. ' +
      'A sample of a thread with no phase of its own open (a worker of a thread pool) is in the phase open on the thread that ' +
      'marks the steps (the process\u2019s phase timeline); via process: how many of the samples were placed that way.');
    verdict(sec, D.verdicts && D.verdicts.dispatch);
    var ds = section('dispatch');
    if (!ds.rows.length) {
      h('p', { 'class': 'muted' }, sec, 'No samples in this run: sampling was off or not allowed (see the notes).');
      return;
    }
    table(sec, ds,
      ['phase', 'class', 'rank', 'symbol', 'dso', 'samples', 'share', 'est_ms', 'via_process'], {
        textClass: { symbol: 'sym', dso: 'sym' },
        render: {
          dso: function (td, v) {
            if (!known(v)) { dash(td); return; }
            var base = String(v).split('/').pop();
            td.textContent = base;
            td.title = v;
          },
          share: function (td, v, r) {
            if (!num(v)) { dash(td); return; }
            h('span', { 'class': 'sharebar', style: 'width:' + Math.round(clamp(v, 0, 1) * 60) + 'px' }, td);
            td.appendChild(document.createTextNode(fmt(v, 'pct')));
            /* the 95% interval in the same cell: two columns of it made
             * the table too wide to read beside long symbols */
            if (num(r.share_lo) && num(r.share_hi))
              h('span', { 'class': 'muted ci', title: '95% interval of the share' }, td,
                ' (' + fmt(r.share_lo, 'pct') + '\u2013' + fmt(r.share_hi, 'pct') + ')');
          }
        }
      });
  }

  /* ---- the run ---- */

  function drawRun() {
    var sec = heading('run', 'Run', 'What was recorded, where, and the peaks every utilization divides by, with their sources.');
    var r = section('run').rows[0] || {}, S = summaryRow(), s = S.r;
    function hz(v) { return num(v) ? fixed(v / 1e9, 2) + ' GHz' : null; }
    var rows = [
      ['command', r.command ? commandLine(r.command) : null],
      ['working directory', r.cwd],
      ['started', num(r.start_unix_ns) ? new Date(r.start_unix_ns / 1e6).toISOString() : null],
      ['host', r.host],
      ['kernel', r.kernel],
      ['CPU', [r.cpu_vendor, r.cpu_name].filter(known).join(' ') || null],
      ['microarchitecture', r.uarch],
      ['ISA features used for the peaks', r.isa],
      ['nominal clock', hz(r.nominal_hz) ? hz(r.nominal_hz) + (r.nominal_hz_source ? ' (' + r.nominal_hz_source + ')' : '') : null],
      ['measured clock', hz(r.clock_hz) ? hz(r.clock_hz) + ' (mfu-calibrate)' : null, 'no calibration profile'],
      ['CPUs', num(r.ncpu) ? fmt(r.ncpu, 'auto') + ' logical CPUs' + (num(r.ncores) ? ', ' + fmt(r.ncores, 'auto') + ' cores' : '') +
        (r.allowed_cpus ? ' (' + r.allowed_cpus + ')' : '') + (num(r.cpu_quota) ? ', quota ' + fmt(r.cpu_quota, 'auto') : '') +
        (r.cpus_source ? '; ' + r.cpus_source : '') : null],
      ['dtype of the FLOP peak', r.dtype],
      ['peak FLOP/s (MFU, HFU)', num(s.peak_flops) ? eng(s.peak_flops) + ' ' + flopUnit() + ' \u2014 ' + (s.peak_source || '') : null, 'no FLOP peak known'],
      ['peak bytes/s (MBU)', num(s.peak_bw) ? eng(s.peak_bw) + ' bytes/s \u2014 ' + (s.peak_bw_source || '') : null, 'no bandwidth peak known'],
      ['peak choice', r.peak_mode],
      ['FLOPs of MFU', s.flops_source ? s.flops_source + (s.flops_source === 'library' ? ' (BLAS and oneDNN calls, counted from their arguments)' : s.flops_source === 'declared' ? ' (mfu_step_model)' : '') : null, 'no FLOPs declared or counted'],
      ['library-call counting', r.lib_counting],
      ['mode', r.mode],
      ['target pid', known(r.target_pid) ? String(r.target_pid) : null],
      ['run time', num(r.run_ms) ? fmt(r.run_ms, 'ms') + ' ms' : null],
      ['counter readings', num(r.interval_ms) ? 'every ' + fmt(r.interval_ms, 'ms') + ' ms' : null, 'off'],
      ['state', r.state],
      ['exit', known(r.exit_signal) ? 'signal ' + r.exit_signal : known(r.exit_status) ? 'status ' + r.exit_status : null],
      ['recorded by', r.mfu_version ? 'mfu-record ' + r.mfu_version : null],
      ['report', 'mfu-report ' + D.mfu_report + ' --html' + (D.skip_steps ? ' --skip-steps ' + D.skip_steps : '') + (D.quiet ? ' --quiet' : '')]
    ];
    kvTable(sec, rows);
    h('h3', null, sec, 'Peaks');
    var pk = section('peaks');
    if (!pk.rows.length)
      h('p', { 'class': 'muted' }, sec, 'The peak table is empty: only the peaks above are known.');
    else
      table(sec, pk, ['kind', 'dtype', 'scope', 'source', 'value', 'ratio_to_spec', 'used', 'detail'], {
        render: {
          value: function (td, v, row) {
            if (!num(v)) { dash(td); return; }
            td.textContent = eng(v) + ' ' + (row.kind === 'bandwidth' ? 'bytes/s' : row.dtype === 'int8' ? 'ops/s' : 'FLOP/s');
          },
          used: function (td, v) { td.textContent = v ? 'used' : ''; }
        }
      });
    h('h3', null, sec, 'Summary');
    var sum = S.sec;
    var kv = [];
    sum.order.forEach(function (n) {
      var c = sum.cols[n], v = s[n];
      kv.push([c.label, fmt(v, c.style), n]);
    });
    kvTable(sec, kv.map(function (x) { return [x[0], x[1]]; }));
  }

  function drawToc() {
    var nav = document.querySelector('nav.toc');
    [['overview', 'Overview'], ['notes', 'Notes'], ['series', 'MFU per step'], ['timeline', 'MFU over time'], ['phases', 'Phases'], ['waterfall', 'Waterfall'],
      ['roofline', 'Roofline'], ['functions', 'Top functions'], ['run', 'Run']].forEach(function (x) {
      h('a', { href: '#' + x[0] }, nav, x[1]);
    });
    var f = document.querySelector('footer.page');
    f.textContent = 'Written by mfu-report ' + D.mfu_report + ' --html from ' + D.db + '. Every number is that of the analyses in ' +
      'analyses/*.sql (mfu-report --sql SECTION prints them), with the table format\u2019s units; a dash or a gap is unknown, never 0. ' +
      'Per-step values are kept to the microsecond and to 6 significant digits.';
  }

  function main() {
    try {
      D = JSON.parse(document.getElementById('mfu-data').textContent);
    } catch (e) {
      failures.push('data: ' + e.message);
      h('p', { 'class': 'chart-error' }, document.getElementById('report'), 'The report\u2019s data cannot be read: ' + e.message);
      return;
    }
    guarded('overview', drawOverview);
    guarded('overview', drawToc);
    guarded('notes', drawNotes);
    guarded('series', drawSeries);
    guarded('timeline', drawTimeline);
    guarded('phases', drawPhases);
    guarded('waterfall', drawWaterfall);
    guarded('roofline', drawRoofline);
    guarded('functions', drawFunctions);
    guarded('run', drawRun);
  }

  window.addEventListener('error', function (e) {
    failures.push('error: ' + (e && e.message ? e.message : 'unknown'));
    document.body.setAttribute('data-mfu-errors', failures.join(' | '));
  });
  main();
  document.body.setAttribute('data-mfu-ready', failures.length ? 'error' : 'ok');
  if (failures.length)
    document.body.setAttribute('data-mfu-errors', failures.join(' | '));
})();
