/*
 * The uncore module's private half: uncore.c discovers the memory
 * controllers in sysfs and plans their events, uncore_count.c opens and
 * reads them.
 */
#ifndef MFU_UNCORE_IMPL_H
#define MFU_UNCORE_IMPL_H

#include "uncore.h"
#include "cpumap.h"
#include "perf_event.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GROUP_MAX 4       /* events per group: read + write of one PMU and CPU */
#define MAX_CANDIDATES 128
#define LINE_BYTES 64.0
#define DF_EVENT_MASK_ZEN1_3 (0xffull | (0xfull << 32) | (0x3ull << 59))

/*
 * The events wanted per kind, by the names the kernel's aliases use; the
 * first name a PMU has wins. AMD's kernel driver exports no aliases, so
 * its encodings are built in, from perf's event tables
 * (tools/perf/pmu-events/arch/x86/amdzen4/memory-controller.json:
 * umc_cas_cmd.rd/.wr; amdzen2,3/data-fabric.json:
 * dram_channel_data_controller_0..7, "Requests with Data (64B)"), and are
 * used only when sysfs has no alias of that name.
 */
struct want {
	enum uncore_dir dir;
	const char *names[3];
	const char *builtin; /* alias when sysfs has none, or NULL */
};
struct candidate {
	char name[48];
	enum uncore_kind kind;
	int index;
};



#endif
