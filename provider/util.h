/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Small helpers for a provider that runs without libstdc++: heap objects
 * through calloc/free and placement new, scope guards, an owned file
 * descriptor and a spin lock guard. Nothing here throws or allocates behind
 * the caller's back.
 */
#ifndef SROCE_UTIL_H
#define SROCE_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <new>
#include <utility>

namespace sroce
{

/* Allocate a zeroed T and construct it; nullptr when out of memory. */
template <typename T> T *zalloc()
{
	void *mem = calloc(1, sizeof(T));

	return mem ? new (mem) T() : nullptr;
}

template <typename T> void zfree(T *obj)
{
	if (!obj)
		return;
	obj->~T();
	free(obj);
}

/* For verbs that return an object: sets errno, returns no object. */
template <typename T> T *fail(int err)
{
	errno = err;
	return nullptr;
}

/* Owner of a zalloc()ed object (or one @Free frees) until release(). */
template <typename T, void (*Free)(T *) = zfree<T>> class Owned
{
      public:
	explicit Owned(T *obj) : obj_(obj) {}
	Owned(const Owned &) = delete;
	Owned &operator=(const Owned &) = delete;
	~Owned() { Free(obj_); }

	T *get() const { return obj_; }
	T *operator->() const { return obj_; }
	T &operator*() const { return *obj_; }
	explicit operator bool() const { return obj_ != nullptr; }
	T *release() { return std::exchange(obj_, nullptr); }

      private:
	T *obj_;
};

/* Runs a cleanup on scope exit unless dismissed (undo on error paths). */
template <typename F> class ScopeGuard
{
      public:
	explicit ScopeGuard(F fn) : fn_(std::move(fn)) {}
	ScopeGuard(const ScopeGuard &) = delete;
	ScopeGuard &operator=(const ScopeGuard &) = delete;
	~ScopeGuard()
	{
		if (armed_)
			fn_();
	}
	void dismiss() { armed_ = false; }

      private:
	F fn_;
	bool armed_ = true;
};

template <typename F> ScopeGuard<F> on_scope_exit(F fn)
{
	return ScopeGuard<F>(std::move(fn));
}

class UniqueFd
{
      public:
	explicit UniqueFd(int fd) : fd_(fd) {}
	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;
	~UniqueFd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	int get() const { return fd_; }

      private:
	int fd_;
};

/*
 * pthread spin lock: never sleeps, never enters the kernel. A queue that
 * one thread at a time uses (a thread domain's, a single-threaded CQ's)
 * takes none: single_thread() before the object is handed out.
 */
class SpinLock
{
      public:
	SpinLock() { pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE); }
	SpinLock(const SpinLock &) = delete;
	SpinLock &operator=(const SpinLock &) = delete;
	~SpinLock() { pthread_spin_destroy(&lock_); }
	void lock()
	{
		if (shared_)
			pthread_spin_lock(&lock_);
	}
	void unlock()
	{
		if (shared_)
			pthread_spin_unlock(&lock_);
	}
	void single_thread() { shared_ = false; }

      private:
	pthread_spinlock_t lock_;
	bool shared_ = true;
};

class SpinGuard
{
      public:
	explicit SpinGuard(SpinLock &lock) : lock_(lock) { lock_.lock(); }
	SpinGuard(const SpinGuard &) = delete;
	SpinGuard &operator=(const SpinGuard &) = delete;
	~SpinGuard() { lock_.unlock(); }

      private:
	SpinLock &lock_;
};

} /* namespace sroce */

#endif /* SROCE_UTIL_H */
