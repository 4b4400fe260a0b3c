# SPDX-License-Identifier: GPL-2.0-only
# exitplan: the one entry point.  `make help` lists the targets.

PYTHON   := /usr/bin/python3
PROFILE  ?= default
CPU      ?= corei7_skylake_x
GUEST    ?= handlers
BUILD    := build
PROFILES := $(sort $(basename $(notdir $(wildcard profiles/*.yaml))))

.PHONY: all help deps-build deps-run deps-test deps-bench gen check-gen diff explain \
	build iso run test check-spec test-gen test-unit test-boot bench fuzz clean

all: build

help:
	@echo "make run   [PROFILE=default] [GUEST=handlers] [CPU=corei7_skylake_x]  boot in Bochs"
	@echo "make test                      generator, unit and boot tests"
	@echo "make gen / check-gen           regenerate generated/ / fail when it is stale"
	@echo "make diff A=hrtimer B=overcommit   compare two profiles' generated code"
	@echo "make explain [PROFILE=...]     the profile's decisions in words"
	@echo "make bench                     exit costs per profile (Bochs ticks = instructions)"
	@echo "make fuzz [SEEDS=1-20] [ITERATIONS=20000] [FUZZ_ARGS=stops]   the fuzz guest, every seed checked"
	@echo "make profile FROM=serial.log NAME=x BASE=default   a profile from measured statistics"
	@echo "make guests / run-qemu         build the test guests / boot the ISO in QEMU (no VT-x)"

deps-build deps-run deps-test deps-bench: deps-%:
	@scripts/ensure-deps.sh $*

include gen/gen.mk
include runtime/runtime.mk
include tests/guest/guest.mk
include tests/unit/unit.mk
include tests/boot/boot.mk
include tests/bench/bench.mk

# Quick, host-only checks first; the Bochs boot suite last.
test: deps-test
	$(MAKE) check-spec
	$(MAKE) check-gen
	$(MAKE) test-gen
	$(MAKE) test-unit
	$(MAKE) test-bench
	$(MAKE) test-guests-qemu
	$(MAKE) test-boot

# spec/ is consistent with itself and with the recorded capability MSRs,
# and its checker still catches the mistakes it is meant to catch.
check-spec:
	$(PYTHON) spec/check_spec.py
	$(PYTHON) spec/check_spec.py --self-test

# The fuzz guest for as many seeds and instructions as asked, through the
# checks of tests/boot/test_vmx_fuzz.py (make test runs a few of them).
SEEDS      ?= 1-20
ITERATIONS ?= 20000
FUZZ_ARGS  ?=
fuzz: deps-test
	EXITPLAN_BUILD=$(BUILD) EXITPLAN_PROFILE=$(PROFILE) EXITPLAN_CPU=$(CPU) \
	EXITPLAN_FUZZ_SEEDS='$(SEEDS)' EXITPLAN_FUZZ_ITERATIONS='$(ITERATIONS)' \
	EXITPLAN_FUZZ_ARGS='$(FUZZ_ARGS)' \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/boot/test_vmx_fuzz.py

clean:
	rm -rf $(BUILD)
