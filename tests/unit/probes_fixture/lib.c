/* The fixture's shared library: a function and a USDT probe in a DT_NEEDED
 * library (its .stapsdt.base and segments differ from the executable's). */
#include <sys/sdt.h>

volatile long fixture_lib_sink;

int fixture_lib_work(int i);

__attribute__((noinline)) int fixture_lib_work(int i)
{
	STAP_PROBE1(fixturelib, libtick, i);
	fixture_lib_sink += i;
	return i & 1;
}
