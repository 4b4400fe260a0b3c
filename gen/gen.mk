# SPDX-License-Identifier: GPL-2.0-only
# The generator: profiles/*.yaml + spec/*.yaml -> generated/ (committed).
#
#   make gen                  regenerate generated/ for every profile
#   make check-gen            fail, listing them, when generated files are stale
#   make diff A=x B=y         unified diff of two profiles' generated code
#   make explain [PROFILE=x]  the profile's decisions in words
#   make test-gen             the generator's tests (pytest)
#   make profile FROM=serial.log NAME=x [BASE=$(PROFILE)] [CPU_MODEL=...]
#                [DATE=YYYY-MM-DD] [NOTE=...]
#                             profiles/x.yaml from the statistics a run printed
#                             (BASE's policies, the measured exit mix), and
#                             generated/x/ from it (docs/PROFILES-FROM-STATS.md)

.PHONY: gen check-gen diff explain test-gen profile

GEN          := gen/exitplan-gen
GEN_INPUTS   := $(GEN) $(wildcard gen/exitplan_gen/*.py) $(wildcard gen/templates/*/*.j2) \
		$(wildcard spec/*.yaml) spec/profile.schema.json $(wildcard profiles/*.yaml)
GEN_STAMP    := $(BUILD)/gen.stamp

# What the generator writes; explicit, so that make knows them before they exist.
GEN_COMMON_HDRS := $(addprefix generated/common/,arch_bits.h exit_handlers.h hypercalls.h \
		msr_index.h msr_table.h vmcs_fields.h vmx_controls_bits.h vmx_exit_reasons.h vmx_features.h)
GEN_COMMON_SRCS := $(addprefix generated/common/,msr_table.c runtime_controls.c vmx_exit_reasons.c vmx_features.c)
gen_profile_hdrs = $(addprefix generated/$(1)/,profile.h runtime_profile.h msr_policy.h msr_switch.h)
gen_profile_srcs = $(addprefix generated/$(1)/,exit_dispatch.c cpuid_fast.c msr_io_fast.c vmcs_setup.c msr_policy.c)
GEN_PROFILE_HDRS := $(call gen_profile_hdrs,$(PROFILE))
GEN_PROFILE_SRCS := $(call gen_profile_srcs,$(PROFILE))
GEN_FILES := $(GEN_COMMON_HDRS) $(GEN_COMMON_SRCS) \
	$(foreach p,$(PROFILES),$(call gen_profile_hdrs,$(p)) $(call gen_profile_srcs,$(p)))

# A changed profile, spec file, template or generator reruns the generator
# before anything that uses its output is built.  It rewrites only files
# whose content changes (and leaves their timestamps alone otherwise), so
# the empty recipe below lets make see which generated files really moved.
$(GEN_STAMP): $(GEN_INPUTS)
	@mkdir -p $(dir $@)
	$(call msg,GEN,generated/)$(PYTHON) $(GEN) gen
	@touch $@

$(GEN_FILES): $(GEN_STAMP) ;

gen:
	$(call msg,GEN,generated/)$(PYTHON) $(GEN) gen
	@mkdir -p $(dir $(GEN_STAMP)) && touch $(GEN_STAMP)

check-gen:
	$(call msg,CHECK,generated/)$(PYTHON) $(GEN) check

diff:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make diff A=PROFILE B=PROFILE" >&2; exit 2; }
	$(Q)$(PYTHON) $(GEN) diff $(A) $(B)

explain:
	$(Q)$(PYTHON) $(GEN) explain $(PROFILE)

# A make variable as one single-quoted shell word.
gen_sq = '$(subst ','\'',$(1))'

gen_from_stats_args = $(call gen_sq,$(FROM)) --base $(call gen_sq,$(or $(BASE),$(PROFILE))) \
	--name $(call gen_sq,$(NAME))$(if $(CPU_MODEL), --cpu $(call gen_sq,$(CPU_MODEL)))$(strip \
	)$(if $(DATE), --date $(call gen_sq,$(DATE)))$(if $(NOTE), --note $(call gen_sq,$(NOTE)))

profile:
	@test -n "$(FROM)" -a -n "$(NAME)" || { echo "usage: make profile FROM=serial.log NAME=x" \
		"[BASE=profile] [CPU_MODEL=model] [DATE=YYYY-MM-DD] [NOTE=text]" >&2; exit 2; }
	$(call msg,GEN,profiles/$(NAME).yaml)$(PYTHON) $(GEN) from-stats $(gen_from_stats_args)
	$(call msg,GEN,generated/$(NAME)/)$(PYTHON) $(GEN) gen $(call gen_sq,$(NAME))

# CHECK_JOBS workers (pytest-xdist): make check's long pole.
test-gen:
	$(call msg,TEST,tests/gen)$(PYTHON) -m pytest -q -p no:cacheprovider \
		-rs $(call pytest_workers,$(CHECK_JOBS)) tests/gen
