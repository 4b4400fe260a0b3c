# SPDX-License-Identifier: GPL-2.0-only
# exitplan: the one entry point.  `make help` lists the targets.

PYTHON   := /usr/bin/python3
PROFILE  ?= default
CPU      ?= corei7_skylake_x
GUEST    ?= handlers
BUILD    := build
PROFILES := $(sort $(basename $(notdir $(wildcard profiles/*.yaml))))

# Compiled Python and the generator's compiled templates are kept in the
# build directory, never beside the sources: make check runs the generator
# about a hundred times, and compiling is a third of each run.  This
# overrides PYTHONDONTWRITEBYTECODE, whose point (no __pycache__ in the
# tree) the prefix keeps.
export PYTHONPYCACHEPREFIX := $(abspath $(BUILD))/cache/python
export EXITPLAN_GEN_CACHE  := $(abspath $(BUILD))/cache/jinja
unexport PYTHONDONTWRITEBYTECODE

# Output as Kbuild prints it: one "  TAG     target" line per step, the
# full command lines with V=1.  Compiler errors and warnings show either
# way.  In a recipe: $(call msg,CC,$@)$(CC) ... (msg ends in ';', so the
# command follows on the same shell line) and $(Q) before the other
# commands that would be echoed.
V ?= 0
ifeq ($(V),1)
Q   :=
msg  =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q   := @
msg  = @
else
Q   := @
msg  = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif
MAKEFLAGS += --no-print-directory

# pytest-xdist's arguments for N workers ($(call pytest_workers,N,EXTRA)),
# empty where python3-pytest-xdist is missing: the tests then run in turn.
pytest_workers = $(if $(shell $(PYTHON) -c 'import xdist' 2>/dev/null && echo y),-n $(1) $(2))

.PHONY: all help deps-build deps-run deps-test deps-bench gen check-gen diff explain \
	build iso run test check test-quick check-clone test-make check-spec test-gen test-unit \
	test-boot bench fuzz clean picture trace-path

all: build

help:
	@echo 'exitplan: make TARGET [VARIABLE=value ...]'
	@echo
	@echo 'Boot'
	@echo '  run             build, then boot exitplan with a guest in Bochs; ends with a verdict line'
	@echo '  run-qemu        the same ISO in QEMU (no VT-x: exitplan refuses, the guest never runs)'
	@echo '  build           build/PROFILE/exitplan.elf (the default target)'
	@echo '  iso             build/PROFILE/GUEST.iso (kernel-NAME.iso with KERNEL=): GRUB, exitplan, the guest'
	@echo '  guests          build every test guest (build/guest/NAME.elf)'
	@echo '  guest-qemu      run one test guest directly under QEMU, without exitplan'
	@echo '  linux-guest     the Linux guest: build/linux/bzImage (built once from linux-source, ~8 min) and its initramfs'
	@echo '  linux-kernel    only the kernel (cached under build/linux/cache; docs/LINUX.md)'
	@echo '  linux-debian-kernel  Debian'"'"'s stock kernel (apt-get download linux-image-amd64) for GUEST=linux-debian'
	@echo
	@echo 'Test'
	@echo '  check           the host-only tests (spec, check-gen, generator, unit): about a minute'
	@echo '  test-quick      the same as check'
	@echo '  test            everything: check, test-make, check-clone, test-bench, test-guests-qemu, test-boot'
	@echo '  check-spec      spec/*.yaml against itself and the recorded capability MSRs'
	@echo '  check-gen       fail, listing them, when generated/ files are stale'
	@echo '  test-gen        the generator tests (pytest, tests/gen)'
	@echo '  test-unit       the host unit tests (cmocka, ASan/UBSan)'
	@echo '  test-make       the build output and this help (tests/make)'
	@echo '  test-bench      the bench report formats (no timing)'
	@echo '  test-guests-qemu  every test guest under QEMU, checks judged by their output'
	@echo '  test-boot       the Bochs boot tests (pytest, tests/boot): minutes'
	@echo '  check-clone     clone the repository into an empty temporary folder and run make check there'
	@echo
	@echo 'Generate and compare'
	@echo '  gen             regenerate generated/ from profiles/ and spec/'
	@echo '  diff            unified diff of two profiles'"'"' generated code (A=, B=)'
	@echo '  explain         the profile'"'"'s decisions in words'
	@echo '  profile         profiles/NAME.yaml from the statistics a run printed (FROM=, NAME=)'
	@echo '  picture         docs/exit-path.svg, the README'"'"'s picture, from docs/exit-path.dot (graphviz)'
	@echo '  bench           exit costs of every profile on Bochs (long; docs/BENCH.md)'
	@echo '  bench-host      the host microbenchmark of the generated dispatch alone'
	@echo '  trace-path      KIND=k: one round trip of the bench guest, instruction by instruction'
	@echo '  fuzz            the fuzz guest (random exiting instructions, seeded): exitplan must survive every seed'
	@echo '  clean           remove build/'
	@echo '  deps-build, deps-run, deps-test, deps-bench   install the Debian packages each needs'
	@echo
	@echo 'Variables'
	@echo '  PROFILE=default         profile (profiles/NAME.yaml); for run, build, iso, explain, test-boot'
	@echo '  CPU=corei7_skylake_x    Bochs CPU model (bochs --help cpu; tests/data/vmx-caps)'
	@echo '  GUEST=handlers          test guest for run: $(GUEST_NAMES)'
	@echo '  GUEST_ARGS=             the test guest'"'"'s command line (docs/GUESTS.md)'
	@echo '  KERNEL=path             run any multiboot v1 kernel instead of GUEST'
	@echo '  CMDLINE="..."           its command line (after the path, as QEMU -append)'
	@echo '  MODULES="a b"           further multiboot modules, in order (as QEMU -initrd a,b)'
	@echo '  INITRD=path             with KERNEL=bzImage: the Linux initrd (GUEST=linux sets both)'
	@echo '  HV_ARGS=                exitplan'"'"'s own command line'
	@echo '  NCPU=1                  CPUs of the emulated machine'
	@echo '  VCPUS=                  vCPUs the guest gets (NCPU..8; default NCPU); more than NCPU'
	@echo '                          share CPUs (scheduled) and need a profile with apic: virtual'
	@echo '  RUN_TIMEOUT=300         seconds before run gives up'
	@echo '  DEADLINE=(RUN_TIMEOUT*4)M  exitplan'"'"'s deadline= for run: TSC ticks (Bochs: instructions)'
	@echo '                          after which it stops the guest and reports; 0: none'
	@echo '  BOOT_TIMEOUT=120        seconds per boot in test-boot'
	@echo '  BOOT_TESTS=tests/boot   which boot tests (a file, or file::test)'
	@echo '  BOOT_JOBS=(nproc)       emulators at once in test-boot (modules side by side: pytest-xdist)'
	@echo '  PYTEST_ARGS=            extra pytest arguments for test-boot (e.g. -x, -k NAME)'
	@echo '  A=, B=                  the two profiles of diff'
	@echo '  FROM=, NAME=, BASE=, CPU_MODEL=, DATE=, NOTE=   profile: log, new name, base profile, source fields'
	@echo '  BENCH_PASSES=15, BENCH_ARGS=   bench-host passes; extra run_bench.py arguments'
	@echo '  SEEDS=1-20, ITERATIONS=20000, FUZZ_ARGS=   fuzz: seeds, instructions per seed, guest options (stops, bugs=)'
	@echo '  BUILD=build             output folder'
	@echo '  CHECK_JOBS=2            parts of make check run at once (without make -j), and the workers of tests/gen'
	@echo '  V=1                     print full command lines instead of "  CC      file"'
	@echo
	@echo 'Examples'
	@echo '  make run PROFILE=hrtimer GUEST=hrtimer CPU=corei7_haswell_4770'
	@echo '  make run KERNEL=x86/vmexit.flat CMDLINE="cpuid" MODULES="env.txt"   # a kvm-unit-tests kernel'
	@echo '  make run GUEST=linux NCPU=2                                         # Linux to its /init'
	@echo '  make run GUEST=linux-debian                                         # Debian'"'"'s stock kernel (minutes; not in CI)'
	@echo '  make run PROFILE=overcommit GUEST=overcommit NCPU=2 VCPUS=4         # 4 vCPUs on 2 CPUs'
	@echo '  make check V=1'
	@echo '  make test-boot BOOT_TESTS=tests/boot/test_run_kernel.py'

deps-build deps-run deps-test deps-bench: deps-%:
	@scripts/ensure-deps.sh $*

include gen/gen.mk
include tests/linux/linux.mk
include runtime/runtime.mk
include tests/guest/guest.mk
include tests/unit/unit.mk
include tests/boot/boot.mk
include tests/bench/bench.mk

# Quick, host-only checks first; the Bochs boot suite last.
test: deps-test
	$(Q)$(MAKE) check
	$(Q)$(MAKE) test-make
	$(Q)$(MAKE) check-clone
	$(Q)$(MAKE) test-bench
	$(Q)$(MAKE) test-guests-qemu
	$(Q)$(MAKE) test-boot

# The edit-compile loop: everything that needs no emulator, the generator
# tests beside the rest (CHECK_JOBS at a time, unless make -j says how
# many), each part's output together.
CHECK_JOBS ?= 2
check test-quick: deps-test
	$(Q)$(MAKE) $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) --output-sync=target \
		check-spec check-gen test-gen test-unit

# The repository is self-contained: make check in a fresh clone of HEAD
# in an empty temporary folder.
check-clone: deps-test
	$(Q)scripts/check-clone.sh

# The build output and `make help` (tests/make).
test-make: deps-test
	$(call msg,TEST,tests/make)$(PYTHON) -m pytest -q -rs -p no:cacheprovider tests/make

# spec/ is consistent with itself and with the recorded capability MSRs,
# and its checker still catches the mistakes it is meant to catch.
check-spec:
	$(call msg,CHECK,spec/)$(PYTHON) spec/check_spec.py
	$(call msg,CHECK,spec/check_spec.py --self-test)$(PYTHON) spec/check_spec.py --self-test >/dev/null

# The fuzz guest for as many seeds and instructions as asked, through the
# checks of tests/boot/test_vmx_fuzz.py (make test runs a few of them);
# NCPU=n and VCPUS=v fuzz on every vCPU at once.
SEEDS      ?= 1-20
ITERATIONS ?= 20000
FUZZ_ARGS  ?=
fuzz: deps-test
	$(call msg,FUZZ,seeds $(SEEDS) x $(ITERATIONS))EXITPLAN_BUILD=$(BUILD) EXITPLAN_PROFILE=$(PROFILE) EXITPLAN_CPU=$(CPU) \
	EXITPLAN_FUZZ_SEEDS='$(SEEDS)' EXITPLAN_FUZZ_ITERATIONS='$(ITERATIONS)' \
	EXITPLAN_FUZZ_ARGS='$(FUZZ_ARGS)' EXITPLAN_FUZZ_NCPU='$(NCPU)' EXITPLAN_FUZZ_VCPUS='$(VCPUS)' \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/boot/test_vmx_fuzz.py

# The README's picture of one exit's path, drawn from its text source;
# tests/make/test_picture.py fails when the committed one is stale.
picture: docs/exit-path.svg
docs/exit-path.svg: docs/exit-path.dot
	$(call msg,DOT,$@)dot -Tsvg $< -o $@

clean:
	rm -rf $(BUILD)
