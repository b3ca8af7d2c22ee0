// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rig-tsc-khz: the host's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW, printed as one integer (tools/vm/run.sh gives it to
 * the guests as tsc_early_khz=).
 *
 * Why: under TCG a guest's TSC counts at the host's TSC rate, and the guest
 * kernel measures that rate once early in boot against the PIT or HPET. On
 * a busy host that early measurement can go badly wrong (a 6.12 guest found
 * 146 MHz instead of 2095), and the kernel's later, careful calibration only
 * corrects the early value when the two are within 1% of each other: the
 * guest's clock then runs many times too fast or slow for its whole life
 * (its test time limits end early, perftest reports nonsense). Given the
 * frequency, the guest skips the early measurement; the later calibration
 * still checks it.
 *
 * The host measures over about 50 ms, five times, on the CPU it started on
 * (a TSC of another CPU may be offset), and takes the median; each end of
 * an interval is the TSC read between two clock reads that lie closest
 * together, so that being descheduled between them does not count. Exits 1
 * (printing nothing) when the TSC went backwards, when the five differ by
 * more than 0.5% (no steady rate to give), or on a CPU without a TSC
 * instruction here.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

namespace
{

int64_t mono_ns()
{
	timespec ts{};

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Sample {
	uint64_t tsc;
	int64_t ns;
};

// The TSC with the time in the middle of the tightest of 20 bracketing reads.
Sample sample()
{
	Sample best{};
	int64_t best_gap = INT64_MAX;

	for (int i = 0; i < 20; i++) {
		const int64_t before = mono_ns();
		const uint64_t tsc = __rdtsc();
		const int64_t after = mono_ns();

		if (after - before < best_gap) {
			best_gap = after - before;
			best = {tsc, before + (after - before) / 2};
		}
	}
	return best;
}

} // namespace

int main()
{
	uint64_t khz[5];
	const int cpu = sched_getcpu();

	if (cpu >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (auto &k : khz) {
		const Sample a = sample();
		const timespec nap = {0, 50 * 1000 * 1000};

		nanosleep(&nap, nullptr);
		const Sample b = sample();
		if (b.tsc <= a.tsc || b.ns <= a.ns)
			return 1;
		// cycles per ms = kHz
		k = (b.tsc - a.tsc) * 1000000 / static_cast<uint64_t>(b.ns - a.ns);
	}
	std::sort(khz, khz + 5);
	if ((khz[4] - khz[0]) * 200 > khz[2])
		return 1;
	std::printf("%llu\n", static_cast<unsigned long long>(khz[2]));
	return 0;
}

#else

int main()
{
	return 1;
}

#endif
