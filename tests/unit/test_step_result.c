/* The results of the last step (mfu_last_step(), step_result.c) in the
 * in-process mode, not recorded: known declared FLOPs and bytes over the
 * step's measured wall time and the given peaks; the struct written only
 * as far as its size says; unknown is NAN with a reason, never 0. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mfu.h>

static int failed;
#define CHECK(c)                                                                 \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			failed = 1;                                              \
		}                                                                \
	} while (0)

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	struct mfu_step_result r;
	unsigned long long t0, t1;

	memset(&r, 0, sizeof(r));
	CHECK(mfu_last_step(NULL) == -EINVAL);
	r.size = 8;
	CHECK(mfu_last_step(&r) == -EINVAL);
	/* not measured: the markers are no-ops, nothing to give */
	r.size = sizeof(r);
	mfu_step_begin();
	mfu_step_end();
	CHECK(mfu_last_step(&r) == -ENOTSUP);
	CHECK(mfu_recording() == 0);

	CHECK(mfu_enable(2e9, 4e9, "the test's") == 0);
	CHECK(mfu_recording() == 0); /* the in-process mode is no recorder */
	CHECK(mfu_last_step(&r) == -ENODATA);

	/* 1e7 declared FLOPs (two calls add up) and 2e7 bytes in >= 20 ms */
	t0 = now_ns();
	mfu_step_begin();
	mfu_step_model(4e6, 2e7);
	mfu_step_model(6e6, NAN);
	mfu_step_model(-1, 5); /* invalid: ignored whole, as the recorder does */
	sleep_ms(20);
	mfu_step_end();
	t1 = now_ns();
	memset(&r, 0xff, sizeof(r));
	r.size = sizeof(r);
	CHECK(mfu_last_step(&r) == 0);
	CHECK(r.size == sizeof(r));
	CHECK(r.measured_by == MFU_MEASURED_INPROCESS);
	CHECK(r.step == 0);
	CHECK(r.wall_ns >= 20000000ull && r.wall_ns <= t1 - t0);
	CHECK(r.flops_source == MFU_FLOPS_DECLARED);
	CHECK(r.flops == 1e7 && r.model_flops == 1e7 && r.model_bytes == 2e7);
	CHECK(isnan(r.lib_flops)); /* library calls are counted under mfu-record only */
	CHECK(r.peak_flops == 2e9 && r.peak_bw == 4e9);
	CHECK(r.peak_source && strcmp(r.peak_source, "the test's") == 0);
	CHECK(r.mfu == 1e7 / ((double)r.wall_ns / 1e9 * 2e9));
	CHECK(r.mbu == 2e7 / ((double)r.wall_ns / 1e9 * 4e9));
	CHECK(r.flops_per_s == 1e7 / ((double)r.wall_ns / 1e9));
	CHECK(r.why == NULL);

	/* an older, shorter struct: only its bytes are written */
	{
		unsigned char buf[sizeof(struct mfu_step_result) + 16];
		struct mfu_step_result *p = (struct mfu_step_result *)buf;
		size_t part = offsetof(struct mfu_step_result, why) + sizeof(p->why);
		memset(buf, 0xab, sizeof(buf));
		p->size = (unsigned)part;
		CHECK(mfu_last_step(p) == 0);
		CHECK(p->size == part && p->wall_ns == r.wall_ns);
		for (size_t i = part; i < sizeof(buf); i++)
			CHECK(buf[i] == 0xab);
	}

	/* no FLOPs declared, no peak: NAN with a reason, never 0 */
	CHECK(mfu_enable(NAN, NAN, NULL) == 0);
	mfu_step_begin();
	mfu_step_end();
	CHECK(mfu_last_step(&r) == 0);
	CHECK(r.step == 1);
	CHECK(r.flops_source == MFU_FLOPS_UNKNOWN && isnan(r.flops) && isnan(r.mfu) && isnan(r.mbu));
	CHECK(r.why && strstr(r.why, "declared no FLOPs"));
	mfu_step_begin();
	mfu_step_model(1e6, NAN);
	mfu_step_end();
	CHECK(mfu_last_step(&r) == 0);
	CHECK(r.flops == 1e6 && isnan(r.mfu) && isnan(r.peak_flops) && r.peak_source == NULL);
	CHECK(r.why && strstr(r.why, "mfu-calibrate"));

	/* an end without a begin changes nothing; a begin while a step is
	 * open restarts it (the recorder keeps the older one incomplete) */
	mfu_step_end();
	CHECK(mfu_last_step(&r) == 0 && r.step == 2);
	mfu_step_begin();
	mfu_step_model(5, NAN);
	mfu_step_begin();
	mfu_step_end();
	CHECK(mfu_last_step(&r) == 0 && r.step == 4 && isnan(r.flops));

	/* off again: no-ops, the last result stays */
	mfu_disable();
	mfu_step_begin();
	mfu_step_end();
	CHECK(mfu_last_step(&r) == 0 && r.step == 4);
	return failed;
}
