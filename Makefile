# Thin wrapper over meson: `make demo` and `make check` work on a fresh clone
# (they install missing packages first when run as root). docs/testing.md
# describes every check.
BUILD ?= build
MESON_OPTS ?=
ASAN_BUILD ?= build-asan
# UBSan stops at its first report: -fno-sanitize-recover here, and
# halt_on_error for anything built without it.
SANITIZE_OPTS = -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=undefined -Dcpp_args=-fno-sanitize-recover=undefined
VALGRIND = valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--error-exitcode=99

.PHONY: all deps deps-build build demo check check-sanitize check-valgrind check-builds bench clean

all: build

# What building and the demo need; `make check` adds what the tests use
# (tools/install-deps says which is which).
deps-build:
	@tools/install-deps build

deps:
	@MFU_DEPS_STAMP=$(BUILD)/.deps-installed tools/install-deps test

build: deps-build
	@test -f $(BUILD)/build.ninja || meson setup $(BUILD) $(MESON_OPTS)
	@# packages installed since the build was configured (make check after
	@# make demo): meson finds the optional ones now
	@if [ -f $(BUILD)/.deps-installed ]; then meson setup --reconfigure $(BUILD) $(MESON_OPTS) && rm -f $(BUILD)/.deps-installed; fi
	ninja -C $(BUILD)

demo: build
	$(BUILD)/src/record/mfu-record -q -o demo.sqlite -- $(BUILD)/tests/workloads/wl_mlp
	$(BUILD)/src/report/mfu-report --db demo.sqlite phases
	@echo
	$(BUILD)/src/report/mfu-report --db demo.sqlite summary
	@echo
	@echo "More: $(BUILD)/src/report/mfu-report --db demo.sqlite steps waterfall breakdown gaps dispatch peaks"

check: deps
	@$(MAKE) --no-print-directory build
	tools/run-tests $(BUILD)

# The whole suite under ASan + UBSan, in its own build directory.
check-sanitize: deps
	@test -f $(ASAN_BUILD)/build.ninja || meson setup $(ASAN_BUILD) $(SANITIZE_OPTS)
	ninja -C $(ASAN_BUILD)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 tools/run-tests $(ASAN_BUILD)

# mfu-report under valgrind memcheck: every format with every section alone
# and all together, on a run of the demo workload (40 steps: every table
# filled, and the slower sections stay seconds under valgrind), then the
# error paths (no file, an empty file, a random file, a bad option). Any
# memcheck error, definite or indirect leak, or unexpected exit status
# fails. The runs are independent and each uses one CPU: as many run at
# once as there are CPUs (VALGRIND_JOBS), their results reported in order.
# Ends with "N passed, N failed".
VALGRIND_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check-valgrind: SHELL := /bin/bash
check-valgrind: build
	@dir=$(BUILD)/valgrind; report=$(BUILD)/src/report/mfu-report; \
	rm -rf $$dir && mkdir -p $$dir || exit 1; \
	if ! $(BUILD)/src/record/mfu-record --no-calibrate -o $$dir/demo.sqlite -- \
		$(BUILD)/tests/workloads/wl_mlp --steps 40 >$$dir/record.log 2>&1; then \
		cat $$dir/record.log; echo "check-valgrind: cannot record the demo workload"; \
		echo "0 passed, 1 failed"; exit 1; \
	fi; \
	sections=$$($$report --list | awk '{ print $$1 }'); \
	formats=$$($$report --help | sed -n 's/.*-f, --format FORMAT *\([a-z|]*\).*/\1/p' | tr '|' ' '); \
	: >$$dir/empty.sqlite; head -c 4096 /dev/urandom >$$dir/random.sqlite; \
	passed=0; failed=0; n=0; \
	check() { \
		n=$$((n + 1)); printf '%s\n' "$$*" >$$dir/cmd.$$n; shift; \
		( $(VALGRIND) --log-file=$$dir/vg.$$n.log $$report "$$@" >$$dir/out.$$n 2>&1; \
			echo $$? >$$dir/rc.$$n ) & \
		while [ "$$(jobs -rp | wc -l)" -ge $(VALGRIND_JOBS) ]; do wait -n; done; \
	}; \
	for f in $$formats; do \
		for s in $$sections; do check 0 --db $$dir/demo.sqlite --format $$f $$s; done; \
		check 0 --db $$dir/demo.sqlite --format $$f $$sections; \
	done; \
	check 1 --db $$dir/missing.sqlite; \
	check 1 --db $$dir/empty.sqlite; \
	check 1 --db $$dir/random.sqlite; \
	check 2 --format nosuch; \
	wait; \
	for i in $$(seq 1 $$n); do \
		read -r want args <$$dir/cmd.$$i; rc=$$(cat $$dir/rc.$$i 2>/dev/null || echo none); \
		if [ "$$rc" = "$$want" ]; then passed=$$((passed + 1)); else \
			failed=$$((failed + 1)); \
			echo "FAIL (exit $$rc, want $$want): valgrind mfu-report $$args"; \
			cat $$dir/vg.$$i.log; tail -5 $$dir/out.$$i; \
		fi; \
	done; \
	echo "check-valgrind: mfu-report, formats: $$formats; sections: $$(echo $$sections)"; \
	echo "$$passed passed, $$failed failed"; \
	[ $$failed = 0 ] && [ -n "$$formats" ] && [ -n "$$sections" ]

# Every meson build type with GCC, the default and release with Clang,
# warnings as errors (tools/build-matrix; CI runs it).
check-builds: deps
	tools/build-matrix

bench: build
	tests/bench/run $(BUILD)

clean:
	rm -rf $(BUILD) build-matrix
