# Entry points for people and CI. The real build is CMake (see CMakePresets.json).
#   make               build everything into build/ (the CLI is build/bin/kiln)
#   make test          bootstrap, build, run every test through CTest (release, then the
#                      runtime again under ASan+UBSan and the concurrency tests under TSan)
#   make demo          compile the shipped example model and run it
#   make runtime-size  .text/.data/.bss of the runtime core (Cortex-M33) and the host runtime

JOBS ?= $(shell nproc)
CTEST_FLAGS ?= --output-on-failure -j $(JOBS)

.PHONY: all build bootstrap test test-release test-asan test-tsan demo runtime-size clean

all: build

build:
	cmake --preset release >/dev/null
	cmake --build build -j $(JOBS)

bootstrap:
	scripts/bootstrap

test: bootstrap
	$(MAKE) test-release
	$(MAKE) test-asan
	$(MAKE) test-tsan

test-release: build
	ctest --test-dir build $(CTEST_FLAGS)

# The runtime core must survive corrupt artifacts without undefined behaviour: its tests
# run again with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan:
	cmake --preset dev >/dev/null
	cmake --build build-dev -j $(JOBS) --target kiln_sanitized_tests
	ctest --test-dir build-dev -L sanitized $(CTEST_FLAGS)

# Several contexts and modules on several threads at once, under ThreadSanitizer.
test-tsan:
	cmake --preset tsan >/dev/null
	cmake --build build-tsan -j $(JOBS) --target kiln_concurrency_tests
	ctest --test-dir build-tsan -L concurrency $(CTEST_FLAGS)

demo: bootstrap build
	scripts/demo

runtime-size:
	scripts/runtime-size

clean:
	rm -rf build build-dev build-tsan build-m33 build-size-host
