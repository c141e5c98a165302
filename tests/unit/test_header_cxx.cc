// mfu.h compiles as C++ and links against libmfu from C++.
#include <mfu.h>

int main()
{
	mfu_step_begin();
	mfu_phase_begin("forward");
	mfu_phase_end("forward");
	mfu_step_end();
	if (mfu_flops_gemm(2, 3, 4) != 48)
		return 2;
	return mfu_recording() != 0;
}
