// SPDX-License-Identifier: GPL-2.0-only
#include "fw_cfg.h"
#include "x86.h"

void fw_cfg_select(uint16_t key)
{
	outw(FW_CFG_PORT_SEL, key);
}

void fw_cfg_read(void *buf, uint32_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = inb(FW_CFG_PORT_DATA);
}

uint64_t fw_cfg_read_le(uint16_t key, uint32_t len)
{
	uint8_t b[8] = { 0 };
	uint64_t v = 0;

	if (len > sizeof(b))
		len = sizeof(b);
	fw_cfg_select(key);
	fw_cfg_read(b, len);
	for (uint32_t i = len; i--; )
		v = (v << 8) | b[i];
	return v;
}
