// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rig_stuck: a module that exists only to prove that the guest test runner
 * gets past a test whose process is stuck in the kernel, where no signal
 * reaches it. Reading /sys/kernel/debug/rig_stuck sleeps uninterruptibly
 * for stuck_ms milliseconds (the process is in state D meanwhile) and then
 * returns end of file. Built and loaded by tools/vm/selftest.sh's cases,
 * never by a user.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/module.h>

static unsigned int stuck_ms = 60000;
module_param(stuck_ms, uint, 0444);
MODULE_PARM_DESC(stuck_ms, "how long a read of /sys/kernel/debug/rig_stuck sleeps");

static struct dentry *rig_stuck_file;

static ssize_t rig_stuck_read(struct file *file, char __user *buf, size_t len,
			      loff_t *pos)
{
	msleep(stuck_ms);
	return 0;
}

static const struct file_operations rig_stuck_fops = {
	.owner = THIS_MODULE,
	.read = rig_stuck_read,
	.llseek = noop_llseek,
};

static int __init rig_stuck_init(void)
{
	rig_stuck_file = debugfs_create_file("rig_stuck", 0400, NULL, NULL,
					     &rig_stuck_fops);
	return 0;
}

static void __exit rig_stuck_exit(void)
{
	debugfs_remove(rig_stuck_file);
}

module_init(rig_stuck_init);
module_exit(rig_stuck_exit);

MODULE_DESCRIPTION("sroce test rig self-test: a read that sleeps in state D");
MODULE_LICENSE("Dual BSD/GPL");
