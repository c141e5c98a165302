#!/usr/bin/env python3
"""Make the directory that VALGRIND_LIB names for the mfufp tool: a symbolic
link to every file of the system Valgrind's own directory (the core's
preload library, default.supp, the gdbserver descriptions, the other tools)
plus one to the tool built next to it.

    valgrind_lib.py CORE_DIR TOOL OUT_DIR STAMP

Valgrind looks for TOOL and the core's files in the one directory
VALGRIND_LIB names; the tool cannot go into CORE_DIR, which belongs to the
system's package."""
import os
import sys


def main():
    if len(sys.argv) != 5:
        sys.stderr.write('usage: valgrind_lib.py CORE_DIR TOOL OUT_DIR STAMP\n')
        return 2
    core, tool, out, stamp = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    tool_name = os.path.basename(tool)
    wanted = {name: os.path.join(core, name) for name in os.listdir(core) if name != tool_name}
    # relative, so that the build directory can move
    wanted[tool_name] = os.path.relpath(os.path.abspath(tool), os.path.abspath(out))
    for name in os.listdir(out):
        if name not in wanted:
            os.unlink(os.path.join(out, name))
    for name, target in sorted(wanted.items()):
        link = os.path.join(out, name)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    with open(stamp, 'w') as f:
        f.write('%s\n' % os.path.abspath(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
