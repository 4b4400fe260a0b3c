# SPDX-License-Identifier: GPL-2.0-only
# The hypervisor image, $(BUILD)/$(PROFILE)/exitplan.elf, and the boot ISO
# $(BUILD)/$(PROFILE)/$(GUEST).iso.  Included by the top-level Makefile.

HV_DIR    := $(BUILD)/$(PROFILE)
HV_OBJDIR := $(HV_DIR)/obj
HV_INCDIR := $(HV_DIR)/include
HV_ELF    := $(HV_DIR)/exitplan.elf
HV_LDS    := $(HV_DIR)/exitplan.lds

# The hypervisor's command line (after the image path) and the guest's.
# VCPUS=v: the guest gets v vCPUs on the NCPU CPUs (exitplan's vcpus=v).
# DEADLINE=N: exitplan's own deadline=N (TSC ticks; on Bochs retired
# instructions, k/M/G suffixes), after which it stops the guest and prints
# its report: by default 4M ticks per second of RUN_TIMEOUT (Bochs runs
# about 5-8M a second on a loaded 2-core machine, Linux boots in ~700M;
# tests/linux/linux.mk gives the Linux guests 40M, Debian's kernel needs
# about 4G),
# so that a guest that never ends still ends in the report, before the
# emulator is killed.  0: none; a deadline= in HV_ARGS wins.
HV_ARGS    ?=
VCPUS      ?=
DEADLINE   ?= $(shell expr $(RUN_TIMEOUT) \* 4)M
HV_CMDLINE  = $(strip $(HV_ARGS) $(if $(VCPUS),vcpus=$(VCPUS)) \
	$(if $(filter-out 0,$(DEADLINE)),$(if $(findstring deadline=,$(HV_ARGS)),,deadline=$(DEADLINE))))
GUEST_ARGS ?=
GUEST_ELF  := $(BUILD)/guest/$(GUEST).elf

# KERNEL=path: any multiboot v1 kernel instead of a test guest, booted as
# QEMU's `-kernel KERNEL -append CMDLINE -initrd a,b` would: its command
# line is its path, then CMDLINE; MODULES follow it, each with its path
# as its command line.
KERNEL  ?=
CMDLINE ?=
MODULES ?=
INITRD  ?=
ifneq ($(KERNEL),)
RUN_NAME      := kernel-$(basename $(notdir $(KERNEL)))
RUN_ELF       := $(KERNEL)
RUN_CMDLINE   := $(strip $(KERNEL) $(CMDLINE))
RUN_MODULES   := $(INITRD) $(MODULES)
else
RUN_NAME      := $(GUEST)
RUN_ELF       := $(GUEST_ELF)
RUN_CMDLINE   := $(GUEST_ARGS)
RUN_MODULES   :=
endif
ISO        := $(HV_DIR)/$(RUN_NAME).iso

HV_CC := gcc
HV_LD := ld

# -fpie, linked -static -pie: the image moves itself from where GRUB loads
# it (64 MiB) to the top of RAM below 4 GiB (runtime/host/reloc.c), so code
# addresses everything RIP-relative and only pointers in data need
# fixing, the R_X86_64_RELATIVE entries; -fvisibility=hidden keeps every
# call and access direct (no GOT, no PLT); -z notext because assembly
# keeps pointer tables in .rodata, written once by reloc.c before
# paging.c write-protects it.  No SSE/x87 state is ever
# touched by the host, so the exit path need not save it.  No endbr64:
# the exit path's instruction count is what profiles are compared by.
# -ffixed-rbp/r10-r15: no host C ever uses these registers, so the
# guest's values stay in them through a VM exit and the exit stub saves
# and restores only the other eight (arch/vmx/exit_entry.S); gcc takes
# -ffixed-rbp only with -fomit-frame-pointer.  R8 and R9 cannot join
# them: -ffixed-r8/r9 do not stop gcc from passing a fifth or sixth
# integer argument in them (every printk() with five values does), it
# only stops gcc from allocating them.  R10 (the static chain, unused:
# no nested functions) and R11 are plain scratch registers to gcc.
# -fno-jump-tables: a switch on a guest-chosen value (the hypercall
# number, a fw_cfg key) must not become an indirect jump through a table
# indexed by it behind a bounds compare the CPU may mispredict (Spectre
# v1); Linux builds so for the same reason.  The one table the exit path
# keeps, the generated dispatch's, clamps its index (array_index_nospec).
HV_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fno-jump-tables \
	-ffreestanding -fno-stack-protector -fpie -fno-common \
	-fvisibility=hidden -mcmodel=small -mno-red-zone -mno-sse -mno-mmx -mno-80387 \
	-mgeneral-regs-only -fno-asynchronous-unwind-tables -fcf-protection=none \
	-fomit-frame-pointer -ffixed-rbp -ffixed-r10 -ffixed-r11 -ffixed-r12 -ffixed-r13 \
	-ffixed-r14 -ffixed-r15
# The profile's generated code: generated/PROFILE, or where a test-only
# variant was generated (tests/boot/bootlib.py build_profile_variant()).
GEN_PROFILE_DIR ?= generated/$(PROFILE)
# One build for every profile (issue 26): an object whose source reads no
# generated per-profile header (profile.h, runtime_profile.h,
# msr_policy.h, msr_switch.h) is compiled once, into $(BUILD)/common,
# without -I $(GEN_PROFILE_DIR), so a file that starts reading one fails
# to compile there instead of silently going stale; each profile's
# obj/ gets a hard link of it, so $(BUILD)/PROFILE/obj still holds every
# object of the image.  Only HV_PER_PROFILE_SRCS and generated/PROFILE
# are compiled per profile.
HV_COMMON_DIR    := $(BUILD)/common
HV_COMMON_OBJDIR := $(HV_COMMON_DIR)/obj
HV_COMMON_INCDIR := $(HV_COMMON_DIR)/include
HV_COMMON_CPPFLAGS = -I . -I generated/common -I $(HV_COMMON_INCDIR) -MMD -MP
HV_CPPFLAGS = -I . -I generated/common -I $(GEN_PROFILE_DIR) \
	-I $(HV_COMMON_INCDIR) -MMD -MP
HV_ASFLAGS := -D__ASSEMBLER__ -g
HV_LDFLAGS := -nostdlib -static -pie --no-dynamic-linker -z notext -z norelro \
	-z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments

# Sources: the hand-written parts by wildcard, so new files are picked up;
# the generated ones as gen/gen.mk lists them, else by wildcard.
GEN_COMMON_SRCS ?= $(wildcard generated/common/*.c)
GEN_PROFILE_SRCS ?= $(wildcard generated/$(PROFILE)/*.c)

# The hand-written files compiled per profile: the exit path's, which
# inline the profile's constants from its generated headers so that a
# test the profile has decided costs nothing (each folded test would
# otherwise be a load of exitplan_profile, a test and a branch, 2-3
# instructions on the exit that reaches it).  The off-path files read
# the same values as data (arch/vmx/profile_values.h) and compile once.
# tests/make/test_build_once.py checks that each file here still reads a
# profile header.  Per file, with objdump's instruction counts of the
# default profile's object against the same file reading
# exitplan_profile (docs/VMX.md, "One build for every profile"):
#   apic.c		PROFILE_APIC_VIRTUAL, _APIC_INTERCEPT_ICR,
#			_INTERRUPTS_DIRECT: x2APIC ICR/EOI writes (MSR_WRITE
#			exits), kicks and delivery; 831 vs 883
#   cpuid.c		VCPU_STATS_COUNTING: every CPUID exit; 167 vs 182 in
#			handle_cpuid
#   events.c		PROFILE_APIC_VIRTUAL, _INTERRUPTS_DIRECT: injection
#			before each entry with an event pending; 280 vs 289
#   exit.c		PROFILE_STATS_LEVEL and the manual MSR switch
#			(msr_switch.h) unrolled inline: every exit through
#			vmx_handle_exit (a call and a return more otherwise)
#   handlers.c		PROFILE_APIC_VIRTUAL, PROFILE_STATS_LEVEL,
#			VCPU_STATS_COUNTING: HLT, VMCALL, CR access; 1062 vs 1119
#   intr_exits.c	PROFILE_APIC_VIRTUAL: external-interrupt and
#			interrupt-window exits; 113 vs 146
#   io.c		VCPU_STATS_COUNTING: every IN/OUT exit; 171 vs 176
#   mmio.c		PROFILE_APIC_VIRTUAL: the xAPIC page's accesses (EPT
#			violation exits: ICR writes, EOIs); read as data it
#			cost the bench's xAPIC self-IPI 6 ticks, its EOI 3
#   msr.c		VCPU_STATS_COUNTING, PROFILE_APIC_VIRTUAL and the
#			profile's manual MSR slots (msr_switch.h) inline:
#			every RDMSR/WRMSR and preemption-timer exit; 1491 vs 1797
#   preemption_timer.c	PROFILE_PREEMPTION_TIMER_VALUE, PROFILE_APIC_VIRTUAL:
#			the timer's reprogramming on the exits that arm it;
#			119 vs 140
HV_PER_PROFILE_SRCS := \
	arch/vmx/apic.c \
	arch/vmx/cpuid.c \
	arch/vmx/events.c \
	arch/vmx/exit.c \
	arch/vmx/handlers.c \
	arch/vmx/intr_exits.c \
	arch/vmx/io.c \
	arch/vmx/mmio.c \
	arch/vmx/msr.c \
	arch/vmx/preemption_timer.c

HV_HAND_C_SRCS := $(filter-out runtime/host/asm-offsets.c,$(wildcard runtime/*/*.c arch/vmx/*.c lib/*.c))
HV_COMMON_C_SRCS := $(filter-out $(HV_PER_PROFILE_SRCS),$(HV_HAND_C_SRCS)) $(GEN_COMMON_SRCS)
HV_PROFILE_C_SRCS := $(filter $(HV_PER_PROFILE_SRCS),$(HV_HAND_C_SRCS)) $(GEN_PROFILE_SRCS)
HV_S_SRCS := $(wildcard runtime/*/*.S arch/vmx/*.S)

HV_SRC_OBJS = $(patsubst %.c,$(1)/%.o,$(filter %.c,$(2))) $(patsubst %.S,$(1)/%.o,$(filter %.S,$(2)))
HV_COMMON_OBJS  := $(call HV_SRC_OBJS,$(HV_COMMON_OBJDIR),$(HV_COMMON_C_SRCS) $(HV_S_SRCS))
HV_COMMON_LINKS := $(call HV_SRC_OBJS,$(HV_OBJDIR),$(HV_COMMON_C_SRCS) $(HV_S_SRCS))
HV_PROFILE_OBJS := $(call HV_SRC_OBJS,$(HV_OBJDIR),$(HV_PROFILE_C_SRCS))
# Linked in the sources' order, whichever way each was compiled.
HV_OBJS := $(call HV_SRC_OBJS,$(HV_OBJDIR),$(HV_HAND_C_SRCS) $(GEN_COMMON_SRCS) $(GEN_PROFILE_SRCS) $(HV_S_SRCS))

# The version in the banner; version.h is rewritten only when it changes.
HV_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

.PHONY: build iso FORCE

build: $(HV_ELF)
iso: $(ISO)

$(HV_ELF): $(HV_OBJS) $(HV_LDS)
	$(call msg,LD,$@)$(HV_LD) $(HV_LDFLAGS) -T $(HV_LDS) -o $@ $(HV_OBJS)

$(HV_LDS): runtime/host/exitplan.ld runtime/host/layout.h
	@mkdir -p $(@D)
	$(call msg,CPP,$@)$(HV_CC) -E -P -x c -D__ASSEMBLER__ -I . $< -o $@

# Files written by more than one make at once (two profiles built in
# parallel share $(BUILD)/common) are written beside and renamed.
$(HV_COMMON_INCDIR)/version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define EXITPLAN_VERSION "$(HV_VERSION)"' > $@.$$$$; \
	if cmp -s $@.$$$$ $@; then rm -f $@.$$$$; else mv -f $@.$$$$ $@; fi

# The compiler's flags, rewritten only when they change: every object
# depends on it, so a changed flag rebuilds them (as Kbuild's .cmd files
# do).  One for the common objects, one for each profile's.
HV_COMMON_FLAGS_STAMP := $(HV_COMMON_INCDIR)/flags
HV_FLAGS_STAMP := $(HV_INCDIR)/flags
$(HV_COMMON_FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(HV_CC) $(HV_CFLAGS) $(HV_ASFLAGS) $(HV_COMMON_CPPFLAGS)' > $@.$$$$; \
	if cmp -s $@.$$$$ $@; then rm -f $@.$$$$; else mv -f $@.$$$$ $@; fi
$(HV_FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(HV_CC) $(HV_CFLAGS) $(HV_CPPFLAGS)' > $@.$$$$; \
	if cmp -s $@.$$$$ $@; then rm -f $@.$$$$; else mv -f $@.$$$$ $@; fi

# Constants for assembly, computed by the compiler from C headers
# (host-only: common to every profile).
$(HV_COMMON_INCDIR)/asm-offsets.h: runtime/host/asm-offsets.c $(HV_COMMON_FLAGS_STAMP)
	@mkdir -p $(@D) $(HV_COMMON_OBJDIR)/runtime/host
	$(call msg,GEN,$@)$(HV_CC) $(HV_CFLAGS) $(HV_COMMON_CPPFLAGS) -MT $@ \
		-MF $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.d.$$$$ \
		-S -o $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.s.$$$$ $< && \
	{ echo '/* Generated from runtime/host/asm-offsets.c; do not edit. */'; \
	   sed -n 's/^[[:space:]]*\.ascii "->\([A-Za-z0-9_]*\) \$$\{0,1\}\(-\{0,1\}[0-9]*\)"$$/#define \1 \2/p' \
		$(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.s.$$$$; } > $@.$$$$ && \
	mv -f $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.d.$$$$ $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.d && \
	mv -f $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.s.$$$$ $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.s && \
	mv -f $@.$$$$ $@

$(HV_COMMON_OBJDIR)/%.o: %.c $(HV_COMMON_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$*.o)$(HV_CC) $(HV_CFLAGS) $(HV_COMMON_CPPFLAGS) \
		$(if $(filter runtime/init/main.c,$<),-include $(HV_COMMON_INCDIR)/version.h) -MT $@ -MF $(@:.o=.d).$$$$ \
		-c -o $@.$$$$ $< && mv -f $(@:.o=.d).$$$$ $(@:.o=.d) && mv -f $@.$$$$ $@

$(HV_COMMON_OBJDIR)/%.o: %.S $(HV_COMMON_INCDIR)/asm-offsets.h $(HV_COMMON_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call msg,AS,$*.o)$(HV_CC) $(HV_COMMON_CPPFLAGS) $(HV_ASFLAGS) -MT $@ -MF $(@:.o=.d).$$$$ \
		-c -o $@.$$$$ $< && mv -f $(@:.o=.d).$$$$ $(@:.o=.d) && mv -f $@.$$$$ $@

# A common object and its .d into the profile's obj/: a hard link where
# the file system allows one.
$(HV_COMMON_LINKS): $(HV_OBJDIR)/%.o: $(HV_COMMON_OBJDIR)/%.o
	@mkdir -p $(@D)
	@ln -f $< $@ 2>/dev/null || cp -f $< $@
	@ln -f $(<:.o=.d) $(@:.o=.d) 2>/dev/null || cp -f $(<:.o=.d) $(@:.o=.d)

$(HV_PROFILE_OBJS): $(HV_OBJDIR)/%.o: %.c $(HV_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$*.o)$(HV_CC) $(HV_CFLAGS) $(HV_CPPFLAGS) -c -o $@ $<

$(HV_COMMON_OBJDIR)/runtime/init/main.o: $(HV_COMMON_INCDIR)/version.h

-include $(HV_COMMON_OBJS:.o=.d) $(HV_PROFILE_OBJS:.o=.d) $(HV_COMMON_OBJDIR)/runtime/host/asm-offsets.d

# The boot ISO: GRUB, the hypervisor, the guest (or KERNEL) as the first
# module, MODULES after it.
$(ISO): $(HV_ELF) $(RUN_ELF) $(RUN_MODULES) tests/boot/mkiso.sh tests/boot/grub.cfg.in FORCE
	$(Q)tests/boot/mkiso.sh $@ $(HV_ELF) $(RUN_ELF) "$(HV_CMDLINE)" "$(RUN_CMDLINE)" $(RUN_MODULES)
