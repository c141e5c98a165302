/* A USDT probe guarded by a semaphore: every probe of this file refers to
 * PROVIDER_NAME_semaphore, which the kernel increments (ref_ctr_offset)
 * while a uprobe is attached. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ volatile unsigned short fixture_guarded_semaphore
	__attribute__((unused, section(".probes")));

int fixture_fire_guarded(int i);

__attribute__((noinline)) int fixture_fire_guarded(int i)
{
	if (fixture_guarded_semaphore) {
		STAP_PROBE1(fixture, guarded, i);
		return 1;
	}
	return 0;
}
