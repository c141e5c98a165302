/*
 * Emulated runs in reports (mfu-record --emulate, run.emulated set): the
 * run table seen without peaks, so that no MFU, HFU or MBU is made of the
 * emulator's times; and mfu-report --hw-flops-from, which gives a native
 * run the counted FLOPs of an emulated (or PMU-counted) run of the same
 * program, matched by step index.
 */
#ifndef MFU_REPORT_EMULATED_H
#define MFU_REPORT_EMULATED_H

#include <sqlite3.h>
#include <stddef.h>

/* When the run in @db is emulated: a TEMP view that shadows the run table
 * with its peaks NULL (SQLite finds a TEMP name first). Returns 1 when the
 * run is emulated, 0 when not, or -EIO with @err set. */
int emulated_run_view(sqlite3 *db, char *err, size_t errlen);

/* --hw-flops-from @path: attach it as "hwf" and make the TEMP views
 * mfu_hw_step and mfu_hw_phase: main's steps and phases with the counted
 * FLOPs (hw_flops, by precision, hw_fraction) of the step of the same index
 * in @path, and of the phase of the same name and occurrence in it; NULL
 * where nothing matches. The notes saying where the counts come from and
 * what did not match go into the TEMP table mfu_hw_note (id, kind, text).
 * Returns 0; -EINVAL when @path cannot give counts to this run (said in
 * @err: not an mfu database, another program, no counted FLOPs, or the
 * run in @db is emulated itself); -EIO on an SQLite error. */
int emulated_hw_from(sqlite3 *db, const char *path, char *err, size_t errlen);

#endif
