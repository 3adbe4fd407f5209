# Thin wrapper over CMake so the README's two commands are `make run` and `make test`.
BUILD    ?= build
TYPE     ?= RelWithDebInfo
WERROR   ?= OFF
SANITIZE ?= OFF
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# `make install` puts carma under PREFIX (the binary finds its data in PREFIX/share/carma) and
# the system config in /etc/carma; DESTDIR, when set, is prepended to every path (packaging).
PREFIX   ?= /usr/local

FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 10

.PHONY: all deps deps-test configure build run test install asan fuzz bench clean

all: build

deps:
	@scripts/deps.sh

# What only the tests use (Prometheus, Slurm, munge), installed without starting their services.
deps-test:
	@scripts/deps.sh test

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	    -DCARMA_WERROR=$(WERROR) -DCARMA_SANITIZE=$(SANITIZE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The main job on its built-in default. The build is quiet: its output goes to
# $(BUILD)/build.log and is shown only when it fails.
RUN_ARGS = simulate --compare --plot $(BUILD)/plots
run: configure
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/build.log 2>&1 || \
	    { grep -Ev '^g?make\[[0-9]+\]: (Entering|Leaving) directory' $(BUILD)/build.log; \
	      echo "make run: build failed (log: $(BUILD)/build.log)" >&2; exit 1; }
	@echo "== carma $(RUN_ARGS)"
	@$(BUILD)/carma $(RUN_ARGS)

test: deps-test build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The binary, its data, docs, man page, bash completion, systemd unit, and /etc/carma/carma.conf
# (kept when it exists); README.md's "Quick start" says what to do next.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	$(MAKE) test BUILD=build-asan TYPE=Debug SANITIZE=ON WERROR=$(WERROR)

# Every parser's libFuzzer target (fuzz/), built with clang under ASan + UBSan (integer checks
# included) in its own build directory, each run FUZZ_SECONDS from its seed corpus.
fuzz:
	@scripts/deps.sh fuzz
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DCARMA_FUZZ=ON -DCARMA_WERROR=$(WERROR) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) >$(FUZZ_BUILD)/build.log 2>&1 || \
	    { grep -Ev '^g?make\[[0-9]+\]: (Entering|Leaving) directory' $(FUZZ_BUILD)/build.log; \
	      echo "make fuzz: build failed (log: $(FUZZ_BUILD)/build.log)" >&2; exit 1; }
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	bench/run.sh $(BUILD)

clean:
	rm -rf build build-asan build-fuzz
