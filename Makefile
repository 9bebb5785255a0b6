# The front door. `make test` sets up a fresh Debian 12 machine (as root),
# builds, and runs every test plus the format and layer checks.
PRESET ?= dev
TESTS ?= ON
BENCH ?= ON
JOBS ?= $(shell nproc)
PYTHON ?= /opt/cadclip/venv/bin/python

.PHONY: all setup configure build test check format demo gpu-build clean

all: build

setup:
	scripts/setup.sh

configure: setup
	cmake --preset $(PRESET) -DCADCLIP_BUILD_TESTS=$(TESTS) -DCADCLIP_BUILD_BENCH=$(BENCH)

# The build ends by installing the Python module (python/, docs/PYTHON.md)
# into the venv, so that `import cadclip` there is this build.
build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)
	@if [ -f build/$(PRESET)/python/cadclip/__init__.py ]; then \
	  cmake --install build/$(PRESET) --component python; \
	  $(PYTHON) -c "import cadclip; print('cadclip', cadclip.__version__, 'importable from', cadclip.__file__)"; \
	fi

# The checks (format, layers, sizes, clang-tidy) run first, then ctest, so that
# ctest's summary line ends the output; the target fails if either failed.
test: build
	@status=0; \
	$(MAKE) --no-print-directory check || status=1; \
	(cd build/$(PRESET) && ctest --output-on-failure --timeout 1500 -j $(JOBS)) || status=1; \
	exit $$status

# The main job on the built-in synthetic data: synth -> prepare -> train -> eval,
# on the optimised build (the cadclip a user runs), without tests and benchmarks.
demo: PRESET = release
demo: TESTS = OFF
demo: BENCH = OFF
demo: build
	scripts/demo.sh

# The gpu preset (CUDA LibTorch through TorchConfig, the NCCL module, no OCCT),
# built here with the CUDA toolkit and no GPU: the check to run before any
# change to CUDA-facing code. Not in `make test`: a cold build is 44 CPU-minutes,
# 25 to 60 minutes on the shared 2-core machine (docs/TRAINING.md).
gpu-build: setup
	cmake --preset gpu
	cmake --build --preset gpu -j $(JOBS)

check:
	scripts/check_format.sh
	python3 scripts/check_layers.py
	$(PYTHON) scripts/check_sizes.py
	scripts/check_tidy.sh build/$(PRESET)

format:
	scripts/check_format.sh --fix

clean:
	rm -rf build
