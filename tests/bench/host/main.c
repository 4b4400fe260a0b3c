// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host microbenchmark of the generated VM-exit dispatch (bench.h).
 *
 *   dispatch-bench [--csv FILE] [--passes N] [--exits N] [--smoke]
 *                  [--table PROFILE] [--kvm PROFILE]
 *
 * Every compiled dispatch is fed every profile's exit mix: a sequence of
 * bench_seq_len basic exit reasons holding each reason exactly as often as
 * its share says (bench_data.py), shuffled with a fixed-seed PRNG, so the
 * branch pattern is the mix's and identical on every run.  Each
 * (dispatch, mix) pair is timed over the whole sequence with
 * CLOCK_MONOTONIC, in segments, the pairs interleaved within each pass so
 * that drift of the machine's speed hits all of them alike, and the best
 * time of each segment over the passes is kept (time_pass()).
 *
 * Prints a Markdown report on stdout and, with --csv, one row per pair.
 * Timing only: nothing here passes or fails on a number.  --smoke runs one
 * short pass so that a test can check that it builds and runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "exit_handlers.h"	/* generated: VMX_EXIT_HANDLERS(X) */
#include "vmx_exit_reasons.h"	/* generated: VMX_EXIT_REASON_MAX, names */

/* "exitplan" in ASCII: any fixed value would do; this one is documented. */
#define BENCH_SEED	0x65786974706c616eull

struct options {
	const char *csv;
	unsigned int passes;
	size_t exits;		/* exits per timed pass, at most bench_seq_len */
	bool smoke;
	const char *table;	/* the table-dispatch baseline profile */
	const char *kvm;	/* the KVM-order baseline profile */
};

/* splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and fixed here. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound), without modulo bias (Lemire's method). */
static uint32_t bounded(uint64_t *state, uint32_t bound)
{
	uint32_t threshold = (uint32_t)-bound % bound;

	for (;;) {
		uint64_t m = (uint64_t)(uint32_t)splitmix64(state) * bound;

		if ((uint32_t)m >= threshold)
			return (uint32_t)(m >> 32);
	}
}

/* The mix's reasons, each count times, in a fixed pseudo-random order. */
static uint16_t *build_sequence(const struct bench_mix *mix)
{
	uint64_t state = BENCH_SEED, total = 0;
	uint16_t *seq;
	size_t at = 0;
	unsigned int e, c;
	uint32_t i;

	for (e = 0; e < mix->n_entries; e++)
		total += mix->entries[e].count;
	if (total != bench_seq_len) {
		fprintf(stderr, "dispatch-bench: mix %s has %llu exits, not %u\n",
			mix->profile, (unsigned long long)total, bench_seq_len);
		return NULL;
	}
	seq = malloc(bench_seq_len * sizeof(*seq));
	if (!seq)
		return NULL;
	for (e = 0; e < mix->n_entries; e++)
		for (c = 0; c < mix->entries[e].count; c++)
			seq[at++] = mix->entries[e].reason;
	/* Fisher-Yates. */
	for (i = bench_seq_len - 1; i > 0; i--) {
		uint32_t j = bounded(&state, i + 1);
		uint16_t t = seq[i];

		seq[i] = seq[j];
		seq[j] = t;
	}
	return seq;
}

/*
 * The share of a mix's exits that reach handle_unexpected_exit() because
 * spec/handlers.yaml has no handler for them: those would measure the
 * fallback, not the profile's dispatch, so they are reported.
 */
static double unhandled_share(const struct bench_mix *mix)
{
	static bool handled[VMX_EXIT_REASON_MAX + 1];
	static bool init;
	uint64_t unhandled = 0;
	unsigned int e;

	if (!init) {
#define MARK(reason, fn) handled[reason] = true;
		VMX_EXIT_HANDLERS(MARK)
#undef MARK
		init = true;
	}
	for (e = 0; e < mix->n_entries; e++) {
		uint16_t r = mix->entries[e].reason;

		if (r > VMX_EXIT_REASON_MAX || !handled[r])
			unhandled += mix->entries[e].count;
	}
	return (double)unhandled / bench_seq_len;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef uint64_t (*run_fn)(struct vcpu *vcpu, const uint16_t *reasons, size_t n);

/*
 * ns to dispatch seq[0..n).  Every fake handler returns VMX_EXIT_RESUME
 * (0), so a non-zero sum means a dispatch invented a result: that is a
 * broken build, not a slow one.
 */
static double time_run(run_fn run, struct vcpu *vcpu, const uint16_t *seq, size_t n)
{
	double t0, t1;
	uint64_t actions;

	t0 = now_ns();
	actions = run(vcpu, seq, n);
	t1 = now_ns();
	if (actions != VMX_EXIT_RESUME * n) {
		fprintf(stderr, "dispatch-bench: a dispatch returned something its handlers did not\n");
		exit(1);
	}
	return t1 - t0;
}

/*
 * A pass is timed in segments of BENCH_SEGMENT exits (about a millisecond),
 * and the best time of each segment over all passes is kept: on a shared
 * machine a preemption then spoils one segment of one pass, not the pass.
 * best[] is indexed by (dispatch k, mix m, segment s); k ==
 * bench_variant_count is the floor.
 */
#define BENCH_SEGMENT	65536u

static double *best;
static size_t n_segments;
#define BEST(k, m, s) best[((size_t)(k) * bench_mix_count + (m)) * n_segments + (s)]

static void time_pass(unsigned int k, unsigned int m, run_fn run, struct vcpu *vcpu,
		      const uint16_t *seq, size_t n, bool first)
{
	size_t s;

	for (s = 0; s < n_segments; s++) {
		size_t from = s * BENCH_SEGMENT;
		size_t len = n - from < BENCH_SEGMENT ? n - from : BENCH_SEGMENT;
		double t = time_run(run, vcpu, seq + from, len);

		if (first || t < BEST(k, m, s))
			BEST(k, m, s) = t;
	}
}

/* ns per dispatch: the sum of the best segments over the exits. */
static double best_ns(unsigned int k, unsigned int m, size_t n)
{
	double total = 0;
	size_t s;

	for (s = 0; s < n_segments; s++)
		total += BEST(k, m, s);
	return total / (double)n;
}

/* Keep the benchmark on one CPU: a migration mid-pass costs more than a dispatch. */
static void pin_to_current_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		fprintf(stderr, "dispatch-bench: not pinned to CPU %d: %s\n", cpu, strerror(errno));
}

static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, size, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, size, "%s", colon);
			break;
		}
	}
	fclose(f);
}

/* The first line of a file, or "unknown". */
static void first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, size, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int find_variant(const char *profile, int retpoline)
{
	unsigned int v;

	for (v = 0; v < bench_variant_count; v++)
		if (strcmp(bench_variants[v]->profile, profile) == 0 &&
		    bench_variants[v]->retpoline == retpoline)
			return (int)v;
	return -1;
}

static int find_mix(const char *profile)
{
	unsigned int m;

	for (m = 0; m < bench_mix_count; m++)
		if (strcmp(bench_mixes[m].profile, profile) == 0)
			return (int)m;
	return -1;
}

/* ns[v][m]: best ns per dispatch of variant v fed mix m. */
static double *ns;
static double *floor_ns;	/* per mix */
#define NS(v, m) ns[(size_t)(v) * bench_mix_count + (m)]

/* @v's time over that of @profile's dispatch (same retpoline setting) on mix @m. */
static double ratio_to(unsigned int v, unsigned int m, const char *profile)
{
	int b = find_variant(profile, bench_variants[v]->retpoline);

	return b < 0 ? 0.0 : NS(v, m) / NS(b, m);
}

static void print_ratio(FILE *f, double r, const char *sep)
{
	if (r > 0.0)
		fprintf(f, "%.3f%s", r, sep);
	else
		fprintf(f, "-%s", sep);
}

static const char *stats_name(int level)
{
	return level == 0 ? "off" : level == 1 ? "counts" : level == 2 ? "timing" : "?";
}

static void print_chain(const struct bench_variant *bv)
{
	if (bv->direct_reasons == 0)
		printf("table only");
	else
		printf("%u direct", bv->direct_reasons);
}

static void report_markdown(const struct options *o, const char *model)
{
	char spectre_v2[160];
	unsigned int m, v;
	double floor_min = floor_ns[0];

	for (m = 1; m < bench_mix_count; m++)
		if (floor_ns[m] < floor_min)
			floor_min = floor_ns[m];

	/* Whether this CPU needs retpolines at all (eIBRS does not) is context. */
	first_line("/sys/devices/system/cpu/vulnerabilities/spectre_v2", spectre_v2,
		   sizeof(spectre_v2));

	printf("# Host microbenchmark of the generated VM-exit dispatch\n\n");
	printf("CPU: %s. Each profile's generated/PROFILE/exit_dispatch.c, compiled with\n"
	       "`-O2` (\"plain\") and with `-mindirect-branch=thunk -mindirect-branch-register`\n"
	       "(\"retpoline\"), fake handlers that return at once, fed %zu exits per pass\n"
	       "drawn from a profile's exit_mix; for each segment of %u exits, the best\n"
	       "of %u passes.%s\n\n",
	       model, o->exits, BENCH_SEGMENT, o->passes,
	       o->smoke ? " **Smoke run: too short to mean anything.**" : "");
	printf("The running kernel's Spectre v2 status: %s.\n\n", spectre_v2);
	printf("ns = wall-clock nanoseconds (CLOCK_MONOTONIC) per dispatch, including the\n"
	       "loop, the call into the dispatch and a trivial handler. Floor (the same loop\n"
	       "calling one handler with no decision): %.2f ns. Ratios compare two\n"
	       "dispatches fed the same mix with the same retpoline setting; below 1 is faster.\n"
	       "Host nanoseconds, not Bochs ticks: this measures the dispatch's shape on this\n"
	       "CPU, not a VM exit.\n\n", floor_min);

	printf("## Each profile's dispatch on its own exit mix\n\n");
	printf("| dispatch | chain | stats | ns | ns retpoline | retpoline / plain "
	       "| vs %s | vs %s (retpoline) | vs %s | vs %s (retpoline) |\n",
	       o->table, o->table, o->kvm, o->kvm);
	printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (m = 0; m < bench_mix_count; m++) {
		int p = find_variant(bench_mixes[m].profile, 0);
		int r = find_variant(bench_mixes[m].profile, 1);

		if (p < 0 || r < 0)
			continue;
		printf("| %s | ", bench_mixes[m].profile);
		print_chain(bench_variants[p]);
		printf(" | %s | %.2f | %.2f | %.2f | ", stats_name(bench_variants[p]->stats_level),
		       NS(p, m), NS(r, m), NS(r, m) / NS(p, m));
		print_ratio(stdout, ratio_to(p, m, o->table), " | ");
		print_ratio(stdout, ratio_to(r, m, o->table), " | ");
		print_ratio(stdout, ratio_to(p, m, o->kvm), " | ");
		print_ratio(stdout, ratio_to(r, m, o->kvm), " |\n");
	}

	for (int retpoline = 0; retpoline <= 1; retpoline++) {
		printf("\n## Every dispatch on every mix, ns per dispatch%s\n\n",
		       retpoline ? ", with retpolines" : ", plain");
		printf("Rows: the dispatch; columns: the exit mix fed to it. The diagonal (bold)\n"
		       "is a dispatch on its own mix; the rest are mismatches.\n\n");
		printf("| dispatch \\ mix |");
		for (m = 0; m < bench_mix_count; m++)
			printf(" %s |", bench_mixes[m].profile);
		printf("\n|---|");
		for (m = 0; m < bench_mix_count; m++)
			printf("---:|");
		printf("\n");
		for (v = 0; v < bench_variant_count; v++) {
			if (bench_variants[v]->retpoline != retpoline)
				continue;
			printf("| %s |", bench_variants[v]->profile);
			for (m = 0; m < bench_mix_count; m++) {
				bool own = strcmp(bench_mixes[m].profile, bench_variants[v]->profile) == 0;

				printf(own ? " **%.2f** |" : " %.2f |", NS(v, m));
			}
			printf("\n");
		}
	}
}

static int report_csv(const struct options *o)
{
	FILE *f = fopen(o->csv, "w");
	unsigned int m, v;

	if (!f) {
		fprintf(stderr, "dispatch-bench: %s: %s\n", o->csv, strerror(errno));
		return -1;
	}
	fprintf(f, "dispatch,retpoline,direct_reasons,stats,mix,own_mix,ns_per_dispatch,"
		   "vs_%s,vs_%s,floor_ns,exits_per_pass,passes\n", o->table, o->kvm);
	for (v = 0; v < bench_variant_count; v++) {
		const struct bench_variant *bv = bench_variants[v];

		for (m = 0; m < bench_mix_count; m++) {
			fprintf(f, "%s,%d,%u,", bv->profile, bv->retpoline, bv->direct_reasons);
			fprintf(f, "%s,%s,%d,%.4f,", stats_name(bv->stats_level),
				bench_mixes[m].profile,
				strcmp(bench_mixes[m].profile, bv->profile) == 0, NS(v, m));
			print_ratio(f, ratio_to(v, m, o->table), ",");
			print_ratio(f, ratio_to(v, m, o->kvm), ",");
			fprintf(f, "%.4f,%zu,%u\n", floor_ns[m], o->exits, o->passes);
		}
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "dispatch-bench: %s: %s\n", o->csv, strerror(errno));
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: dispatch-bench [--csv FILE] [--passes N] [--exits N] [--smoke]\n"
			"                      [--table PROFILE] [--kvm PROFILE]\n");
	exit(2);
}

static unsigned long parse_count(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v == 0 || s[0] == '-')
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct options o = {
		.passes = 15, .exits = bench_seq_len, .table = "table-only", .kvm = "kvm-order",
	};
	uint16_t **seqs;
	struct vcpu **vcpus;
	char model[160];
	unsigned int m, v, pass;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke"))
			o.smoke = true;
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			o.csv = argv[++i];
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			o.passes = (unsigned int)parse_count(argv[++i]);
		else if (!strcmp(argv[i], "--exits") && i + 1 < argc)
			o.exits = parse_count(argv[++i]);
		else if (!strcmp(argv[i], "--table") && i + 1 < argc)
			o.table = argv[++i];
		else if (!strcmp(argv[i], "--kvm") && i + 1 < argc)
			o.kvm = argv[++i];
		else
			usage();
	}
	if (o.smoke) {
		o.passes = 1;
		o.exits = bench_seq_len < 4096 ? bench_seq_len : 4096;
	}
	if (o.exits > bench_seq_len) {
		fprintf(stderr, "dispatch-bench: --exits is at most %u\n", bench_seq_len);
		return 2;
	}
	if (find_mix(o.table) < 0 || find_mix(o.kvm) < 0)
		fprintf(stderr, "dispatch-bench: baseline %s or %s not built: no ratio to it\n",
			o.table, o.kvm);

	pin_to_current_cpu();
	cpu_model(model, sizeof(model));

	seqs = calloc(bench_mix_count, sizeof(*seqs));
	vcpus = calloc(bench_variant_count + 1, sizeof(*vcpus));
	ns = calloc((size_t)bench_variant_count * bench_mix_count, sizeof(*ns));
	floor_ns = calloc(bench_mix_count, sizeof(*floor_ns));
	n_segments = (o.exits + BENCH_SEGMENT - 1) / BENCH_SEGMENT;
	best = calloc((size_t)(bench_variant_count + 1) * bench_mix_count * n_segments,
		      sizeof(*best));
	if (!seqs || !vcpus || !ns || !floor_ns || !best)
		goto nomem;
	for (m = 0; m < bench_mix_count; m++) {
		double unhandled = unhandled_share(&bench_mixes[m]);

		seqs[m] = build_sequence(&bench_mixes[m]);
		if (!seqs[m])
			return 1;
		if (unhandled > 0)
			fprintf(stderr, "dispatch-bench: %.1f%% of mix %s has no handler in "
				"spec/handlers.yaml and measures handle_unexpected_exit()\n",
				unhandled * 100, bench_mixes[m].profile);
	}
	/* A vCPU per dispatch, laid out as its profile's struct vcpu, zeroed. */
	for (v = 0; v <= bench_variant_count; v++) {
		size_t size = v < bench_variant_count ? bench_variants[v]->vcpu_size : 64;

		size = (size + 63) & ~(size_t)63;
		vcpus[v] = aligned_alloc(64, size);
		if (!vcpus[v])
			goto nomem;
		memset(vcpus[v], 0, size);
	}

	/* Warm up every pair once (caches, predictors, page faults), untimed. */
	for (m = 0; m < bench_mix_count; m++) {
		for (v = 0; v < bench_variant_count; v++)
			time_run(bench_variants[v]->run, vcpus[v], seqs[m], o.exits);
		time_run(bench_floor_run, vcpus[bench_variant_count], seqs[m], o.exits);
	}
	/* The pairs interleaved, so that a slow stretch of the machine hits all. */
	for (pass = 0; pass < o.passes; pass++) {
		for (m = 0; m < bench_mix_count; m++) {
			for (v = 0; v < bench_variant_count; v++)
				time_pass(v, m, bench_variants[v]->run, vcpus[v], seqs[m], o.exits,
					  pass == 0);
			time_pass(bench_variant_count, m, bench_floor_run,
				  vcpus[bench_variant_count], seqs[m], o.exits, pass == 0);
		}
	}
	for (m = 0; m < bench_mix_count; m++) {
		for (v = 0; v < bench_variant_count; v++)
			NS(v, m) = best_ns(v, m, o.exits);
		floor_ns[m] = best_ns(bench_variant_count, m, o.exits);
	}

	report_markdown(&o, model);
	if (o.csv && report_csv(&o) != 0)
		return 1;
	return 0;

nomem:
	fprintf(stderr, "dispatch-bench: out of memory\n");
	return 1;
}
