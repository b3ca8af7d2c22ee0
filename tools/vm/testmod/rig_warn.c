// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rig_warn: a module that exists only to prove that the test rig notices a
 * kernel warning. Loading it triggers one WARN_ON(); it does nothing else.
 * Built and loaded by tools/vm/selftest.sh, never by a user.
 */
#include <linux/module.h>
#include <linux/kernel.h>

static int __init rig_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit rig_warn_exit(void)
{
}

module_init(rig_warn_init);
module_exit(rig_warn_exit);

MODULE_DESCRIPTION("sroce test rig self-test: WARN_ON at load");
MODULE_LICENSE("Dual BSD/GPL");
