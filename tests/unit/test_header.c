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
	/* the FLOP helpers, against hand computation */
	if (mfu_flops_gemm(2, 3, 4) != 48 || mfu_flops_gemv(3, 5) != 30 ||
	    mfu_flops_conv2d(2, 3, 8, 10, 10, 3, 3, 1) != 2.0 * 2 * 8 * 10 * 10 * 3 * 3 * 3 ||
	    mfu_flops_conv2d(1, 4, 4, 1, 1, 1, 1, 4) != 8 ||
	    mfu_flops_attention(2, 4, 16, 32, 8) != 4.0 * 2 * 4 * 16 * 32 * 8 ||
	    mfu_flops_train(1e9, 2048) != 6.0 * 1e9 * 2048 ||
	    mfu_flops_gemm(1 << 20, 1 << 20, 1 << 20) != 2.0 * 1099511627776.0 * 1048576.0)
		return 2;
	return mfu_recording() != 0; /* not recorded here */
}
