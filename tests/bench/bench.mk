# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks (docs/BENCH.md).  Timing lives here only, never in `make test`.
#
#   make bench         the host microbenchmark, then every profile on Bochs
#                      (tests/bench/run_bench.py); prints build/bench/results.md
#   make bench-host    the host microbenchmark of the generated dispatch alone:
#                      build/bench/host.md (also on stdout) and host.csv
#   make test-bench    pass/fail, no timing: the report format from a recorded
#                      guest output, and the host microbenchmark builds and runs
#   make trace-path KIND=k   one round trip of the bench guest's kind k under
#                      PROFILE, instruction by instruction, named by function
#                      (tests/bench/trace_path.py; Bochs's debugger)
#
#   BENCH_PASSES=15        passes of the host microbenchmark (the best counts)
#   BENCH_ARGS=...         extra arguments for run_bench.py (--profiles, --jobs ...)

BENCH_OUT      := $(BUILD)/bench
BENCH_HOST_OUT := $(BENCH_OUT)/host
BENCH_SRC      := tests/bench
BENCH_HOST_SRC := $(BENCH_SRC)/host
BENCH_HOST_BIN := $(BENCH_HOST_OUT)/dispatch-bench
BENCH_PASSES   ?= 15
BENCH_ARGS     ?=
# Exits per pass: 2^20 spreads a mix's rare reasons (1%) over ~10k exits
# and keeps the branch pattern far beyond what a predictor can learn.
BENCH_SEQ_LEN  := 1048576

# Like the hypervisor: -O2, no endbr64 (-fcf-protection=none, also required
# with thunks), and position-dependent code, so the table is addressed as in
# the kernel image.  -iquote so that lib/'s string.h hides nothing.
BENCH_CC       := gcc
BENCH_CFLAGS   := -std=gnu11 -O2 -Wall -Wextra -Werror -fno-pie -fcf-protection=none -MMD -MP
BENCH_LDFLAGS  := -no-pie
BENCH_INC      := -iquote $(BENCH_HOST_SRC) -iquote $(BENCH_HOST_OUT) -iquote . \
		  -iquote generated/common
# Retpolines as Linux builds them for indirect branches (CONFIG_RETPOLINE):
# every indirect call or jump goes through __x86_indirect_thunk_<reg>, here
# emitted by GCC into each object (thunk, not thunk-extern: no kernel to
# provide them).  Returns stay plain RETs: KVM's 2019 chain was about the
# indirect call, and return thunks would tax every variant alike.
BENCH_RETPOLINE_FLAGS := -mindirect-branch=thunk -mindirect-branch-register \
			 -mfunction-return=keep

bench_id = $(subst -,_,$(1))
# $(call bench_variant_flags,PROFILE,plain|retpoline)
bench_variant_flags = -Dvmx_dispatch_exit=vmx_dispatch_exit_$(call bench_id,$(1))_$(2) \
	-Dvmx_exit_table=vmx_exit_table_$(call bench_id,$(1))_$(2) \
	-DBENCH_VARIANT_SYM=bench_variant_$(call bench_id,$(1))_$(2) \
	-DBENCH_RETPOLINE=$(if $(filter retpoline,$(2)),1,0) \
	$(if $(filter retpoline,$(2)),$(BENCH_RETPOLINE_FLAGS))

BENCH_DATA_C   := $(BENCH_HOST_OUT)/bench_data.c
BENCH_COMMON_O := $(addprefix $(BENCH_HOST_OUT)/obj/,main.o handlers.o bench_data.o)
BENCH_VARIANT_O := $(foreach p,$(PROFILES),$(foreach k,plain retpoline,\
	$(BENCH_HOST_OUT)/obj/$(p)-$(k)/exit_dispatch.o $(BENCH_HOST_OUT)/obj/$(p)-$(k)/variant.o))

.PHONY: bench bench-host bench-host-build test-bench trace-path FORCE

# The report is printed even when a run failed (it says which); make
# fails afterwards with run_bench.py's status.
bench: deps-bench
	@$(MAKE) --no-print-directory bench-host
	@$(PYTHON) $(BENCH_SRC)/run_bench.py --build $(BUILD) --out $(BENCH_OUT) $(BENCH_ARGS); \
	status=$$?; \
	if [ -f $(BENCH_OUT)/results.md ]; then echo; cat $(BENCH_OUT)/results.md; fi; \
	exit $$status

bench-host-build: $(BENCH_HOST_BIN)

bench-host: $(BENCH_HOST_BIN)
	$(Q)$(BENCH_HOST_BIN) --passes $(BENCH_PASSES) --csv $(BENCH_OUT)/host.csv > $(BENCH_OUT)/host.md.tmp
	@mv $(BENCH_OUT)/host.md.tmp $(BENCH_OUT)/host.md
	@cat $(BENCH_OUT)/host.md
	@echo "bench-host: $(BENCH_OUT)/host.md, $(BENCH_OUT)/host.csv"

# No timing: only formats, and that the microbenchmark runs (--smoke).
test-bench: deps-test
	$(call msg,TEST,$(BENCH_SRC))EXITPLAN_BUILD=$(BUILD) $(PYTHON) -m pytest -q -rs -p no:cacheprovider $(BENCH_SRC)/test_bench_format.py $(BENCH_SRC)/test_exitpath.py $(BENCH_SRC)/test_workloads.py $(BENCH_SRC)/test_overcommit.py \
		$(BENCH_SRC)/test_linux_bench.py $(BENCH_SRC)/test_intrpaths.py $(BENCH_SRC)/test_trace_path.py

KIND ?=
trace-path: deps-bench
	$(if $(KIND),,$(error trace-path: KIND=a bench guest kind, e.g. KIND=intr-tsc-deadline-fire))
	$(Q)EXITPLAN_BUILD=$(BUILD) $(PYTHON) $(BENCH_SRC)/trace_path.py --profile $(PROFILE) --kind $(KIND) --cpu $(CPU)

$(BENCH_HOST_BIN): $(BENCH_COMMON_O) $(BENCH_VARIANT_O)
	$(call msg,HOSTLD,$@)$(BENCH_CC) $(BENCH_LDFLAGS) -o $@ $^

# Always run: it rewrites its outputs only when they change, and the list
# of profiles is part of its input.
$(BENCH_DATA_C): $(BENCH_HOST_SRC)/bench_data.py $(BENCH_SRC)/exitmix.py FORCE
	$(call msg,GEN,$@)$(PYTHON) $(BENCH_HOST_SRC)/bench_data.py --root . --seq-len $(BENCH_SEQ_LEN) \
		--out-c $(BENCH_DATA_C) $(PROFILES)

$(BENCH_HOST_OUT)/obj/%.o: $(BENCH_HOST_SRC)/%.c
	@mkdir -p $(@D)
	$(call msg,HOSTCC,$@)$(BENCH_CC) $(BENCH_CFLAGS) $(BENCH_INC) -c -o $@ $<

$(BENCH_HOST_OUT)/obj/bench_data.o: $(BENCH_DATA_C)
	@mkdir -p $(@D)
	$(call msg,HOSTCC,$@)$(BENCH_CC) $(BENCH_CFLAGS) $(BENCH_INC) -c -o $@ $<

# Per profile and retpoline setting: the generated dispatch and its loop,
# both with the profile's headers, the variant's renames and flags.
define BENCH_VARIANT_RULES
$(BENCH_HOST_OUT)/obj/$(1)-$(2)/exit_dispatch.o: generated/$(1)/exit_dispatch.c
	@mkdir -p $$(@D)
	$$(call msg,HOSTCC,$$@)$$(BENCH_CC) $$(BENCH_CFLAGS) $$(BENCH_INC) -iquote generated/$(1) \
		$$(call bench_variant_flags,$(1),$(2)) -c -o $$@ $$<

$(BENCH_HOST_OUT)/obj/$(1)-$(2)/variant.o: $(BENCH_HOST_SRC)/variant.c
	@mkdir -p $$(@D)
	$$(call msg,HOSTCC,$$@)$$(BENCH_CC) $$(BENCH_CFLAGS) $$(BENCH_INC) -iquote generated/$(1) \
		$$(call bench_variant_flags,$(1),$(2)) -c -o $$@ $$<
endef

$(foreach p,$(PROFILES),$(foreach k,plain retpoline,$(eval $(call BENCH_VARIANT_RULES,$(p),$(k)))))

-include $(shell find $(BENCH_HOST_OUT)/obj -name '*.d' 2>/dev/null)
