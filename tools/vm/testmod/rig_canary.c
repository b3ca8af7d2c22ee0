// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rig_canary: commits, when loaded, one of the bugs the debug guest kernel
 * (tools/vm/debug-kernel.sh) is there to catch, so that the rig self-test
 * (tools/vm/selftest.sh --canaries) can show that each detector's report
 * fails the run that caused it, with its own reason. Built against the
 * guest kernel by the self-test, never installed, not part of sroce.ko.
 *
 *   insmod rig_canary.ko bug=NAME[,NAME...] [dev=RDMA_DEVICE]
 *
 *   uaf           reads a kmalloc object after kfree (KASAN; never an
 *                 object of KFENCE's pool, nor for oob: canary_kmalloc())
 *   oob           reads one byte past a 60-byte kmalloc object (KASAN)
 *   lock_order    takes two mutexes in both orders, one after the other,
 *                 in one thread: no deadlock, but a possible one (lockdep)
 *   atomic_sleep  takes a mutex under a spinlock (DEBUG_ATOMIC_SLEEP)
 *   shift         shifts a 32-bit value by 40 (UBSAN)
 *   leak          drops the only pointers to 16 kmalloc objects (KMEMLEAK;
 *                 a stale copy of a pointer, in a stack or register save
 *                 area the scan reads, hides its object: one object was
 *                 missed so in a CI run, so the canary leaks several)
 *   timer_free    frees a timer that is still armed (DEBUG_OBJECTS); only
 *                 where DEBUG_OBJECTS_TIMERS fixes it up (deletes the timer
 *                 at the free): elsewhere it would fire into freed memory,
 *                 so the load fails with -EOPNOTSUPP
 *   pin           takes a reference on the module of RDMA device @dev's
 *                 driver and never drops it: that driver's rmmod fails (the
 *                 rig's teardown on a KMEMLEAK kernel must say so)
 *
 * Each bug is harmless to the guest: the accesses are reads, the lock
 * orders are taken by one thread, the mutex is never contended. The bugs
 * are committed in the order given, each logged as "rig_canary: NAME:
 * committed" or "... not committed (ERRNO)"; the load then succeeds (the
 * module stays loaded, so that a later report, a KMEMLEAK scan's, can
 * still name its functions). A name it does not know fails the load with
 * -EINVAL before anything is committed. Several detectors in one guest:
 * lockdep stops at its first report and at the taint a KASAN report sets,
 * so lock_order goes before uaf and oob; KASAN reports only its first bug.
 */
#include <linux/compiler.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <rdma/ib_verbs.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to commit at load (see the source)");

static char *dev = "";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device whose driver bug=pin pins");

/* Where the bad reads go, so that the compiler keeps them. */
static int canary_sink;

/*
 * A kmalloc object of @size that KASAN watches. KFENCE (also in the debug
 * kernel) takes one allocation in many for its own pool, where KASAN does
 * not look and a read just past the object hits KFENCE's canary bytes,
 * which only a write disturbs: the oob canary once went unreported so.
 * Objects from that pool are set aside and freed once one is not.
 */
static void *canary_kmalloc(size_t size)
{
	void *kept[4] = {};
	void *p = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kept); i++) {
		p = kmalloc(size, GFP_KERNEL);
		if (!p || !is_kfence_address(p))
			break;
		kept[i] = p;
		p = NULL;
	}
	for (i = 0; i < ARRAY_SIZE(kept); i++)
		kfree(kept[i]);
	return p;
}

static noinline int canary_uaf(void)
{
	char *p = canary_kmalloc(64);

	if (!p)
		return -ENOMEM;
	p[0] = 1;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	WRITE_ONCE(canary_sink, READ_ONCE(p[0]));
	return 0;
}

static noinline int canary_oob(void)
{
	size_t len = 60;
	char *p = canary_kmalloc(len);

	if (!p)
		return -ENOMEM;
	memset(p, 0, len);
	OPTIMIZER_HIDE_VAR(len);
	WRITE_ONCE(canary_sink, READ_ONCE(p[len]));
	kfree(p);
	return 0;
}

static DEFINE_MUTEX(canary_mutex_a);
static DEFINE_MUTEX(canary_mutex_b);

static noinline int canary_lock_order(void)
{
	mutex_lock(&canary_mutex_a);
	mutex_lock(&canary_mutex_b);
	mutex_unlock(&canary_mutex_b);
	mutex_unlock(&canary_mutex_a);

	mutex_lock(&canary_mutex_b);
	mutex_lock(&canary_mutex_a);
	mutex_unlock(&canary_mutex_a);
	mutex_unlock(&canary_mutex_b);
	return 0;
}

static DEFINE_SPINLOCK(canary_spinlock);

static noinline int canary_atomic_sleep(void)
{
	spin_lock(&canary_spinlock);
	mutex_lock(&canary_mutex_a);
	mutex_unlock(&canary_mutex_a);
	spin_unlock(&canary_spinlock);
	return 0;
}

static noinline int canary_shift(void)
{
	u32 one = 1;
	int by = 40;

	OPTIMIZER_HIDE_VAR(by);
	WRITE_ONCE(canary_sink, one << by);
	return 0;
}

static noinline int canary_leak(void)
{
	void *p;
	int i;

	for (i = 0; i < 16; i++) {
		p = kmalloc(128, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		memset(p, 0x5a, 128);
		OPTIMIZER_HIDE_VAR(p);
	}
	return 0;
}

struct canary_timer {
	struct timer_list timer;
};

static void canary_timer_fn(struct timer_list *t)
{
}

static noinline int canary_timer_free(void)
{
	struct canary_timer *ct;

	if (!IS_ENABLED(CONFIG_DEBUG_OBJECTS_TIMERS) ||
	    !IS_ENABLED(CONFIG_DEBUG_OBJECTS_FREE))
		return -EOPNOTSUPP;
	ct = kzalloc(sizeof(*ct), GFP_KERNEL);
	if (!ct)
		return -ENOMEM;
	timer_setup(&ct->timer, canary_timer_fn, 0);
	mod_timer(&ct->timer, jiffies + 3600 * HZ);
	kfree(ct);
	return 0;
}

static noinline int canary_pin(void)
{
	struct ib_device *ibdev;
	int ret = 0;

	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return -ENODEV;
	if (!ibdev->ops.owner || !try_module_get(ibdev->ops.owner))
		ret = -ENOENT;
	ib_device_put(ibdev);
	return ret;
}

static const struct {
	const char *name;
	int (*commit)(void);
} canaries[] = {
	{ "uaf", canary_uaf },
	{ "oob", canary_oob },
	{ "lock_order", canary_lock_order },
	{ "atomic_sleep", canary_atomic_sleep },
	{ "shift", canary_shift },
	{ "leak", canary_leak },
	{ "timer_free", canary_timer_free },
	{ "pin", canary_pin },
};

/* The canary named @name (@len bytes), or NULL. */
static int (*canary_find(const char *name, size_t len))(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(canaries); i++) {
		if (strlen(canaries[i].name) == len &&
		    !strncmp(canaries[i].name, name, len))
			return canaries[i].commit;
	}
	return NULL;
}

static int __init rig_canary_init(void)
{
	const char *p, *end;
	size_t len;
	int ret;

	/* Every name first: an unknown one commits nothing. */
	if (!*bug) {
		pr_err("rig_canary: no bug= given\n");
		return -EINVAL;
	}
	for (p = bug; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		if (!canary_find(p, end - p)) {
			pr_err("rig_canary: unknown bug '%.*s'\n", (int)(end - p), p);
			return -EINVAL;
		}
	}
	for (p = bug; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		len = end - p;
		ret = canary_find(p, len)();
		if (ret)
			pr_info("rig_canary: %.*s: not committed (%d)\n", (int)len, p, ret);
		else
			pr_info("rig_canary: %.*s: committed\n", (int)len, p);
	}
	return 0;
}

static void __exit rig_canary_exit(void)
{
}

module_init(rig_canary_init);
module_exit(rig_canary_exit);

MODULE_DESCRIPTION("sroce test rig self-test: commits the bug it is asked for");
MODULE_LICENSE("Dual BSD/GPL");
