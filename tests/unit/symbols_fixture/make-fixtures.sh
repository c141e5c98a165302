#!/bin/sh
# Build test_symbols' fixture libraries from symfix.c into OUTDIR:
#   libsymfix.so            -g, not stripped: the reference
#   libsymfix-stripped.so   strip --strip-all: .dynsym and .eh_frame only
#   libsymfix-debuglink.so  stripped, with a .gnu_debuglink to symfix.debug
#   symfix.debug            objcopy --only-keep-debug (the test puts it
#                           under a debug root of its own)
#   libsymfix-mini.so       stripped, with MiniDebugInfo (.gnu_debugdata:
#                           an xz-compressed ELF whose .symtab has the
#                           functions .dynsym lacks), Fedora's recipe
#   libsymfix-ibt.so        stripped, IBT PLT (-fcf-protection, -z ibtplt:
#                           .plt.sec) when the toolchain can
#   symfix.plt, symfix-ibt.plt  the PLT stubs as objdump names them
#                           ("ADDRESS NAME@plt" per line): the test's truth
#
# usage: make-fixtures.sh OUTDIR SRC OBJCOPY STRIP OBJDUMP NM XZ CC [CC args...]
set -eu
out=$1 src=$2 objcopy=$3 strip=$4 objdump=$5 nm=$6 xz=$7
shift 7
src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
cd "$out"
tmp=symfix.tmp
rm -rf "$tmp"
mkdir "$tmp"

"$@" -shared -fPIC -O1 -g -fvisibility=hidden -o libsymfix.so "$src"

"$strip" --strip-all -o libsymfix-stripped.so libsymfix.so

"$objcopy" --only-keep-debug libsymfix.so symfix.debug
"$strip" --strip-all -o libsymfix-debuglink.so libsymfix.so
"$objcopy" --add-gnu-debuglink=symfix.debug libsymfix-debuglink.so

# MiniDebugInfo, as gdb's manual and Fedora's find-debuginfo make it
"$nm" -D libsymfix.so --format=posix --defined-only | awk '{ print $1 }' | sort > "$tmp/dynsyms"
"$nm" libsymfix.so --format=posix --defined-only | awk '{ if ($2 == "T" || $2 == "t") print $1 }' |
	sort > "$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep_symbols"
"$objcopy" -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/keep_symbols" \
	symfix.debug "$tmp/mini_debuginfo"
"$xz" -f "$tmp/mini_debuginfo"
"$strip" --strip-all -R .comment -o libsymfix-mini.so libsymfix.so
"$objcopy" --add-section .gnu_debugdata="$tmp/mini_debuginfo.xz" libsymfix-mini.so

if "$@" -shared -fPIC -O1 -fvisibility=hidden -fcf-protection=full -Wl,-z,ibtplt \
	-o "$tmp/ibt.so" "$src" 2>/dev/null; then
	"$strip" --strip-all -o libsymfix-ibt.so "$tmp/ibt.so"
else
	cp libsymfix-stripped.so libsymfix-ibt.so
fi

# objdump's "0000000000001030 <getpid@plt>:" -> "0000000000001030 getpid@plt",
# and the IFUNC's "<*ABS*+0x11d1@plt>" (its IRELATIVE slot names no symbol)
plt='s/^\([0-9a-f]*\) <\([^>+]*@plt\|\*ABS\*+0x[0-9a-f]*@plt\)>:$/\1 \2/p'
"$objdump" -d libsymfix.so | sed -n "$plt" > symfix.plt
"$objdump" -d libsymfix-ibt.so | sed -n "$plt" > symfix-ibt.plt
rm -rf "$tmp"
