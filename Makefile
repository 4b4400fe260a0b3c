# SPDX-License-Identifier: GPL-2.0-only
# exitplan: the one entry point.  `make help` lists the targets.

PYTHON   := /usr/bin/python3
PROFILE  ?= default
CPU      ?= corei7_skylake_x
GUEST    ?= handlers
BUILD    := build
PROFILES := $(sort $(basename $(notdir $(wildcard profiles/*.yaml))))

.PHONY: all help deps-build deps-run deps-test deps-bench gen check-gen diff explain \
	build iso run test check-spec test-gen test-unit test-boot bench clean

all: build

help:
	@echo "make run   [PROFILE=default] [GUEST=handlers] [CPU=corei7_skylake_x]  boot in Bochs"
	@echo "make test                      generator, unit and boot tests"
	@echo "make gen / check-gen           regenerate generated/ / fail when it is stale"
	@echo "make diff A=hrtimer B=overcommit   compare two profiles' generated code"
	@echo "make explain [PROFILE=...]     the profile's decisions in words"
	@echo "make bench                     exit costs per profile (Bochs ticks = instructions)"
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

clean:
	rm -rf $(BUILD)
