# SPDX-License-Identifier: GPL-2.0-only
# Host unit tests (cmocka) of the pure logic of runtime/ and arch/vmx, and of
# the generated code.
#
#   make test-unit     build and run every unit test; fails if any fails
#
# Programs (all in $(BUILD)/unit):
#   test_engine             vmx_compute_controls() on hand-made setups and
#                           on every recorded CPU model (tests/data/vmx-caps)
#   test_policy             MSR and I/O bitmap construction
#   PROFILE/test_controls   the profile's generated setup on every CPU model
#   PROFILE/test_dispatch   the generated dispatch, for all 65536 reasons
#   PROFILE/test_msrs       the manual MSR switching (arch/vmx/manual_msrs.h with
#                           the profile's msr_switch.h) and the bitmap rules
#   test_format             lib/format.c against the host's snprintf
#   test_platform           runtime/devices/platform.c: fw_cfg, isa-debug-exit and
#                           the ports a guest does not own
#   test_pci                runtime/devices/pci.c: the guest's view of PCI
#                           configuration space
#   test_ept                arch/vmx/ept.c: the identity map from memory maps
#   test_guest_loader       runtime/loader/guest_loader.c: multiboot images, the
#                           guest's memory map and multiboot information
#   test_arch_checks        runtime/vcpu/arch_checks.c: XCR0, PAT, MTRR, CR8,
#                           TSC-offset and segment checks
#   test_task_switch        runtime/vcpu/task_switch.c: the hardware task switch
#                           to and from 32-bit and 16-bit TSSs and its faults,
#                           on fake memory
#   test_vm                 runtime/vm/vm.c: vCPU run states, INIT/STARTUP,
#                           posted events, the ICR decode
#   test_ioapic             runtime/devices/ioapic.c: the guest's I/O APIC, the
#                           redirection-entry filter
#   vmexit-bench/test_ctls  arch/vmx/vmx_ctls.h: the controls cache on the
#                           fake VMCS (fakes/arch/vmx/vmx_ops.h)
#   test_sched              runtime/vm/sched.c: run queues, slice end, HLT
#                           block and wake, the spin and PAUSE yields
#   vmexit-bench/test_cpuid_fast  the profile's CPUID fast handler (generated
#                           cpuid_fast.c) against handle_cpuid() (arch/vmx/
#                           cpuid.c) on the fake VMCS: the same result
#   vmexit-bench/test_msr_io_fast  the MSR and I/O fast handlers (generated
#                           msr_io_fast.c) against msr.c, io.c, platform.c on
#                           the fake VMCS and CPU: the same result
#   test_linux_loader       runtime/loader/linux_loader.c: the bzImage setup header,
#                           placement, boot_params and its e820 map
#   test_vpic               runtime/devices/vpic.c: the guest's 8259A pair
#   test_vpit               runtime/devices/vpit.c: the guest's 8254 and port 0x61
#   test_vrtc               runtime/devices/vrtc.c: the guest's MC146818A RTC and CMOS
#   test_vlapic             runtime/devices/vlapic.c: the virtual local APIC's
#                           registers, priorities, timer, modes and ICR
#   test_region             runtime/host/region.c: where the hypervisor region goes
#                           (the top of RAM below 4 GiB) and its size
#   test_acpi               runtime/host/acpi.c: the guest's MADT listing more
#                           vCPUs than the machine has CPUs
#   test_apic_mode          runtime/devices/apic_mode.c: IA32_APIC_BASE's modes and
#                           transitions, the xAPIC page on the x2APIC MSRs
#   test_vmcs_init          arch/vmx/vmcs_init.c: the VMCS setup's VMWRITE and
#                           allocation failures reported (vCPU, field)
#   test_extable            runtime/host/extable.c: the exception fixup table, with
#                           msr_safe.c's RDMSR/WRMSR faulting in user mode,
#                           on two threads at once
#   test_x86_decode         runtime/vcpu/x86_decode.c: instruction bytes -> the
#                           operation on MMIO; the ALU flags against the host's
#   test_nmi_root           arch/vmx/nmi_root.h: an NMI in root operation kept
#                           for a vCPU halted there, dropped in wait-for-SIPI,
#                           a kick never taken for the guest's

UNIT_OUT      := $(BUILD)/unit
UNIT_SRC      := tests/unit
# The capability MSRs recorded on each Bochs CPU model (their README).
VMX_CAPS_DIR  := tests/data/vmx-caps
VMX_CAPS_YAML := $(sort $(wildcard $(VMX_CAPS_DIR)/*.yaml))

UNIT_CC       := gcc
UNIT_CFLAGS   := -std=gnu11 -Wall -Wextra -Werror -g -O1 \
		 -fsanitize=address,undefined -fno-sanitize-recover=all \
		 -fno-omit-frame-pointer -MMD -MP
# -iquote, not -I: lib/ has the freestanding string.h, which must
# not hide the host's <string.h> from libc, cmocka and the tests.  Quoted
# includes still search these in order, so fakes/runtime/host/cpu.h
# stands in for runtime/host/cpu.h.
UNIT_INC_QUOTE := -iquote $(UNIT_SRC)/fakes -iquote $(UNIT_SRC) -iquote . \
		 -iquote generated/common
UNIT_INC      := $(UNIT_INC_QUOTE)
UNIT_LDLIBS   := -lcmocka

# Objects: profile-independent sources once in obj/common, the rest per
# profile in obj/PROFILE (compiled with -iquote generated/PROFILE).
UNIT_OBJ       = $(UNIT_OUT)/obj/$(1)/$(patsubst %.c,%.o,$(2))
# The generated sources by name (docs/INTERFACES.md), not by wildcard, so
# that gen/gen.mk's rules regenerate them before they are compiled.
UNIT_COMMON_C := generated/common/vmx_exit_reasons.c generated/common/vmx_features.c \
		 generated/common/msr_table.c
UNIT_CAPS_C   := $(UNIT_OUT)/vmx_caps_data.c
UNIT_LIB_C     = arch/vmx/vmx_controls.c arch/vmx/policy.c \
		 $(UNIT_SRC)/unit_util.c $(UNIT_SRC)/fakes/fake_cpu.c \
		 $(UNIT_COMMON_C) $(UNIT_CAPS_C)
UNIT_LIB_O     = $(foreach f,$(UNIT_LIB_C),$(call UNIT_OBJ,common,$(f)))

UNIT_RUNTIME_TESTS := test_format test_platform test_pci test_ept test_guest_loader test_arch_checks \
		      test_task_switch test_vm test_ioapic test_sched test_linux_loader test_vpic test_vpit test_vrtc test_vlapic \
		      test_acpi test_region test_apic_mode test_vmcs_init test_extable test_x86_decode test_nmi_root
UNIT_PROGRAMS := $(UNIT_OUT)/test_engine $(UNIT_OUT)/test_policy \
		 $(addprefix $(UNIT_OUT)/,$(UNIT_RUNTIME_TESTS)) \
		 $(foreach p,$(PROFILES),$(addprefix $(UNIT_OUT)/$(p)/,test_controls test_dispatch test_msrs)) \
		 $(UNIT_OUT)/vmexit-bench/test_ctls $(UNIT_OUT)/vmexit-bench/test_cpuid_fast \
		 $(UNIT_OUT)/vmexit-bench/test_msr_io_fast

.PHONY: unit-build
unit-build: $(UNIT_PROGRAMS)

# Run every program even after a failure, then fail if any failed.
test-unit: unit-build
	@failed=""; \
	for t in $(UNIT_PROGRAMS); do \
		printf "  %-7s %s\n" RUN "$$t"; \
		$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "test-unit: FAILED:$$failed" >&2; exit 1; \
	fi; \
	echo "test-unit: all $(words $(UNIT_PROGRAMS)) programs passed"

$(UNIT_CAPS_C): $(UNIT_SRC)/caps2c.py $(VMX_CAPS_YAML) spec/msrs.yaml spec/features.yaml
	@mkdir -p $(@D)
	$(call msg,GEN,$@)$(PYTHON) $(UNIT_SRC)/caps2c.py $@ --spec spec $(VMX_CAPS_YAML)

$(UNIT_OUT)/obj/common/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,HOSTCC,$*.o)$(UNIT_CC) $(UNIT_CFLAGS) $(UNIT_INC) -c -o $@ $<

$(UNIT_OUT)/test_engine: $(call UNIT_OBJ,common,$(UNIT_SRC)/test_engine.c) $(UNIT_LIB_O)
	$(call msg,HOSTLD,$@)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LDLIBS)

$(UNIT_OUT)/test_policy: $(call UNIT_OBJ,common,$(UNIT_SRC)/test_policy.c) $(UNIT_LIB_O)
	$(call msg,HOSTLD,$@)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LDLIBS)

# The pure parts of runtime/ and arch/vmx (UNIT_RUNTIME_TESTS), each with
# the sources it tests and the fakes of what those call.  lib/format.c defines snprintf/vsnprintf: renamed here so
# that the host's stay the C library's (the test compares the two).
$(call UNIT_OBJ,common,lib/format.c): UNIT_CFLAGS += -Dsnprintf=ep_snprintf -Dvsnprintf=ep_vsnprintf
# lib/string.c's strlcpy() (the C library has none), with its other
# functions renamed so that the host's stay the C library's.
$(call UNIT_OBJ,common,lib/string.c): UNIT_CFLAGS += -Dmemset=ep_memset -Dmemcpy=ep_memcpy \
	-Dmemmove=ep_memmove -Dmemcmp=ep_memcmp -Dstrlen=ep_strlen -Dstrnlen=ep_strnlen \
	-Dstrcmp=ep_strcmp -Dstrncmp=ep_strncmp -Dstrchr=ep_strchr -fno-builtin
# printk() into a buffer the tests read, and lib/string.c as the runtime has it.
UNIT_FAKE_RUNTIME := $(UNIT_SRC)/fakes/fake_runtime.c lib/string.c
# -Wno-format-truncation: the kernel is built -ffreestanding, where GCC
# does not treat snprintf as the C library's; here it would.
$(UNIT_OUT)/obj/common/runtime/%.o: UNIT_CFLAGS += -Wno-format-truncation
UNIT_SRCS_test_format        := lib/format.c
UNIT_SRCS_test_platform      := runtime/devices/platform.c runtime/devices/pci.c runtime/devices/vpic.c runtime/devices/vpit.c runtime/devices/vrtc.c $(UNIT_FAKE_RUNTIME) \
				$(UNIT_SRC)/fakes/fake_cpu.c
UNIT_SRCS_test_pci           := runtime/devices/pci.c $(UNIT_FAKE_RUNTIME) \
				$(UNIT_SRC)/fakes/fake_cpu.c
UNIT_SRCS_test_ept           := arch/vmx/ept.c runtime/loader/guest_ram.c \
				$(UNIT_FAKE_RUNTIME)
UNIT_SRCS_test_guest_loader  := runtime/loader/guest_loader.c runtime/loader/guest_ram.c runtime/loader/linux_loader.c $(UNIT_FAKE_RUNTIME)
UNIT_SRCS_test_linux_loader  := runtime/loader/linux_loader.c runtime/loader/guest_loader.c runtime/loader/guest_ram.c $(UNIT_FAKE_RUNTIME)
UNIT_SRCS_test_arch_checks   := runtime/vcpu/arch_checks.c
UNIT_SRCS_test_task_switch   := runtime/vcpu/task_switch.c
UNIT_SRCS_test_x86_decode    := runtime/vcpu/x86_decode.c
UNIT_SRCS_test_nmi_root      :=
UNIT_SRCS_test_vm            := runtime/vm/vm.c $(UNIT_FAKE_RUNTIME)
# test_vm runs vm_any_vcpu_runnable() on a second thread against a held vCPU lock.
$(UNIT_OUT)/test_vm: UNIT_LDLIBS += -pthread
UNIT_SRCS_test_ioapic        := runtime/devices/ioapic.c
UNIT_SRCS_test_sched         := runtime/vm/sched.c
UNIT_SRCS_test_acpi          := runtime/host/acpi.c
UNIT_SRCS_test_region        := runtime/host/region.c
# The linker names the __extable section's bounds __start___extable and
# __stop___extable; the hypervisor's linker script names them itself.
UNIT_SRCS_test_extable       := runtime/host/extable.c runtime/host/msr_safe.c
UNIT_LDFLAGS_test_extable    := -pthread -Wl,--defsym=__extable_start=__start___extable \
				-Wl,--defsym=__extable_end=__stop___extable
UNIT_SRCS_test_apic_mode     := runtime/devices/apic_mode.c
UNIT_SRCS_test_vpic          := runtime/devices/vpic.c
UNIT_SRCS_test_vpit          := runtime/devices/vpit.c
UNIT_SRCS_test_vrtc          := runtime/devices/vrtc.c
UNIT_SRCS_test_vlapic        := runtime/devices/vlapic.c runtime/vm/vm.c $(UNIT_FAKE_RUNTIME)
UNIT_SRCS_test_vmcs_init     := arch/vmx/vmcs_init.c $(UNIT_SRC)/fakes/fake_vmcs.c \
				$(UNIT_FAKE_RUNTIME)
# vmcs_init.c's quoted "vmx_ops.h" would be the real one beside it: the fake goes first.
$(call UNIT_OBJ,common,arch/vmx/vmcs_init.c): UNIT_CFLAGS += -include $(UNIT_SRC)/fakes/arch/vmx/vmx_ops.h

define UNIT_RUNTIME_RULE
$(UNIT_OUT)/$(1): $(call UNIT_OBJ,common,$(UNIT_SRC)/$(1).c) $$(foreach f,$$(UNIT_SRCS_$(1)),$$(call UNIT_OBJ,common,$$(f)))
	$$(call msg,HOSTLD,$$@)$$(UNIT_CC) $$(UNIT_CFLAGS) -o $$@ $$^ $$(UNIT_LDLIBS) $$(UNIT_LDFLAGS_$(1))
endef
$(foreach t,$(UNIT_RUNTIME_TESTS),$(eval $(call UNIT_RUNTIME_RULE,$(t))))

# Per profile: the profile's generated files, and the tests that include
# its headers.  profile_facts.h holds what the tests expect of the profile,
# derived from profiles/PROFILE.yaml and spec/ by profile_facts.py.
define UNIT_PROFILE_RULES
$(UNIT_OUT)/obj/$(1)/%.o: %.c $(UNIT_OUT)/$(1)/profile_facts.h
	@mkdir -p $$(@D)
	$$(call msg,HOSTCC,$$*.o [$(1)])$$(UNIT_CC) $$(UNIT_CFLAGS) $$(UNIT_INC) -iquote generated/$(1) -iquote $(UNIT_OUT)/$(1) -c -o $$@ $$<

$(UNIT_OUT)/$(1)/profile_facts.h: $(UNIT_SRC)/profile_facts.py profiles/$(1).yaml gen/exitplan_gen/costmodel.py $$(wildcard spec/*.yaml)
	@mkdir -p $$(@D)
	$$(call msg,GEN,$$@)$$(PYTHON) $(UNIT_SRC)/profile_facts.py $$@ profiles/$(1).yaml spec

# The dispatch calls the handlers: only test_dispatch links it, with fakes.
UNIT_GEN_O_$(1) = $$(foreach f,generated/$(1)/vmcs_setup.c generated/$(1)/msr_policy.c,$$(call UNIT_OBJ,$(1),$$(f)))

$(UNIT_OUT)/$(1)/test_controls: $$(call UNIT_OBJ,$(1),$(UNIT_SRC)/test_controls.c) $$(UNIT_GEN_O_$(1)) $$(UNIT_LIB_O)
	$$(call msg,HOSTLD,$$@)$$(UNIT_CC) $$(UNIT_CFLAGS) -o $$@ $$^ $$(UNIT_LDLIBS)

$(UNIT_OUT)/$(1)/test_dispatch: $$(call UNIT_OBJ,$(1),$(UNIT_SRC)/test_dispatch.c) \
		$$(call UNIT_OBJ,$(1),generated/$(1)/exit_dispatch.c) $$(UNIT_GEN_O_$(1)) $$(UNIT_LIB_O)
	$$(call msg,HOSTLD,$$@)$$(UNIT_CC) $$(UNIT_CFLAGS) -o $$@ $$^ $$(UNIT_LDLIBS)

$(UNIT_OUT)/$(1)/test_msrs: $$(call UNIT_OBJ,$(1),$(UNIT_SRC)/test_msrs.c) $$(UNIT_GEN_O_$(1)) $$(UNIT_LIB_O)
	$$(call msg,HOSTLD,$$@)$$(UNIT_CC) $$(UNIT_CFLAGS) -o $$@ $$^ $$(UNIT_LDLIBS)
endef

$(foreach p,$(PROFILES),$(eval $(call UNIT_PROFILE_RULES,$(p))))

# struct vcpu needs a profile's headers (msr_policy.h); the cache is the
# same under every profile, so one build of it is enough.
$(UNIT_OUT)/vmexit-bench/test_ctls: $(call UNIT_OBJ,vmexit-bench,$(UNIT_SRC)/test_ctls.c) \
		$(call UNIT_OBJ,common,$(UNIT_SRC)/fakes/fake_vmcs.c)
	$(call msg,HOSTLD,$@)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LDLIBS)

$(UNIT_OUT)/vmexit-bench/test_cpuid_fast: $(call UNIT_OBJ,vmexit-bench,$(UNIT_SRC)/test_cpuid_fast.c) \
		$(call UNIT_OBJ,vmexit-bench,arch/vmx/cpuid.c) \
		$(call UNIT_OBJ,vmexit-bench,generated/vmexit-bench/cpuid_fast.c) \
		$(call UNIT_OBJ,common,$(UNIT_SRC)/fakes/fake_vmcs.c)
	$(call msg,HOSTLD,$@)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LDLIBS)
$(UNIT_OUT)/vmexit-bench/test_msr_io_fast: $(call UNIT_OBJ,vmexit-bench,$(UNIT_SRC)/test_msr_io_fast.c) \
		$(call UNIT_OBJ,vmexit-bench,arch/vmx/msr.c) \
		$(call UNIT_OBJ,vmexit-bench,arch/vmx/preemption_timer.c) \
		$(call UNIT_OBJ,vmexit-bench,arch/vmx/io.c) \
		$(call UNIT_OBJ,vmexit-bench,generated/vmexit-bench/msr_io_fast.c) \
		$(call UNIT_OBJ,vmexit-bench,generated/vmexit-bench/msr_policy.c) \
		$(call UNIT_OBJ,vmexit-bench,$(UNIT_SRC)/fakes/fake_msr_io_fast.c) \
		$(foreach f,runtime/devices/platform.c runtime/devices/pci.c runtime/devices/vpic.c runtime/devices/vpit.c runtime/devices/vrtc.c \
			$(UNIT_FAKE_RUNTIME) $(UNIT_SRC)/fakes/fake_cpu.c \
			$(UNIT_SRC)/fakes/fake_vmcs.c runtime/vcpu/arch_checks.c runtime/host/msr_safe.c runtime/devices/apic_mode.c \
			generated/common/msr_table.c,$(call UNIT_OBJ,common,$(f)))
	$(call msg,HOSTLD,$@)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LDLIBS)
$(call UNIT_OBJ,vmexit-bench,arch/vmx/msr.c) \
$(call UNIT_OBJ,vmexit-bench,arch/vmx/preemption_timer.c) \
$(call UNIT_OBJ,vmexit-bench,arch/vmx/io.c) \
$(call UNIT_OBJ,vmexit-bench,generated/vmexit-bench/msr_io_fast.c): \
	UNIT_CFLAGS += -include $(UNIT_SRC)/fakes/arch/vmx/vmx_ops.h
# The handlers' own sources find the real vmx_ops.h beside them (a quoted
# include searches the includer's directory first): the fake goes first.
$(call UNIT_OBJ,vmexit-bench,arch/vmx/cpuid.c) \
$(call UNIT_OBJ,vmexit-bench,generated/vmexit-bench/cpuid_fast.c): \
	UNIT_CFLAGS += -include $(UNIT_SRC)/fakes/arch/vmx/vmx_ops.h

# Header dependencies from -MMD.
-include $(shell find $(UNIT_OUT)/obj -name '*.d' 2>/dev/null)
