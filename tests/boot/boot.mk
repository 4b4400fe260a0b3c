# SPDX-License-Identifier: GPL-2.0-only
# Booting the hypervisor: `make run` (Bochs, interactive output) and
# `make test-boot` (pytest on tests/boot/).  Included by the Makefile.
#
#   make run [PROFILE=default] [GUEST=handlers] [CPU=corei7_skylake_x]
#            [NCPU=1] [VCPUS=] [RUN_TIMEOUT=300] [GUEST_ARGS=...] [HV_ARGS=...]
#   make run KERNEL=path [CMDLINE="..."] [MODULES="a b"]   any multiboot kernel
#   make run-qemu                     the same ISO in QEMU (no VT-x)
#   make test-boot [BOOT_TESTS=tests/boot/test_boot_basic.py] [PYTEST_ARGS=-x]

NCPU         ?= 1
comma        := ,
RUN_TIMEOUT  ?= 300
BOOT_TIMEOUT ?= 120
BOOT_TESTS   ?= tests/boot
PYTEST_ARGS  ?=
# Emulators at once in test-boot (bootlib's slots, file locks that hold
# across processes), and pytest-xdist workers to keep them busy: a module
# to a worker (its module-scoped boots shared), one worker more than
# slots, so that a slot a module frees while it builds or checks is taken
# at once.  Without xdist (python3-pytest-xdist) the modules run in turn.
BOOT_JOBS    ?= $(shell nproc)
boot_xdist    = $(call pytest_workers,$(shell expr $(BOOT_JOBS) + 1),--dist loadfile)

RUN_SERIAL  := $(HV_DIR)/run-$(RUN_NAME)-$(CPU).serial
QEMU_SERIAL := $(HV_DIR)/run-$(RUN_NAME)-qemu.serial

# The verdict line (scripts/run-verdict.py): the guest's summary, the exit
# status and what it means, where the serial log and statistics are.
# $(call run_verdict,SERIAL,EMULATOR,CPU); the boot's status is in $$status.
run_verdict = $(PYTHON) scripts/run-verdict.py --serial $(1) --emulator $(2) --cpu $(3) \
	--timeout $(RUN_TIMEOUT) $$([ "$$status" = 124 ] && echo --timed-out)

# A KERNEL or MODULES file that does not exist, said before anything is built.
run_check_files = $(foreach f,$(KERNEL) $(MODULES),[ -f $(f) ] || \
	{ echo "run: $(f): no such file" >&2; exit 2; };)

.PHONY: run run-qemu test-boot

# deps first, then the ISO, then boot: sequential even under make -j.
run: deps-run
	@$(run_check_files)
	@$(MAKE) iso
	@echo "run: booting $(ISO) on Bochs $(CPU) ($(NCPU) CPU$(if $(VCPUS),$(comma) $(VCPUS) vCPUs)), serial $(RUN_SERIAL)"
	@RUN_BOCHS_STREAM=1 tests/boot/run-bochs.sh $(ISO) $(CPU) $(RUN_SERIAL) \
		$(RUN_TIMEOUT) $(NCPU); status=$$?; \
	$(call run_verdict,$(RUN_SERIAL),bochs,$(CPU))

run-qemu: deps-test
	@$(run_check_files)
	@$(MAKE) iso
	@echo "run: booting $(ISO) on QEMU (TCG), serial $(QEMU_SERIAL)"
	@tests/boot/run-qemu.sh $(ISO) $(QEMU_SERIAL) $(RUN_TIMEOUT); status=$$?; \
	tr -d '\r' < $(QEMU_SERIAL); \
	$(call run_verdict,$(QEMU_SERIAL),qemu,qemu64)

# The boot tests build what they need through make themselves (bootlib).
test-boot: deps-test
	$(call msg,TEST,$(BOOT_TESTS))EXITPLAN_BUILD=$(BUILD) EXITPLAN_PROFILE=$(PROFILE) EXITPLAN_CPU=$(CPU) \
	EXITPLAN_BOOT_TIMEOUT=$(BOOT_TIMEOUT) EXITPLAN_BOOT_JOBS=$(BOOT_JOBS) \
		$(PYTHON) -m pytest -q -rs -p no:cacheprovider $(boot_xdist) $(PYTEST_ARGS) $(BOOT_TESTS)
