/* SPDX-License-Identifier: GPL-2.0-only */
/* The exception vectors' mnemonics (lib/exceptions.c), for the hypervisor's and the test guests' reports. */
#ifndef EXITPLAN_EXCEPTIONS_H
#define EXITPLAN_EXCEPTIONS_H

/* "#GP", "NMI", ... (SDM Vol. 3A table 6-1); NULL for a reserved vector or one above 31. */
const char *x86_exception_mnemonic(unsigned int vector);

#endif /* EXITPLAN_EXCEPTIONS_H */
