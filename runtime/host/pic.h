/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef EXITPLAN_PIC_H
#define EXITPLAN_PIC_H

/* Host vectors of the (masked) legacy PICs, away from the exceptions. */
#define PIC1_VECTOR_BASE	0x20
#define PIC2_VECTOR_BASE	0x28

/* Remap both 8259s to PIC1/2_VECTOR_BASE and mask every line. */
void pic_remap_and_mask(void);

#endif /* EXITPLAN_PIC_H */
