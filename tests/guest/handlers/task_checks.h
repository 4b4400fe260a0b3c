/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's task-switch checks (task_checks.c). */
#ifndef GUEST_HANDLERS_TASK_CHECKS_H
#define GUEST_HANDLERS_TASK_CHECKS_H

void check_tasks(void);

#endif
