/* The live line on a terminal (live.h). */
#include "live.h"
#include "libflops.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 1000000000ull
/* Step times go into buckets 1% wide from 1 us to about 50 min: the median
 * is known to 1% without keeping every step. */
#define HIST_MIN_NS 1000.0
#define HIST_STEP 1.01
#define HIST_N 2200

struct live {
	FILE *out;
	int on;
	int drawn;               /* a line is on the screen */
	int rows;                /* with a status row: the terminal's rows; 0: the line is drawn in place */
	uint64_t start_ns, last_draw_ns, end_ns;
	uint64_t steps;
	uint64_t last_wall_ns;
	double flops, flops_ns;  /* MFU numerator and the time of its steps */
	double hw, hw_ns;
	double bytes, bytes_ns;
	uint64_t hist[HIST_N];
	double peak_flops, peak_bw;
	uint64_t lost;
	double lib_flops;        /* the whole run's library FLOPs so far; < 0: not counted */
};

struct live *live_new(FILE *out, int enabled, uint64_t start_ns)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->out = out;
	const char *term = getenv("TERM");

	/* a terminal that moves no cursor cannot redraw a line */
	l->on = enabled && out && isatty(fileno(out)) && !(term && !strcmp(term, "dumb"));
	l->start_ns = start_ns;
	l->last_draw_ns = start_ns;
	l->lib_flops = -1;
	return l;
}

void live_free(struct live *l)
{
	if (!l)
		return;
	live_end(l);
	free(l);
}

int live_active(const struct live *l)
{
	return l && l->on;
}

static int bucket(uint64_t ns)
{
	double b = ns <= HIST_MIN_NS ? 0 : log((double)ns / HIST_MIN_NS) / log(HIST_STEP);
	return b >= HIST_N - 1 ? HIST_N - 1 : (int)b;
}

/* The median step time: the middle of the bucket holding the middle step. */
static double median_ns(const struct live *l)
{
	uint64_t seen = 0, half = (l->steps + 1) / 2;

	for (int i = 0; i < HIST_N; i++) {
		seen += l->hist[i];
		if (seen >= half)
			return HIST_MIN_NS * pow(HIST_STEP, i + 0.5);
	}
	return 0;
}

void live_step(struct live *l, const struct interval_row *row)
{
	double w, lib = 0;

	if (!l || !l->on || !row->complete || row->end_ns < row->begin_ns)
		return;
	w = (double)(row->end_ns - row->begin_ns);
	l->steps++;
	l->last_wall_ns = row->end_ns - row->begin_ns;
	l->hist[bucket(l->last_wall_ns)]++;
	for (int k = 0; k < LIBFLOPS_NPREC; k++)
		lib += (double)row->d.lib[LIBFLOPS_W_FLOPS + k];
	/* the numerator the report uses: declared, else the library's */
	if (row->has_model & MODEL_FLOPS) {
		l->flops += row->model_flops;
		l->flops_ns += w;
	} else if (row->d.has_lib && lib > 0) {
		l->flops += lib;
		l->flops_ns += w;
	}
	if (!row->interpolated && counters_hw_flops(&row->d) >= 0) {
		l->hw += counters_hw_flops(&row->d);
		l->hw_ns += w;
	}
	if (row->has_model & MODEL_BYTES) {
		l->bytes += row->model_bytes;
		l->bytes_ns += w;
	}
}

static void fmt_time(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		strbuf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		strbuf(buf, len, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		strbuf(buf, len, "%.3g ms", ns / 1e6);
	else
		strbuf(buf, len, "%.3g s", ns / 1e9);
}

/* " MFU 12.3%" from @num over @ns at @peak, or "" when unknown; above
 * 10,000% (a target declaring 1e300 FLOPs) "impossible", as mfu-report
 * says, rather than digits cut at @len. The one utilization made outside
 * the report's views (analyses/views.sql, step_totals.mfu): the line is
 * redrawn every second from sums kept as the steps arrive, while the
 * writer still holds them; reading the views would scan every step stored
 * so far at each redraw. The final figures are the report's, at exit. */
static void fmt_util(char *buf, size_t len, const char *what, double num, double ns, double peak)
{
	double u = ns > 0 && peak > 0 ? num / (ns / 1e9 * peak) : NAN;

	buf[0] = '\0';
	if (u > 100)
		strbuf(buf, len, ", %s impossible", what);
	else if (isfinite(u))
		strbuf(buf, len, ", %s %.1f%%", what, 100.0 * u);
}

static void term_size(const struct live *l, int *rows, int *cols)
{
	struct winsize ws;

	*rows = 0;
	*cols = 80;
	if (ioctl(fileno(l->out), TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		if (ws.ws_col >= 20)
			*cols = ws.ws_col;
	}
}

/* The status row: the terminal's last row, kept out of the scrolling
 * region (as apt's progress bar does), so that the program's own output,
 * on the same terminal, scrolls above it and never runs into the line. */
static void reserve_row(struct live *l, int rows)
{
	/* a newline first: the region shrinks by the row the cursor may be
	 * on; then save the cursor, set the region (which homes the cursor),
	 * restore it and step back up into the region */
	fprintf(l->out, "\n\0337\033[1;%dr\0338\033[1A", rows - 1);
	l->rows = rows;
}

static void release_row(struct live *l)
{
	fprintf(l->out, "\0337\033[1;%dr\033[%d;1H\033[K\0338", l->rows, l->rows);
	l->rows = 0;
}

/* Draw @text in the status row (or over the previous line, in place, when
 * the terminal's size is unknown), cut to the terminal's width: a line
 * that wraps could not be redrawn. */
static void draw(struct live *l, const char *text)
{
	int rows, cols;

	term_size(l, &rows, &cols);
	if (l->rows && rows != l->rows)
		release_row(l); /* resized: set the region again */
	if (!l->rows && !l->drawn && rows >= 3)
		reserve_row(l, rows);
	if (l->rows)
		fprintf(l->out, "\0337\033[%d;1H%.*s\033[K\0338", l->rows, cols - 1, text);
	else
		fprintf(l->out, "\r%.*s\033[K", cols - 1, text);
	fflush(l->out);
	l->drawn = 1;
}

void live_tick(struct live *l, uint64_t now_ns, double peak_flops, double peak_bw, uint64_t lost)
{
	char line[512], last[32], med[32], mfu[48], hfu[48], mbu[48], lostbuf[48] = "";

	if (!l || !l->on || now_ns - l->last_draw_ns < REDRAW_NS)
		return;
	l->last_draw_ns = now_ns;
	l->peak_flops = peak_flops;
	l->peak_bw = peak_bw;
	l->lost = lost;
	fmt_util(mfu, sizeof(mfu), "MFU", l->flops, l->flops_ns, peak_flops);
	fmt_util(hfu, sizeof(hfu), "HFU", l->hw, l->hw_ns, peak_flops);
	fmt_util(mbu, sizeof(mbu), "MBU", l->bytes, l->bytes_ns, peak_bw);
	if (lost)
		strbuf(lostbuf, sizeof(lostbuf), ", %llu records lost", (unsigned long long)lost);
	if (l->steps) {
		fmt_time(last, sizeof(last), (double)l->last_wall_ns);
		fmt_time(med, sizeof(med), median_ns(l));
		strbuf(line, sizeof(line), "mfu-record: %.0f s, %llu steps, last %s, median %s%s%s%s%s",
		       (double)(now_ns - l->start_ns) / 1e9, (unsigned long long)l->steps, last, med, mfu, hfu,
		       mbu, lostbuf);
	} else if (l->lib_flops >= 0) {
		/* no step (yet): what the whole run did so far, as the summary
		 * will say (run_lib_flops, run_mfu) */
		char run[48];
		fmt_util(run, sizeof(run), "run MFU", l->lib_flops, (double)(now_ns - l->start_ns), peak_flops);
		strbuf(line, sizeof(line), "mfu-record: %.0f s, no step yet, library %.3g GFLOP%s%s",
		       (double)(now_ns - l->start_ns) / 1e9, l->lib_flops / 1e9, l->lib_flops > 0 ? run : "",
		       lostbuf);
	} else {
		strbuf(line, sizeof(line), "mfu-record: %.0f s, no step yet%s", (double)(now_ns - l->start_ns) / 1e9,
		       lostbuf);
	}
	draw(l, line);
}

void live_lib(struct live *l, double flops)
{
	if (l)
		l->lib_flops = flops;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void live_stage(struct live *l, const char *what)
{
	char line[256];
	uint64_t now;

	if (!l || !l->on)
		return;
	/* drawn at once: a stage that runs long (symbolizing a big run's
	 * samples) has no chance to redraw while it runs; after a quick one
	 * the summary replaces the line at once */
	now = mono_ns();
	if (!l->end_ns)
		l->end_ns = now;
	strbuf(line, sizeof(line), "mfu-record: %llu steps; finishing: %s (%.1f s)", (unsigned long long)l->steps,
	       what, (double)(now - l->end_ns) / 1e9);
	draw(l, line);
}

void live_clear(struct live *l)
{
	/* in its own row the line is in nobody's way: it stays until the end */
	if (!l || !l->on || !l->drawn || l->rows)
		return;
	fputs("\r\033[K", l->out);
	fflush(l->out);
	l->drawn = 0;
}

void live_end(struct live *l)
{
	if (!l || !l->on || !l->drawn)
		return;
	if (l->rows)
		release_row(l);
	else
		fputs("\r\033[K", l->out);
	fflush(l->out);
	l->drawn = 0;
}
