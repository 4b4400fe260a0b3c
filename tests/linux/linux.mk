# SPDX-License-Identifier: GPL-2.0-only
# The Linux guest (docs/LINUX.md).  Included by the Makefile before
# runtime/runtime.mk, so that GUEST=linux can name the kernel.
#
#   make linux-guest     build/linux/bzImage (built once from Debian's
#                        linux-source and cached, ~8 min on 2 cores) and
#                        build/linux/initramfs.cpio.gz
#   make run GUEST=linux [NCPU=2] [CMDLINE="..."]
#   make run KERNEL=bzImage INITRD=initrd [CMDLINE="..."]   a kernel of your own

LINUX_DIR     := $(BUILD)/linux
LINUX_BZIMAGE := $(LINUX_DIR)/bzImage
LINUX_INITRD  := $(LINUX_DIR)/initramfs.cpio.gz
# The static programs in the initramfs: ep-exit ends the run, ep-drain
# waits for the console before it ends, the others are the workloads
# /init runs for exitplan.run=NAME [exitplan.args=A,B] (docs/LINUX.md).
LINUX_PROGS   := $(addprefix $(LINUX_DIR)/ep-,exit drain pingpong hrtimer spinlock)
# The command line the tests and `make run GUEST=linux` boot with
# (docs/LINUX.md says why each word is there).
LINUX_CMDLINE := console=ttyS0

# Linux runs for long by design (Debian's kernel: about 4G instructions
# to /init): exitplan's deadline for run at about Bochs's speed on Linux,
# 40M instructions a second of RUN_TIMEOUT, not the test guests' 4M.
ifneq ($(filter linux linux-debian,$(GUEST)),)
DEADLINE ?= $(shell expr $(RUN_TIMEOUT) \* 40)M
endif

ifeq ($(GUEST),linux)
KERNEL := $(LINUX_BZIMAGE)
INITRD := $(LINUX_INITRD)
ifeq ($(origin CMDLINE),undefined)
CMDLINE := $(LINUX_CMDLINE)
endif
# Built before run's check that KERNEL exists.
run run-qemu iso: linux-guest
endif

# Debian's stock kernel (linux-image-amd64), unmodified, with the same
# initramfs: `make run GUEST=linux-debian` (not in the tests: it reaches
# /init only after minutes in Bochs, most of them in its XZ decompressor).
LINUX_DEBIAN_VMLINUZ := $(LINUX_DIR)/vmlinuz
ifeq ($(GUEST),linux-debian)
KERNEL := $(LINUX_DEBIAN_VMLINUZ)
INITRD := $(LINUX_INITRD)
ifeq ($(origin CMDLINE),undefined)
CMDLINE := $(LINUX_CMDLINE)
endif
run run-qemu iso: linux-debian-kernel $(LINUX_INITRD)
endif

.PHONY: linux-guest linux-kernel linux-debian-kernel
linux-debian-kernel:
	$(Q)tests/linux/debian-kernel.sh $(LINUX_DIR)

linux-guest: linux-kernel $(LINUX_INITRD)

# The script keeps the cache (keyed by source version and fragment) and
# returns at once when the kernel is there.
linux-kernel:
	$(Q)nice tests/linux/build-kernel.sh $(LINUX_DIR)
$(LINUX_BZIMAGE): linux-kernel

$(LINUX_DIR)/ep-%: tests/linux/ep-%.c tests/linux/ep-workload.h
	$(Q)mkdir -p $(dir $@)
	$(call msg,CC,$@)gcc -D_GNU_SOURCE -static -pthread -O2 -Wall -Wextra -Werror -o $@ $<

$(LINUX_INITRD): tests/linux/mkinitramfs.sh tests/linux/init $(LINUX_PROGS)
	$(call msg,CPIO,$@)tests/linux/mkinitramfs.sh $@ $(LINUX_PROGS)

# test-boot boots the kernel (tests/boot/test_linux.py): build it first,
# outside the boot suite's time budget.
test-boot: linux-guest
