# SPDX-License-Identifier: GPL-2.0-only
# The test guests: multiboot v1 ELF32 kernels linked at 1 MiB.
#   make guests                       build all of them
#   make $(BUILD)/guest/NAME.elf      build one
#   make guest-qemu GUEST=handlers GUEST_ARGS="quick"   run one under QEMU
#   make test-guests-qemu             run all under QEMU and check the output
# The library in tests/guest/lib/ is linked into every guest, with the
# freestanding code it shares with the hypervisor (lib/: port I/O, the
# string functions, the printf formatter, multiboot v1, the exception
# mnemonics); each guest's own sources are
# tests/guest/NAME/*.c.

GUEST_NAMES := handlers isolation status bench hrtimer stats smp pingpong fuzz overcommit
GUEST_DIR   := tests/guest
GUEST_OUT   := $(BUILD)/guest

GUEST_CC      := gcc
GUEST_CFLAGS  := -m32 -ffreestanding -fno-pic -fno-stack-protector \
	-nostdlib -static -O2 -Wall -Wextra -Werror -std=gnu11 \
	-mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-builtin \
	-I $(GUEST_DIR)/lib -I lib -I generated/common -MMD -MP
GUEST_LDFLAGS := -m32 -nostdlib -static -no-pie -Wl,-m,elf_i386 \
	-Wl,--build-id=none -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments \
	-T $(GUEST_DIR)/lib/guest.ld

GUEST_LIB_SRCS := $(wildcard $(GUEST_DIR)/lib/*.c $(GUEST_DIR)/lib/*.S)
# The freestanding code shared with the hypervisor (lib/ at the top), built 32-bit.
GUEST_SHARED_SRCS := $(wildcard lib/*.c)
GUEST_LIB_OBJS := $(patsubst $(GUEST_DIR)/%,$(GUEST_OUT)/%.o,$(GUEST_LIB_SRCS))
# Generated from spec/ and shared with the hypervisor: exit-reason names.
GUEST_GEN_SRCS := generated/common/vmx_exit_reasons.c
GUEST_LIB_OBJS += $(patsubst generated/common/%,$(GUEST_OUT)/generated/%.o,$(GUEST_GEN_SRCS))
GUEST_LIB_OBJS += $(patsubst lib/%,$(GUEST_OUT)/shared/%.o,$(GUEST_SHARED_SRCS))

guest_srcs = $(wildcard $(GUEST_DIR)/$(1)/*.c $(GUEST_DIR)/$(1)/*.S)
guest_objs = $(patsubst $(GUEST_DIR)/%,$(GUEST_OUT)/%.o,$(call guest_srcs,$(1)))

GUEST_ELFS := $(foreach g,$(GUEST_NAMES),$(GUEST_OUT)/$(g).elf)

# Keep the library objects: make would delete them as intermediates.
.SECONDARY: $(GUEST_LIB_OBJS)

.PHONY: guests guest-qemu test-guests-qemu

guests: $(GUEST_ELFS)

$(GUEST_OUT)/%.c.o: $(GUEST_DIR)/%.c $(GUEST_DIR)/guest.mk
	@mkdir -p $(dir $@)
	$(call msg,CC,$(GUEST_DIR)/$*.o)$(GUEST_CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_OUT)/generated/%.c.o: generated/common/%.c $(GUEST_DIR)/guest.mk
	@mkdir -p $(dir $@)
	$(call msg,CC,generated/common/$*.o (32-bit))$(GUEST_CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_OUT)/shared/%.c.o: lib/%.c $(GUEST_DIR)/guest.mk
	@mkdir -p $(dir $@)
	$(call msg,CC,lib/$*.o (32-bit))$(GUEST_CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_OUT)/%.S.o: $(GUEST_DIR)/%.S $(GUEST_DIR)/guest.mk
	@mkdir -p $(dir $@)
	$(call msg,AS,$(GUEST_DIR)/$*.o)$(GUEST_CC) $(GUEST_CFLAGS) -c $< -o $@

# Each guest's own objects are added as prerequisites without a recipe;
# the pattern rule below links them.
$(foreach g,$(GUEST_NAMES),$(eval $(GUEST_OUT)/$(g).elf: $(call guest_objs,$(g))))

$(GUEST_OUT)/%.elf: $(GUEST_LIB_OBJS) $(GUEST_DIR)/lib/guest.ld
	$(call msg,LD,$@)$(GUEST_CC) $(GUEST_LDFLAGS) -o $@ $(filter %.o,$^)

-include $(shell find $(GUEST_OUT) -name '*.d' 2>/dev/null)

# Development under QEMU (no VT-x needed).  Checks that need exitplan
# print FAIL or SKIP there; see docs/GUESTS.md.
GUEST_ARGS ?=
GUEST_QEMU := qemu-system-x86_64 -display none -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04

guest-qemu: $(GUEST_OUT)/$(GUEST).elf
	$(GUEST_QEMU) -kernel $< -append "$(GUEST_ARGS)" -serial stdio; \
	echo "qemu exit status $$?"

test-guests-qemu: guests
	$(Q)$(GUEST_DIR)/qemu-check.sh $(GUEST_OUT)
