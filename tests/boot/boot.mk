# SPDX-License-Identifier: GPL-2.0-only
# Booting the hypervisor: `make run` (Bochs, interactive output) and
# `make test-boot` (pytest on tests/boot/).  Included by the Makefile.
#
#   make run [PROFILE=default] [GUEST=handlers] [CPU=corei7_skylake_x]
#            [NCPU=1] [RUN_TIMEOUT=300] [GUEST_ARGS=...] [HV_ARGS=...]
#   make run-qemu                     the same ISO in QEMU (no VT-x)
#   make test-boot [BOOT_TESTS=tests/boot/test_boot_basic.py] [PYTEST_ARGS=-x]

NCPU         ?= 1
RUN_TIMEOUT  ?= 300
BOOT_TIMEOUT ?= 120
BOOT_TESTS   ?= tests/boot
PYTEST_ARGS  ?=

RUN_SERIAL  := $(HV_DIR)/run-$(GUEST)-$(CPU).serial
QEMU_SERIAL := $(HV_DIR)/run-$(GUEST)-qemu.serial

# How a run ended, from the last lines the hypervisor printed on its own
# channel, port 0xE9 ($(3): Bochs's stdout or QEMU's debugcon file), which
# the guest cannot write; COM1 ($(1)) is the guest's too.
define run_status
	if [ "$$status" = 124 ]; then \
		echo "run: TIMEOUT after $(2) s; serial: $(1)"; exit 1; \
	elif line=$$(tests/boot/e9filter.py < $(3) | tr -d '\r' | \
		     grep -E '^exitplan: (exit status|PANIC)' | tail -n 1) \
	     && [ -n "$$line" ]; then \
		echo "run: $$line"; echo "run: serial: $(1)"; \
	else \
		echo "run: no exit-status line; serial: $(1)"; exit 1; \
	fi
endef

.PHONY: run run-qemu test-boot

# deps first, then the ISO, then boot: sequential even under make -j.
run: deps-run
	@$(MAKE) --no-print-directory iso
	@echo "run: booting $(ISO) on Bochs $(CPU) ($(NCPU) CPU), serial $(RUN_SERIAL)"
	@RUN_BOCHS_STREAM=1 tests/boot/run-bochs.sh $(ISO) $(CPU) $(RUN_SERIAL) \
		$(RUN_TIMEOUT) $(NCPU); status=$$?; \
	$(call run_status,$(RUN_SERIAL),$(RUN_TIMEOUT),$(RUN_SERIAL:.serial=.stdout))

run-qemu: deps-test
	@$(MAKE) --no-print-directory iso
	@echo "run: booting $(ISO) on QEMU (TCG), serial $(QEMU_SERIAL)"
	@tests/boot/run-qemu.sh $(ISO) $(QEMU_SERIAL) $(RUN_TIMEOUT); status=$$?; \
	tr -d '\r' < $(QEMU_SERIAL); \
	$(call run_status,$(QEMU_SERIAL),$(RUN_TIMEOUT),$(QEMU_SERIAL:.serial=.e9))

# The boot tests build what they need through make themselves (bootlib).
test-boot: deps-test
	EXITPLAN_BUILD=$(BUILD) EXITPLAN_PROFILE=$(PROFILE) EXITPLAN_CPU=$(CPU) \
	EXITPLAN_BOOT_TIMEOUT=$(BOOT_TIMEOUT) \
		$(PYTHON) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) $(BOOT_TESTS)
