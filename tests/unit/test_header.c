/* mfu.h compiles as C99 -pedantic (and, in test_header_cxx.cc, as C++), and
 * the markers are harmless no-ops when the process is not recorded. */
#include <mfu.h>

int main(void)
{
	mfu_step_begin();
	mfu_step_model(1.0, 2.0);
	mfu_phase_begin("forward");
	mfu_phase_model(1.0, 2.0);
	mfu_phase_end("forward");
	mfu_phase_end(0);
	mfu_step_end();
	mfu_step_end(); /* misuse is no crash */
	return mfu_recording() != 0; /* not recorded here */
}
