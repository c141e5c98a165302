#!/usr/bin/env python3
"""End-to-end tests of mfu-report --html.

The file is checked twice: as text (html.parser: no reference to anything
outside it, its data match the database), and drawn by headless Chromium
(chromium-headless-shell, or chromium --headless; skipped when neither is
installed): no script error, no request attempted (every host name maps to
nothing and the proxy is a closed port, the page's Content-Security-Policy
blocks the rest, and the test counts violations and resource loads), one
point per step and one bar per phase, a screenshot that is not blank, and
zooming and hovering that show a step's exact values.

Databases: a recording of the demo MLP (tests/workloads/mlp.c), the fixture
of tests/e2e/test_report.py with phase names and a note that try to break
out of the page, a run without steps, and 100,000 steps (the size and time
of a big run). Run through meson (`meson test -C BUILD html`) or by hand
with MFU_REPORT, MFU_RECORD and MFU_WL_MLP set.
"""
import html.parser
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mfutest  # noqa: E402
from test_report import Fixture, START_NS  # noqa: E402

REPORT = os.environ.get('MFU_REPORT') or os.path.join(mfutest.SRCDIR, 'build', 'src', 'report', 'mfu-report')

# Phase name and note text that would end the data's script element, or
# add an image that loads from the network, if they were not escaped.
EVIL_PHASE = '</script><img src="http://example.invalid/x.png"><script>bad()</script>'
EVIL_NOTE = '<!-- </script> <a href="https://example.invalid/">x</a> @import url(//example.invalid/a.css)'


CHROMIUM = mfutest.chromium()


def html_report(db, out, *args):
    return subprocess.run([REPORT, '--db', db, '--html', out] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)


def db_counts(db):
    """What the page must show, from the database itself: complete steps,
    those with a known MFU, and the phase names the phases section lists."""
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    try:
        steps = con.execute('SELECT COUNT(*) FROM step WHERE complete = 1').fetchone()[0]
        peak = con.execute('SELECT peak_flops FROM run').fetchone()[0]
        with_mfu = con.execute('SELECT COUNT(*) FROM step WHERE complete = 1 AND flops IS NOT NULL'
                               ).fetchone()[0] if peak else 0
        names = [r[0] for r in con.execute(
            'SELECT name FROM phase WHERE complete = 1 AND (step IS NULL OR step NOT IN '
            '(SELECT step FROM step WHERE complete = 0)) GROUP BY name ORDER BY MIN(id)')]
        return steps, with_mfu, names
    finally:
        con.close()


class Page(html.parser.HTMLParser):
    """Every tag with its attributes, the text of script and style elements,
    and the report's data."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []        # (tag, {attr: value})
        self.scripts = []     # (attrs, text)
        self.styles = []
        self._in = None
        self._text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in ('script', 'style'):
            self._in = (tag, a)
            self._text = []

    def handle_endtag(self, tag):
        if self._in and tag == self._in[0]:
            text = ''.join(self._text)
            if tag == 'script':
                self.scripts.append((self._in[1], text))
            else:
                self.styles.append(text)
            self._in = None

    def handle_data(self, data):
        if self._in:
            self._text.append(data)

    def data(self):
        texts = [t for a, t in self.scripts if a.get('id') == 'mfu-data']
        assert len(texts) == 1, 'one mfu-data element, not %d' % len(texts)
        return json.loads(texts[0])


EXTERNAL = re.compile(r'^\s*(?:[a-z][a-z0-9+.-]*:|//)', re.I)
URL_ATTRS = ('src', 'href', 'xlink:href', 'action', 'formaction', 'poster', 'data', 'srcset', 'background',
             'manifest', 'ping', 'cite', 'longdesc', 'codebase', 'archive')


def external_refs(page):
    """Every reference in @page to something outside the file."""
    bad = []
    for tag, a in page.tags:
        for k in URL_ATTRS:
            v = a.get(k)
            if v is not None and EXTERNAL.match(v) and not v.startswith('data:'):
                bad.append('<%s %s="%s">' % (tag, k, v))
        if tag == 'link':
            bad.append('<link %s>' % a)
        if tag == 'script' and 'src' in a:
            bad.append('<script src>')
        if tag == 'meta' and a.get('http-equiv', '').lower() == 'refresh':
            bad.append('<meta refresh>')
    for css in page.styles:
        if re.search(r'@import', css, re.I):
            bad.append('@import in a style')
        for u in re.findall(r'url\(\s*([^)]*)\)', css, re.I):
            if not u.strip('\'" ').startswith(('data:', '#')):
                bad.append('url(%s) in a style' % u)
    for a, js in page.scripts:
        if a.get('type') == 'application/json':
            continue
        for word in ('fetch(', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'sendBeacon', 'import(',
                     'importScripts', '.src =', '.href =', 'window.open', 'location.'):
            if word in js:
                bad.append('%s in a script' % word)
    return bad


def decode_png(data):
    """(width, height, bytes per pixel, rows) of an 8-bit PNG, with zlib and
    the five scanline filters."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
            assert depth == 8, 'bit depth %d' % depth
        elif kind == b'IDAT':
            idat.append(body)
        pos += 12 + n
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(b''.join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


# Injected into a copy of the page, before its own script: records script
# errors, console errors, Content-Security-Policy violations and every
# resource the page loaded or tried to.
MONITOR = r'''<script>
window.__t = { errors: [], csp: [] };
window.addEventListener('error', function (e) { __t.errors.push('error: ' + e.message); });
document.addEventListener('securitypolicyviolation', function (e) {
  __t.csp.push(e.violatedDirective + ' ' + e.blockedURI);
});
(function (orig) {
  console.error = function () { __t.errors.push('console: ' + Array.prototype.join.call(arguments, ' ')); orig.apply(console, arguments); };
})(console.error);
</script>'''

# Injected after the page's script: uses the chart as a person would
# (hover, zoom with the wheel), then writes what it saw into the DOM.
PROBE = r'''<script>
setTimeout(function () {
  var out = { ready: document.body.getAttribute('data-mfu-ready'),
              failures: document.body.getAttribute('data-mfu-errors') };
  var svg = document.querySelector('#series-chart svg');
  function at(x, y, type, extra) {
    var ev = new MouseEvent(type, Object.assign({ clientX: x, clientY: y, bubbles: true, cancelable: true }, extra || {}));
    svg.dispatchEvent(ev);
  }
  if (svg) {
    out.drawn0 = svg.getAttribute('data-drawn');
    out.points0 = document.querySelectorAll('#series-chart circle.pt-mfu').length;
    var pts = document.querySelectorAll('#series-chart circle.pt-mfu');
    if (pts.length) {
      var k = Math.floor(pts.length / 2), r = pts[k].getBoundingClientRect();
      at(r.left + r.width / 2, r.top + r.height / 2, 'mousemove');
      out.tip = document.querySelector('#series-chart .tooltip').textContent;
    }
    var box = svg.getBoundingClientRect();
    for (var i = 0; i < 60 && svg.getAttribute('data-drawn') !== 'points'; i++)
      svg.dispatchEvent(new WheelEvent('wheel', { clientX: box.left + box.width / 2, clientY: box.top + box.height / 2,
                                                  deltaY: -100, bubbles: true, cancelable: true }));
    out.drawn1 = svg.getAttribute('data-drawn');
    out.range = document.querySelector('#series-chart .range').textContent;
    var p2 = document.querySelectorAll('#series-chart circle.pt-mfu');
    out.points1 = p2.length;
    if (p2.length) {
      var r2 = p2[Math.floor(p2.length / 2)].getBoundingClientRect();
      at(r2.left + r2.width / 2, r2.top + r2.height / 2, 'mousemove');
      out.tip1 = document.querySelector('#series-chart .tooltip').textContent;
    }
  }
  out.phaseBars = document.querySelectorAll('#phases-chart g.bar-phase').length;
  // MFU over time: the intervals, drawn, and one interval's values on hover
  var tl = document.querySelector('#timeline-chart');
  if (tl) {
    var ts = tl.querySelector('svg'), tp = tl.querySelector('path.tseries-mfu');
    out.timeline = { intervals: tl.getAttribute('data-intervals'), drawn: ts ? ts.getAttribute('data-drawn') : null,
                     mfuPath: tp ? tp.getAttribute('d').length : 0, runLine: tl.querySelectorAll('line.runmfu').length,
                     text: tl.textContent };
    if (ts) {
      var tb = ts.getBoundingClientRect();
      ts.dispatchEvent(new MouseEvent('mousemove', { clientX: tb.left + tb.width / 2, clientY: tb.top + tb.height / 2,
                                                     bubbles: true, cancelable: true }));
      out.timeline.tip = tl.querySelector('.tooltip').textContent;
    }
  }
  var roof = document.querySelector('#roofline-chart'), undrawn = document.querySelector('#roofline-undrawn');
  out.roofPoints = roof ? roof.getAttribute('data-points') : null;
  out.roofUndrawn = undrawn ? undrawn.textContent : '';
  // tables wider than their place on a 1280-pixel window (they scroll)
  out.wide = [];
  document.querySelectorAll('.tablewrap').forEach(function (w) {
    var sec = w.closest('section');
    if (w.scrollWidth > w.clientWidth + 1)
      out.wide.push(sec ? sec.id : '?');
  });
  out.errors = __t.errors;
  out.csp = __t.csp;
  out.resources = performance.getEntriesByType('resource').map(function (e) { return e.name; });
  out.images = document.images.length;
  document.documentElement.setAttribute('data-test', JSON.stringify(out));
}, 300);
</script>'''


# the big run: more steps than pixels either way (drawn as min/max per column)
BIG = 10_000 if mfutest.SANITIZED else 100_000


class ChromiumPage:
    """Drawing a report in headless Chromium and checking what it drew, for
    a unittest.TestCase (test_unmarked.py draws its MFU over time with it)."""

    def need_chromium(self):
        if not CHROMIUM:
            self.skipTest('no headless Chromium (apt-get install chromium-headless-shell)')

    def draw(self, html_path, with_probe=True):
        """Chromium's DOM of the page (with the monitor and probe scripts
        injected into a copy), its screenshot (PNG bytes) and its log."""
        self.need_chromium()
        with open(html_path, encoding='utf-8') as f:
            text = f.read()
        if with_probe:
            text = text.replace('<head>\n', '<head>\n' + MONITOR + '\n', 1)
            i = text.rindex('</body>')
            text = text[:i] + PROBE + '\n' + text[i:]
        probe = html_path[:-5] + '-probe.html'
        with open(probe, 'w', encoding='utf-8') as f:
            f.write(text)
        common = ['--disable-gpu', '--no-first-run', '--disable-extensions', '--disable-sync',
                  '--disable-background-networking', '--disable-component-update',
                  '--host-resolver-rules=MAP * ~NOTFOUND', '--proxy-server=127.0.0.1:9',
                  '--enable-logging=stderr', '--v=0', '--window-size=1280,2000']
        if os.geteuid() == 0:
            common.append('--no-sandbox')
        url = 'file://' + probe
        # Chromium is not ours: under a sanitizer build the suite preloads
        # ASan's runtime into every program, which only slows Chromium down
        env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}
        with tempfile.TemporaryDirectory(prefix='mfu-chromium-') as prof:
            r = mfutest.run_chromium(CHROMIUM + common + ['--user-data-dir=' + prof, '--virtual-time-budget=5000',
                                                          '--dump-dom', url], timeout=180, env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace')[-2000:])
        dom, log = r.stdout.decode('utf-8', errors='replace'), r.stderr.decode(errors='replace')
        shot = html_path[:-5] + '.png'
        with tempfile.TemporaryDirectory(prefix='mfu-chromium-') as prof:
            r = mfutest.run_chromium(CHROMIUM + common + ['--user-data-dir=' + prof, '--screenshot=' + shot, url],
                                     timeout=180, env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace')[-2000:])
        log += r.stderr.decode(errors='replace')
        with open(shot, 'rb') as f:
            png = f.read()
        return dom, png, log

    def check_drawn(self, dom, png, log):
        """No error, no request, and a screenshot with something in it."""
        console = [l for l in log.splitlines() if 'CONSOLE' in l or 'Uncaught' in l]
        self.assertEqual(console, [], 'console messages')
        for word in ('net::ERR', 'Failed to load resource', 'Refused to'):
            self.assertNotIn(word, log)
        m = re.search(r'data-test="([^"]*)"', dom)
        self.assertTrue(m, 'the probe did not run')
        got = json.loads(html.unescape(m.group(1)))
        self.assertEqual(got['ready'], 'ok', got.get('failures'))
        self.assertEqual(got['errors'], [])
        self.assertEqual(got['csp'], [], 'requests the page tried')
        self.assertEqual(got['resources'], [], 'resources the page loaded')
        self.assertEqual(got['images'], 0)
        # the tables people read fit the page: no sideways scrolling
        self.assertEqual([w for w in got['wide'] if w in ('functions', 'phases', 'run')], [], got['wide'])
        width, height, bpp, rows = decode_png(png)
        self.assertEqual((width, height), (1280, 2000))
        # not blank: many rows with more than one colour, many colours
        busy = sum(1 for r in rows[::4] if r.count(r[:bpp]) * bpp != len(r))
        colours = set()
        for r in rows[::16]:
            colours.update(r[i:i + 3] for i in range(0, len(r), bpp * 8))
        self.assertGreater(busy, len(rows[::4]) // 4)
        self.assertGreater(len(colours), 20)
        return got


@unittest.skipUnless(os.path.exists(REPORT), 'MFU_REPORT is not set (run through meson test)')
class HtmlTest(ChromiumPage, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix='mfu-html-')
        cls.dir = cls._tmp.name
        # the fixture of test_report.py, with names that try to escape
        cls.odd = os.path.join(cls.dir, 'odd.sqlite')
        Fixture(cls.odd)
        con = sqlite3.connect(cls.odd)
        con.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete)"
                    " VALUES (1000, 1, ?, 42, 42, 0, ?, ?, 1000000, 1)",
                    (EVIL_PHASE, START_NS + 2_000_000, START_NS + 3_000_000))
        con.execute("INSERT INTO note (kind, text) VALUES ('test', ?)", (EVIL_NOTE,))
        con.commit()
        con.close()
        cls.empty = os.path.join(cls.dir, 'empty.sqlite')
        Fixture(cls.empty, nsteps=0, phases=False)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, db, name, *args):
        out = self.path(name)
        r = html_report(db, out, *args)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stdout, b'')
        with open(out, encoding='utf-8') as f:
            return out, f.read()

    def parse(self, text):
        p = Page()
        p.feed(text)
        p.close()
        return p

    def check_page(self, db, text):
        """The page as text: self-contained, and its data match @db."""
        page = self.parse(text)
        self.assertEqual(external_refs(page), [])
        self.assertTrue(any(t == 'meta' and a.get('http-equiv') == 'Content-Security-Policy'
                            and "default-src 'none'" in a.get('content', '') for t, a in page.tags))
        self.assertEqual([t for t, _ in page.tags].count('script'), 2, 'the data and the script only')
        data = page.data()
        steps, _, names = db_counts(db)
        self.assertEqual(len(data['steps']['rows']), steps)
        self.assertEqual([r[0] for r in data['sections']['phases']['rows']], names)
        return page, data

    # ---- the file as text ----

    def test_odd_names_stay_data(self):
        _, text = self.write(self.odd, 'odd.html')
        page, data = self.check_page(self.odd, text)
        self.assertIn(EVIL_PHASE, [r[0] for r in data['sections']['phases']['rows']])
        self.assertIn(EVIL_NOTE, [r[1] for r in data['sections']['notes']['rows']])
        self.assertNotIn('<img', text)
        self.assertEqual([t for t, _ in page.tags if t in ('img', 'a', 'iframe', 'object', 'embed')], [])
        # the steps' values are the steps section's, to the stated precision
        cols = [c[0] for c in data['steps']['columns']]
        self.assertEqual(cols[:6], ['step', 'begin_ms', 'wall_ms', 'mfu', 'hfu', 'mbu'])
        expect = json.loads(subprocess.run([REPORT, '--db', self.odd, 'steps', '--format', 'json'],
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout)
        for row, want in zip(data['steps']['rows'], expect):
            self.assertEqual(row[0], want['step'])
            self.assertAlmostEqual(row[1], want['begin_ms'], delta=0.0005)
            self.assertAlmostEqual(row[2], want['wall_ms'], delta=0.0005)
            for k in ('mfu', 'hfu', 'mbu', 'cpu_util'):
                v = row[cols.index(k)]
                if want[k] is None:
                    self.assertIsNone(v, k)     # unknown stays unknown, never 0
                else:
                    self.assertAlmostEqual(v, want[k], delta=abs(want[k]) * 1e-5, msg=k)
        # the key sections are the analyses' rows, as --format json gives them
        summary = json.loads(subprocess.run([REPORT, '--db', self.odd, '--format', 'json'], stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, check=True).stdout)[0]
        got = dict(zip([c[0] for c in data['sections']['summary']['columns']], data['sections']['summary']['rows'][0]))
        self.assertEqual(got, summary)

    def test_stdout(self):
        out, text = self.write(self.odd, 'file.html')
        r = subprocess.run([REPORT, '--db', self.odd, '--html', '-'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stdout.decode('utf-8'), text)

    def test_skip_steps_and_quiet(self):
        _, text = self.write(self.odd, 'skip.html', '--skip-steps', '3', '-q')
        data = self.parse(text).data()
        self.assertEqual(data['skip_steps'], 3)
        self.assertEqual(data['quiet'], 1)
        self.assertEqual([r[0] for r in data['steps']['rows']], list(range(3, 10)))
        self.assertNotIn('missing_counters', [r[0] for r in data['sections']['notes']['rows']])

    def test_no_steps(self):
        _, text = self.write(self.empty, 'empty.html')
        _, data = self.check_page(self.empty, text)
        self.assertEqual(data['steps']['rows'], [])
        self.assertEqual(data['sections']['waterfall']['rows'], [])
        self.assertIn('no_steps', [r[0] for r in data['sections']['notes']['rows']])

    def test_errors(self):
        # unwritable: exit 1, a clear message, nothing left behind
        bad = self.path('no/such/dir/r.html')
        r = html_report(self.odd, bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn('mfu-report: cannot write %s: No such file or directory' % bad, r.stderr.decode())
        if os.path.exists('/dev/full'):
            r = html_report(self.odd, '/dev/full')
            self.assertEqual(r.returncode, 1)
            self.assertIn('cannot write /dev/full: No space left on device', r.stderr.decode())
            self.assertTrue(os.path.exists('/dev/full'))
        # the database as the output: refused, the database intact
        size = os.path.getsize(self.odd)
        r = html_report(self.odd, self.odd)
        self.assertEqual(r.returncode, 1)
        self.assertIn('that is the database', r.stderr.decode())
        self.assertEqual(os.path.getsize(self.odd), size)
        # a database that cannot be read: no file written
        out = self.path('none.html')
        r = html_report(self.path('missing.sqlite'), out)
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists(out))
        # bad usage: exit 2
        for args in (['--html', ''], ['--html', out, 'steps'], ['--html', out, '--format', 'csv'],
                     ['--html', out, '--list'], ['--html']):
            r = subprocess.run([REPORT, '--db', self.odd] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn('mfu-report: ', r.stderr.decode())
            self.assertFalse(os.path.exists(out), args)

    def test_100k_steps(self):
        """A run of 100,000 steps (3 phases each; 10,000 in a sanitizer
        build, ten times slower) makes a file of a few MB, every step in it,
        in seconds."""
        db = self.path('big.sqlite')
        make_big(db, BIG)
        t0 = time.monotonic()
        out, text = self.write(db, 'big.html')
        took = time.monotonic() - t0
        size = os.path.getsize(out)
        print('\n%d steps: %.1f MB in %.1f s' % (BIG, size / 1e6, took), file=sys.stderr)
        self.assertLess(size, 10_000_000)
        if not mfutest.SANITIZED:
            self.assertLess(took, 60)
        _, data = self.check_page(db, text)
        self.assertEqual(len(data['steps']['rows']), BIG)
        HtmlTest.big = db

    # ---- drawn by Chromium ----

    def tip_values(self, tip):
        """step, MFU % and wall ms from a tooltip's text."""
        step = int(re.search(r'step (\d+)', tip).group(1))
        m = re.search(r'MFU: ([0-9.]+) %', tip)
        wall = float(re.search(r'wall: ([0-9.]+) ms', tip).group(1))
        return step, float(m.group(1)) if m else None, wall

    def step_truth(self, db, step):
        con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        try:
            wall, flops, peak = con.execute('SELECT s.wall_ns, s.flops, r.peak_flops FROM step s, run r'
                                            ' WHERE s.step = ?', (step,)).fetchone()
        finally:
            con.close()
        return wall / 1e6, flops / (wall / 1e9 * peak) * 100 if flops is not None and peak else None

    def test_demo_drawn(self):
        """The demo MLP recorded, written and drawn: one point per step,
        one bar per phase, the hovered step's exact values."""
        self.need_chromium()
        db = self.path('demo.sqlite')
        r = mfutest.record(['-o', db], [mfutest.prog('MFU_WL_MLP'), '--steps', '30', '--quiet'],
                           env=dict(os.environ, MFU_NO_CALIBRATE='1'))
        self.assertEqual(r.returncode, 0, r.stderr)
        out, text = self.write(db, 'demo.html')
        self.check_page(db, text)
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        steps, with_mfu, names = db_counts(db)
        self.assertEqual(steps, 30)
        self.assertEqual(got['drawn0'], 'points')
        self.assertEqual(got['points0'], with_mfu)
        self.assertEqual(got['phaseBars'], len(names))
        self.assertEqual(len(names), 4)   # data, forward, backward, optimizer
        # roofline: the run, forward and optimizer (declared FLOPs and
        # bytes); data declares nothing and backward 0 bytes, and the page
        # says so rather than leave them out in silence
        self.assertEqual(got['roofPoints'], '3')
        self.assertIn('data (declared no FLOPs or bytes)', got['roofUndrawn'])
        self.assertIn('backward (declared 0 bytes', got['roofUndrawn'])
        step, mfu, wall = self.tip_values(got['tip'])
        want_wall, want_mfu = self.step_truth(db, step)
        self.assertAlmostEqual(wall, want_wall, delta=0.0006)
        self.assertAlmostEqual(mfu, want_mfu, delta=0.006)
        # MFU over time: every interval reading of the run, drawn
        iv = json.loads(subprocess.run([REPORT, '--db', db, '--format', 'json', 'intervals'], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, timeout=120).stdout)
        self.assertGreater(len(iv), 0)
        self.assertEqual(int(got['timeline']['intervals']), len(iv))
        self.assertIn(got['timeline']['drawn'], ('intervals', 'buckets'))

    def test_odd_drawn(self):
        out, _ = self.write(self.odd, 'odd-drawn.html')
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        steps, with_mfu, names = db_counts(self.odd)
        self.assertEqual(got['points0'], with_mfu)   # step 3 declared nothing: a gap, not a 0
        self.assertEqual(with_mfu, steps - 1)
        self.assertEqual(got['phaseBars'], len(names))
        self.assertNotIn('<img', dom)
        self.assertIn('&lt;/script&gt;&lt;img src=', dom)   # the name, shown as text

    def test_empty_drawn(self):
        out, _ = self.write(self.empty, 'empty-drawn.html')
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        self.assertEqual(got['phaseBars'], 0)
        self.assertIn('No complete step', dom)
        self.assertEqual(got['timeline']['intervals'], '0')   # the fixture has no readings
        self.assertIn('No interval reading', got['timeline']['text'])

    def test_big_drawn(self):
        """100,000 steps: drawn as min/max per pixel column; zooming in
        reaches one point per step with its exact values."""
        self.need_chromium()
        db = getattr(HtmlTest, 'big', None) or self.path('big2.sqlite')
        if not os.path.exists(db):
            make_big(db, BIG)
        out, _ = self.write(db, 'big-drawn.html')
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        self.assertEqual(got['drawn0'], 'buckets')
        self.assertEqual(got['drawn1'], 'points', got['range'])
        self.assertGreater(got['points1'], 0)
        self.assertIn(' of %d' % BIG, got['range'])
        step, mfu, wall = self.tip_values(got['tip1'])
        want_wall, want_mfu = self.step_truth(db, step)
        self.assertAlmostEqual(wall, want_wall, delta=0.0006)
        self.assertAlmostEqual(mfu, want_mfu, delta=0.006)


def make_big(path, n):
    """A run of @n steps of about 1.1 ms, 3 phases each, every 997th step
    without declared FLOPs."""
    Fixture(path, nsteps=1, phases=False)
    con = sqlite3.connect(path)
    con.execute('DELETE FROM step')
    steps, phases = [], []
    t = START_NS + 1_000_000
    for i in range(n):
        wall = 1_000_000 + (i * 7919) % 200_000
        flops = None if i % 997 == 5 else 1.0e9 * (1 + (i % 13) / 100)
        steps.append((i, t, t + wall, wall, flops, 2.0e8, wall * 2))
        for k, name in enumerate(('data', 'forward', 'backward')):
            phases.append((3 * i + k, i, name, t + k * wall // 3, t + (k + 1) * wall // 3, wall // 3))
        t += wall + 50_000
    con.executemany('INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops,'
                    ' model_bytes, cpu_ns, complete) VALUES (?, 42, 42, 42, ?, ?, ?, ?, ?, ?, 1)', steps)
    con.executemany('INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete)'
                    ' VALUES (?, ?, ?, 42, 42, 0, ?, ?, ?, 1)', phases)
    con.commit()
    con.close()


if __name__ == '__main__':
    unittest.main()
