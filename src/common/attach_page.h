/*
 * The attach page: how mfu-record -p finds the libmfu of a process that is
 * already running, and switches its markers on and off.
 *
 * libmfu, loaded in a process that mfu-record did not start, makes a memfd
 * called MFU_ATTACH_NAME ("/memfd:mfu-attach (deleted)" in /proc/PID/fd),
 * sized MFU_ATTACH_PAGE bytes of this page and a marker ring of
 * nslots records after it, with its size sealed (a recorder that maps it
 * can never take a SIGBUS from a shrunk file). It maps the whole memfd:
 * only the page is touched; the ring costs no memory until a recorder
 * comes. Its markers test `on` in the page: 0 costs what a marker of a
 * process nobody records costs, one load and a branch.
 *
 * mfu-record -p PID finds the memfd among the process's descriptors, maps
 * it, claims it (owner: 0 -> its pid), makes a ring in it (mring_init,
 * no counter groups), bumps gen and sets on. The next marker of any thread
 * sees on, takes the ring of that generation once (accepted_gen; it checks
 * the header against the geometry it made room for and never uses one it
 * did not: refused_gen) and writes its boundaries there, with times and no
 * counter readings (MRING_F_UNREAD). Detaching sets on to 0, releases the
 * owner and frees the ring's pages (they are the process's own memory).
 *
 * A forked child makes a page of its own (the recorder joined one process).
 * Everything here crosses a process boundary: magic, version and sizes, and
 * tests/unit/test_marker_ring.c pins the layout.
 */
#ifndef MFU_ATTACH_PAGE_H
#define MFU_ATTACH_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define MFU_ATTACH_MAGIC 0x65676170416d666dULL /* "mfmApage" */
#define MFU_ATTACH_VERSION 1
#define MFU_ATTACH_NAME "mfu-attach"
#define MFU_ATTACH_PAGE 4096u      /* the page; the ring's header follows it */
#define MFU_ATTACH_RECORDS 16384u  /* the ring's slots (9.4 MB, touched only when attached) */
/* An environment variable that keeps libmfu from making the page (no
 * descriptor, no memfd; mfu-record -p then cannot switch its markers on). */
#define MFU_ENV_NO_ATTACH "MFU_NO_ATTACH"

struct mfu_attach_page {
	/* written once by libmfu, when it makes the page */
	uint64_t magic;
	uint32_t version;
	uint32_t page_size;   /* MFU_ATTACH_PAGE: where the ring's header is */
	uint64_t nslots;      /* the ring's slots, fixed by libmfu (a power of two) */
	uint64_t size;        /* bytes of the memfd: page and ring */
	int32_t pid;          /* the process that made it */
	uint32_t reserved0;
	char lib[32];         /* libmfu's version, NUL-terminated */
	uint8_t pad0[56];
	/* written by the recorder (offset 128) */
	uint32_t on;          /* nonzero: markers write into the ring of gen */
	uint32_t gen;         /* the ring's generation: one per attach */
	int32_t owner;        /* pid of the mfu-record attached, 0: none */
	uint32_t reserved1;
	uint8_t pad1[48];
	/* written by libmfu (offset 192) */
	uint32_t accepted_gen; /* the last generation whose ring it writes into */
	uint32_t refused_gen;  /* the last one it would not (a header it did not make room for) */
	uint8_t pad2[56];
};

_Static_assert(sizeof(struct mfu_attach_page) == 256, "the attach page's layout is pinned");
_Static_assert(offsetof(struct mfu_attach_page, on) == 128, "the attach page's layout is pinned");
_Static_assert(offsetof(struct mfu_attach_page, accepted_gen) == 192, "the attach page's layout is pinned");

#endif
