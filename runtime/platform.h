/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The devices exitplan emulates for a guest, as QEMU defines them so that
 * the same guest runs under both:
 *   - isa-debug-exit at port 0xf4: a write of `code` ends the guest with
 *     exit status (code << 1) | 1;
 *   - fw_cfg, the traditional I/O interface (selector 0x510, 16-bit;
 *     data 0x511, byte reads): signature, ID, RAM size, CPU count;
 *   - the MMIO test page (0xFEB00000): 32-bit reads return "EXIT",
 *     writes are ignored.  The guest's page-table-free way to check
 *     that MMIO emulation works.
 * Any other port the profile traps reads all ones and ignores writes, as
 * an unclaimed ISA port does.
 *
 * The port numbers and keys are QEMU's ABI (docs/specs/fw_cfg.rst,
 * hw/misc/debugexit.c), not the CPU's; spec/runtime.yaml traps the ports.
 */
#ifndef EXITPLAN_PLATFORM_H
#define EXITPLAN_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#define PLATFORM_ISA_DEBUG_EXIT_PORT	0xf4
#define PLATFORM_FW_CFG_PORT_SEL	0x510
#define PLATFORM_FW_CFG_PORT_DATA	0x511
#define PLATFORM_MMIO_TEST_PAGE		0xFEB00000ull
#define PLATFORM_MMIO_TEST_VALUE	0x45584954u	/* "EXIT" as a little-endian u32 */

/* fw_cfg keys (QEMU include/standard-headers/linux/qemu_fw_cfg.h). */
#define FW_CFG_SIGNATURE		0x00
#define FW_CFG_ID			0x01
#define FW_CFG_RAM_SIZE			0x03
#define FW_CFG_NB_CPUS			0x05
#define FW_CFG_MAX_CPUS			0x0f
#define FW_CFG_NOGRAPHIC		0x11	/* reads 0: exitplan has no display */
#define FW_CFG_ID_TRADITIONAL		0x1	/* FW_CFG_ID bit 0: the I/O interface */

/* One guest's devices. */
struct platform_state {
	uint16_t fw_cfg_key;
	uint32_t fw_cfg_offset;
	uint64_t ram_size;		/* bytes of RAM the guest's memory map gives it */
	unsigned int nr_cpus;
};

enum platform_io_result {
	PLATFORM_IO_DONE,		/* handled; continue the guest */
	PLATFORM_IO_EXIT,		/* isa-debug-exit: stop with *status */
};

void platform_init(struct platform_state *p, uint64_t ram_size, unsigned int nr_cpus);

/* Port I/O of @size bytes (1, 2, 4). */
uint32_t platform_io_read(struct platform_state *p, uint16_t port, unsigned int size);
enum platform_io_result platform_io_write(struct platform_state *p, uint16_t port,
					  unsigned int size, uint32_t value, int *status);

/* Is @gpa in the MMIO test page? */
static inline bool platform_mmio_test_page(uint64_t gpa)
{
	return (gpa & ~0xfffull) == PLATFORM_MMIO_TEST_PAGE;
}

#endif /* EXITPLAN_PLATFORM_H */
