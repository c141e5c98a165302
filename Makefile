# Thin wrapper over meson: `make demo` and `make check` work on a fresh clone
# (they install missing packages first when run as root).
BUILD ?= build
MESON_OPTS ?=

.PHONY: all deps build demo check bench clean

all: build

deps:
	@tools/install-deps

build: deps
	@test -f $(BUILD)/build.ninja || meson setup $(BUILD) $(MESON_OPTS)
	ninja -C $(BUILD)

demo: build
	$(BUILD)/src/record/mfu-record -o demo.sqlite -- $(BUILD)/tests/workloads/wl_mlp
	$(BUILD)/src/report/mfu-report --db demo.sqlite summary phases
	@echo
	@echo "Per-step table: $(BUILD)/src/report/mfu-report --db demo.sqlite steps"

check: build
	tools/run-tests $(BUILD)

bench: build
	tests/bench/run $(BUILD)

clean:
	rm -rf $(BUILD)
