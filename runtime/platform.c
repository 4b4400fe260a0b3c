// SPDX-License-Identifier: GPL-2.0-only
/* The emulated devices: isa-debug-exit and fw_cfg (platform.h). */
#include "compiler.h"
#include "platform.h"

void platform_init(struct platform_state *p, uint64_t ram_size, unsigned int nr_cpus)
{
	*p = (struct platform_state){ .ram_size = ram_size, .nr_cpus = nr_cpus };
}

/* The byte at the current offset of the selected item; 0 past its end. */
static uint8_t fw_cfg_byte(struct platform_state *p)
{
	static const char signature[4] = { 'Q', 'E', 'M', 'U' };
	uint32_t off = p->fw_cfg_offset++;
	uint64_t v;
	unsigned int len;

	switch (p->fw_cfg_key) {
	case FW_CFG_SIGNATURE:
		return off < sizeof(signature) ? (uint8_t)signature[off] : 0;
	case FW_CFG_ID:
		v = FW_CFG_ID_TRADITIONAL;	/* no DMA interface */
		len = 4;
		break;
	case FW_CFG_RAM_SIZE:
		v = p->ram_size;
		len = 8;
		break;
	case FW_CFG_NB_CPUS:
	case FW_CFG_MAX_CPUS:
		v = p->nr_cpus;
		len = 2;
		break;
	default:
		/* Unknown keys, and FW_CFG_NOGRAPHIC, read as 0 like an empty item. */
		return 0;
	}
	/* Items are little endian. */
	return off < len ? (uint8_t)(v >> (8 * off)) : 0;
}

uint32_t platform_io_read(struct platform_state *p, uint16_t port, unsigned int size)
{
	if (port == PLATFORM_FW_CFG_PORT_DATA) {
		uint32_t v = 0;

		/* A wider read returns consecutive bytes, as QEMU's does. */
		for (unsigned int i = 0; i < size; i++)
			v |= (uint32_t)fw_cfg_byte(p) << (8 * i);
		return v;
	}
	/* Nothing answers: the bus floats high. */
	return size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

enum platform_io_result platform_io_write(struct platform_state *p, uint16_t port,
					  unsigned int size, uint32_t value, int *status)
{
	switch (port) {
	case PLATFORM_ISA_DEBUG_EXIT_PORT:
		/* QEMU: the process exits with (value << 1) | 1. */
		*status = (int)(((value & (size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1)) << 1) | 1);
		return PLATFORM_IO_EXIT;
	case PLATFORM_FW_CFG_PORT_SEL:
		p->fw_cfg_key = (uint16_t)value;
		p->fw_cfg_offset = 0;
		return PLATFORM_IO_DONE;
	default:
		return PLATFORM_IO_DONE;	/* writes to nothing are lost */
	}
}
