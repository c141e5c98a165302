/*
 * Where mfu-record finds its own files: the counting library, libmfu (for
 * mfu.py), the Python hook and module, the emulator's tool directory,
 * mfu-report.
 *
 * Run from its build directory, the build's (and the source tree's Python
 * files). Installed, the paths compiled in from --prefix; a copy whose
 * bin directory is not the configured one (a prefix moved elsewhere, or
 * staged with meson install --destdir) finds them relative to itself:
 * PREFIX is what its bin directory leaves when the configured bindir's
 * part under the prefix ("/bin") is taken off its end, and a file is used
 * there when it exists.
 */
#ifndef MFU_PATHS_H
#define MFU_PATHS_H

enum paths_file {
	PATHS_LIBMFU,     /* libmfu.so.0 */
	PATHS_LIBFLOPS,   /* libmfu-libflops.so, the counting library */
	PATHS_PYTHON,     /* the directory of mfu.py and the Python hook */
	PATHS_EMULATE,    /* the directory VALGRIND_LIB names (mfufp) */
	PATHS_REPORT,     /* mfu-report, which prints the recap at exit */
	PATHS_NFILES,
};

/* 1 when this recorder runs from its build directory. */
int paths_in_build(void);

/* The path of @f for this recorder (see above); never NULL. */
const char *paths_get(enum paths_file f);

#endif
