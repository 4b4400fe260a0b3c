/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * QEMU's fw_cfg interface through its I/O ports (QEMU docs/specs/fw_cfg.txt):
 * a 16-bit write of a key to the selector port, then the item's bytes one
 * by one from the data port.  exitplan traps both ports in every profile
 * and emulates the keys below.
 */
#ifndef GUEST_FW_CFG_H
#define GUEST_FW_CFG_H

#include <stdint.h>

#define FW_CFG_PORT_SEL		0x510
#define FW_CFG_PORT_DATA	0x511

#define FW_CFG_SIGNATURE	0x00	/* "QEMU" */
#define FW_CFG_RAM_SIZE		0x03	/* 64-bit little endian, bytes */
#define FW_CFG_NB_CPUS		0x05	/* 16-bit little endian */
#define FW_CFG_KERNEL_DATA	0x11	/* QEMU: the -kernel image; exitplan: none */

void fw_cfg_select(uint16_t key);
void fw_cfg_read(void *buf, uint32_t len);
uint64_t fw_cfg_read_le(uint16_t key, uint32_t len);

#endif /* GUEST_FW_CFG_H */
