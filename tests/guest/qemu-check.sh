#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every test guest under QEMU (TCG, no VT-x) and check what it prints
# and the status QEMU reports ((code << 1) | 1 through isa-debug-exit).
# Under QEMU the checks that need exitplan FAIL (cpuid-signature) or SKIP;
# everything else must pass.  Usage: qemu-check.sh BUILD_GUEST_DIR
set -uo pipefail

dir=${1:-build/guest}
timeout_s=${QEMU_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/guest-qemu.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0 cases=0

# run NAME GUEST ARGS [NCPU]: boots GUEST with ARGS; sets $status and $out.
run() {
	local name=$1 guest=$2 args=$3 ncpu=${4:-1}
	out=$work/$name.txt
	timeout "$timeout_s" qemu-system-x86_64 -display none -no-reboot -smp "$ncpu" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$dir/$guest.elf" -append "$args" \
		-serial "file:$out" </dev/null >"$work/$name.qemu" 2>&1
	status=$?
	tr -d '\r' < "$out" > "$out.clean" && mv "$out.clean" "$out"
}

# verdict NAME OK WHY: counts a case; prints it, with the output if it failed.
verdict() {
	local name=$1 ok=$2 why=$3
	cases=$((cases + 1))
	if [ "$ok" = 1 ]; then
		echo "ok: $name"
	else
		failures=$((failures + 1))
		echo "FAILED: $name: $why"
		sed 's/^/    | /' "$out"
	fi
}

has() { grep -qE "$1" "$out"; }

# handlers: everything passes except the exitplan signature.
run handlers handlers "quick expect_cmdline=quick"
fails=$(grep -c '^FAIL: ' "$out")
ok=0
[ "$status" = 3 ] && [ "$fails" = 1 ] && has '^FAIL: cpuid-signature ' &&
	has '^guest handlers: [0-9]+ passed, 1 failed$' &&
	has '^PASS: multiboot-cmdline$' && has '^PASS: hlt-apic-timer$' && ok=1
verdict handlers $ok "status $status, $fails FAIL lines; want status 3, only cpuid-signature failing"

run isolation-nonfatal isolation "attack=all-nonfatal"
ok=0
[ "$status" = 1 ] && has '^guest isolation: [1-9][0-9]* passed, 0 failed$' &&
	has '^PASS: vmx-vmxon$' && ok=1
verdict isolation-all-nonfatal $ok "status $status; want 1 and no failure"

# QEMU contains nothing: the fatal attacks must report themselves.
run isolation-read-hv isolation "attack=read-hv"
ok=0
[ "$status" = 3 ] && has '^isolation: attacking read-hv' &&
	has '^FAIL: read-hv \(read returned 0x[0-9a-f]{8}\)$' && ok=1
verdict isolation-read-hv $ok "status $status; want 3 and the uncontained read reported"

run isolation-write-hv isolation "attack=write-hv"
ok=0
[ "$status" = 3 ] && has '^FAIL: write-hv not contained$' && ok=1
verdict isolation-write-hv $ok "status $status; want 3 and 'FAIL: write-hv not contained'"

# A triple fault resets the machine; -no-reboot turns that into exit 0.
run isolation-triple-fault isolation "attack=triple-fault"
ok=0
[ "$status" = 0 ] && has '^isolation: attacking triple-fault' &&
	! has 'not contained' && ok=1
verdict isolation-triple-fault $ok "status $status; want 0 (reset) with nothing after the attack line"

run isolation-unknown isolation "attack=no-such-attack"
ok=0
[ "$status" = 3 ] && has '^FAIL: attack-option \(unknown attack "no-such-attack"\)$' && ok=1
verdict isolation-unknown-attack $ok "status $status; want 3 and the unknown attack named"

run status status "code=5"
ok=0
[ "$status" = 11 ] && has '^status guest: exiting with code 5$' && ok=1
verdict status-code-5 $ok "status $status; want 11"

run status0 status "code=0"
ok=0
[ "$status" = 1 ] && has '^status guest: exiting with code 0$' && ok=1
verdict status-code-0 $ok "status $status; want 1"

run bench bench "iters=200 warmup=10"
ok=0
[ "$status" = 1 ] && has '^bench: ticks are Bochs instruction counts, not cycles$' &&
	has '^bench: cpuid [0-9]+ 200$' && has '^bench: in-fw_cfg [0-9]+ 200$' &&
	has '^bench: hlt-apic-timer [0-9]+ 200$' &&
	has '^guest bench: [0-9]+ passed, 0 failed$' && ok=1
verdict bench $ok "status $status; want 1 with the bench lines"

# IA-32e mode at the end for MOV CR8 (QEMU runs 64-bit guests).
run bench-cr8 bench "iters=50 warmup=5 cr8"
ok=0
[ "$status" = 1 ] && has '^PASS: bench-long-mode$' &&
	has '^bench: mov-to-cr8 [0-9]+ 50$' && has '^bench: mov-from-cr8 [0-9]+ 50$' &&
	has '^guest bench: [0-9]+ passed, 0 failed$' && ok=1
verdict bench-cr8 $ok "status $status; want 1 with the CR8 lines"

run hrtimer hrtimer "count=200 delta=20000"
ok=0
[ "$status" = 1 ] && has '^hrtimer: 200 timers fired$' &&
	has '^guest hrtimer: [0-9]+ passed, 0 failed$' && ok=1
verdict hrtimer $ok "status $status; want 1 and 200 timers"

# stats: no hypercalls under QEMU, so the NOPs and the count checks SKIP;
# the rest of the workload (CPUID, fw_cfg, IA32_APIC_BASE) still runs.
run stats stats "n=2"
ok=0
[ "$status" = 1 ] && has '^SKIP: stats-count \(not running under exitplan' &&
	has '^stats: n=2: 74 CPUID leaf 0x0, 26 CPUID leaf 0x40000000, 0 VMCALL NOP,' &&
	has '^PASS: stats-fw_cfg-signature$' && has '^PASS: stats-apic-base-stable$' &&
	! has '^FAIL' && has '^guest stats: 2 passed, 0 failed$' && ok=1
verdict stats $ok "status $status; want 1, the count checks skipped and nothing failing"

# smp: the same checks as under exitplan, on QEMU's own APICs.
for n in 2 4; do
	run smp-$n smp "" $n
	ok=0
	[ "$status" = 1 ] && has "^smp: $n CPUs in the MADT, fw_cfg says $n, xAPIC mode$" &&
		has '^PASS: init-sipi-restarts-ap$' && has '^PASS: nmi-wakes-cli-hlt$' &&
		! has '^FAIL' && has '^guest smp: [0-9]+ passed, 0 failed$' && ok=1
	verdict smp-$n $ok "status $status; want 1 and every check passing on $n CPUs"
done

echo "guests under QEMU: $((cases - failures)) of $cases cases as expected"
[ "$failures" = 0 ]
