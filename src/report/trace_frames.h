/*
 * The sampled callchains as the trace format's stack frames: a tree of
 * frames ("stackFrames": {"ID": {"name", "category", "parent"}}), one node
 * per distinct path from the outermost frame, shared by every callchain
 * that passes through it, and each stored stack's innermost node, which a
 * sample event names with "sf" (Perfetto and chrome://tracing draw it as
 * the sample's stack).
 */
#ifndef MFU_REPORT_TRACE_FRAMES_H
#define MFU_REPORT_TRACE_FRAMES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct trace_frames;

/* Build the tree from the stack_frame and symbol tables of @db. Returns 0,
 * -ENOMEM, or -EIO with the SQLite error in @err. */
int trace_frames_build(sqlite3 *db, struct trace_frames **out, char *err, size_t errlen);

/* The innermost node of stack @stack, or -1 (no such stack, no frame). */
int64_t trace_frames_leaf(const struct trace_frames *f, int64_t stack);

/* How many nodes the tree has. */
size_t trace_frames_count(const struct trace_frames *f);

/* The "stackFrames" object's text, {...}, malloc'd into *@text (*@len
 * bytes). Returns 0 or -ENOMEM. */
int trace_frames_json(const struct trace_frames *f, char **text, size_t *len);

void trace_frames_free(struct trace_frames *f);

#endif
