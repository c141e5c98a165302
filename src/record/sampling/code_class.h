/*
 * Code classes: what a function *is*, for the on-CPU breakdown. Each sampled
 * function ("library:function", library being the file's base name) is
 * matched against POSIX EREs, first those of compute kernels, then those of
 * synchronization waits, runtime layers (dispatch) and neutral helpers:
 *
 *   compute   BLAS, oneDNN, FFTW, gemm/conv/matmul kernels, --compute patterns
 *   sync      waiting for other threads: OpenMP and TBB runtimes, barriers,
 *             condition variables, futex waits, sched_yield, thread pools
 *   dispatch  interpreters (libpython...), framework dispatchers and autograd,
 *             pybind11, allocators, memcpy-style copies, locks, --dispatch
 *   neutral   libc, libm, libstdc++ and the loader otherwise: they take the
 *             class of their caller (exp() called from a kernel is the
 *             kernel's time, called from the interpreter the interpreter's)
 *   user      anything else: the program's own code, which mfu cannot tell
 *             compute from glue; mfu-report calls it "unclassified"
 *
 * A sample's class comes from its callchain (code_class_of_stack): compute
 * if any user frame is compute, else the class of the innermost user frame
 * that is not neutral, else unclassified.
 */
#ifndef MFU_CODE_CLASS_H
#define MFU_CODE_CLASS_H

#include <stddef.h>

enum code_class {
	CODE_USER = 0,     /* unclassified: the program's own code */
	CODE_COMPUTE = 1,
	CODE_DISPATCH = 2,
	CODE_SYNC = 3,
	CODE_NEUTRAL = 4,
};

struct code_classes;

/* The built-in patterns of each class, NULL-terminated (docs and tests). */
extern const char *const code_class_builtin_compute[];
extern const char *const code_class_builtin_sync[];
extern const char *const code_class_builtin_dispatch[];
extern const char *const code_class_builtin_neutral[];

/* A set holding the built-in patterns. Returns 0 or -errno (@why set). */
int code_classes_new(struct code_classes **out, char *why, size_t whylen);
void code_classes_free(struct code_classes *cc);

/* Add a user pattern of @cls (CODE_COMPUTE or CODE_DISPATCH); user patterns
 * are tried before the built-in ones of every class. Returns 0, -EINVAL for
 * a bad regular expression (@why says why) or -ENOMEM. */
int code_classes_add(struct code_classes *cc, enum code_class cls, const char *regex, char *why, size_t whylen);

/* The class of a function: @dso a path or base name (NULL: no file),
 * @name NULL when the symbol is unknown. A PLT stub ("foo@plt") matches as
 * an unknown function of its library; a function known only by its
 * .eh_frame bounds ("libfoo.so.1+0x1a2b0") matches like any name, so the
 * library's own patterns place it. */
enum code_class code_classes_match(const struct code_classes *cc, const char *dso, const char *name);

/* The patterns of @cls in the order they are tried, one per line, in a new
 * string (NULL: no memory); @user_only: only those added by the user. */
char *code_classes_patterns(const struct code_classes *cc, enum code_class cls, int user_only);

/* The class of a callchain from the classes of its user frames, innermost
 * first (n > 0); *@owner gets the index of the frame that decided it: the
 * innermost compute frame, else the innermost frame that is not neutral,
 * else 0. */
enum code_class code_class_of_stack(const enum code_class *frames, size_t n, size_t *owner);

/* The name a sample of this class gets in the database: compute, dispatch,
 * sync, unclassified (CODE_USER and an all-neutral chain). */
const char *code_class_name(enum code_class cls);

/* The name a symbol of this class gets (symbol.class): compute, dispatch,
 * sync, neutral, user. */
const char *code_class_symbol_name(enum code_class cls);

#endif
