/* A library that nomark --plugin loads with dlopen after it started: its
 * function is probed from the recorder's view of the new mapping. */
#include <stdint.h>
#include <time.h>

void plugin_step(long busy_us);

__attribute__((noinline)) void plugin_step(long busy_us)
{
	struct timespec ts;
	uint64_t end, now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (uint64_t)busy_us * 1000;
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	} while (now < end);
	__asm__ volatile("" ::: "memory");
}
