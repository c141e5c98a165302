/*
 * misuse: every way to get the markers wrong, in a known order, for the
 * anomaly tests. Each line below is one expected anomaly (see
 * tests/e2e/test_record.py).
 */
#include <math.h>
#include <string.h>

#include "mfu.h"

int main(void)
{
	char long_name[200];

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';

	mfu_step_end();                 /* step_end_without_begin */
	mfu_step_model(1, 1);           /* model_outside_step */
	mfu_phase_end("nothing");       /* phase_end_without_begin */

	mfu_step_begin();               /* step 0 */
	mfu_step_model(INFINITY, 0);    /* bad_model_value (NAN would be "unknown") */
	mfu_step_model(-5, 0);          /* bad_model_value */
	mfu_step_model(100, 10);
	mfu_step_begin();               /* step_begin_while_open: step 0 incomplete, step 1 */
	mfu_phase_begin("outer");
	mfu_phase_begin("inner");
	mfu_phase_end("outer");         /* phase_end_mismatch: inner incomplete */
	mfu_phase_begin(NULL);          /* phase_null_name */
	mfu_phase_end(NULL);
	mfu_phase_begin(long_name);     /* name_truncated */
	mfu_phase_end(long_name);       /* ends the truncated phase (matched by prefix) */
	mfu_phase_model(5, 5);          /* model_outside_phase */
	mfu_step_end();                 /* step 1 complete */
	mfu_step_begin();               /* step 2 */
	mfu_phase_begin("dangling");    /* phase_open_at_exit */
	return 0;                       /* step_open_at_exit */
}
