/*
 * The library behind test_symbols' stripped-binary cases (see
 * make-fixtures.sh, which builds it and its stripped, debug-file,
 * MiniDebugInfo and IBT variants). Two internal functions side by side
 * (nothing exports them: a stripped copy knows them only from .eh_frame),
 * calls to libc through the PLT, and an exported assembly function without
 * a size followed by a hidden one: the exported one must not swallow its
 * neighbour; and an IFUNC of its own called through its PLT.
 */
#include <stdint.h>
#include <unistd.h>

/* the exported API: everything else is hidden */
#define API __attribute__((visibility("default")))

API int symfix_entry(int x);
API void symfix_addrs(uintptr_t out[4]);
API int symfix_exported(int x);
API void symfix_nosize(void);

void symfix_hidden_asm(void) __attribute__((visibility("hidden")));

__attribute__((noinline)) static int symfix_one(int x)
{
	return (int)getpid() * x + 1;
}

__attribute__((noinline)) static int symfix_two(int x)
{
	return (int)getppid() * 3 - symfix_one(x);
}

__attribute__((noinline)) int symfix_exported(int x)
{
	return x * 5 + 2;
}

int symfix_entry(int x)
{
	return symfix_two(x) + symfix_one(x + 1) + symfix_exported(x);
}

/* symfix_nosize: exported, no .size, so st_size 0; symfix_hidden_asm right
 * after it, with its own CFI (an FDE) but no exported symbol */
__asm__(".text\n"
	".globl symfix_nosize\n"
	".type symfix_nosize, @function\n"
	"symfix_nosize:\n"
	".cfi_startproc\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".globl symfix_hidden_asm\n"
	".hidden symfix_hidden_asm\n"
	".type symfix_hidden_asm, @function\n"
	"symfix_hidden_asm:\n"
	".cfi_startproc\n"
	"nop\n"
	"nop\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n");

/* Where the functions are in this process, for the test's truth. */
void symfix_addrs(uintptr_t out[4])
{
	out[0] = (uintptr_t)symfix_one;
	out[1] = (uintptr_t)symfix_two;
	out[2] = (uintptr_t)symfix_nosize;
	out[3] = (uintptr_t)symfix_hidden_asm;
}

/* An IFUNC of the library itself, called through its own PLT: the GOT slot
 * is filled by an R_X86_64_IRELATIVE relocation, and no symbol names the
 * stub (objdump and perf call it "*ABS*+0xRESOLVER@plt", as libc's string
 * functions). */
static int symfix_ifunc_impl(int x)
{
	return x + 7;
}

static int (*symfix_ifunc_resolve(void))(int)
{
	return symfix_ifunc_impl;
}

int symfix_ifunc(int x) __attribute__((ifunc("symfix_ifunc_resolve")));

API int symfix_call_ifunc(int x);
int symfix_call_ifunc(int x)
{
	return symfix_ifunc(x) * 2;
}
