/* SPDX-License-Identifier: GPL-2.0-only */
/* Small compiler helpers, named as in the Linux kernel. */
#ifndef EXITPLAN_COMPILER_H
#define EXITPLAN_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define __aligned(x)		__attribute__((aligned(x)))
#define __packed		__attribute__((packed))
#define __noreturn		__attribute__((noreturn))
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define __weak			__attribute__((weak))
#define __used			__attribute__((used))
#define noinline		__attribute__((__noinline__))	/* as in Linux */
#ifndef __always_inline	/* the host's C library has it too (unit tests) */
#define __always_inline		inline __attribute__((__always_inline__))	/* as in Linux */
#endif
#define __section(s)		__attribute__((section(s)))

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a)	((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a)	(((x) & ((__typeof__(x))(a) - 1)) == 0)

#define barrier()		asm volatile("" : : : "memory")
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), #cond)

#endif /* EXITPLAN_COMPILER_H */
