/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Deterministic pseudo-random streams, the same on every host and in every
 * tool. sroce-integrity's hosts derive the same stream from the run's seed
 * and a few labels (round, operation, purpose), so the side that checks a
 * buffer computes what the other side put there without the data ever
 * crossing the control connection; sroce-wirefuzz draws its packets from
 * one stream of its seed, so a seed replays a run.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sroce_tools
{

/* splitmix64: seeds the generator and mixes labels into a key. */
inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* What a stream is used for; part of its key (the purposes of sroce-integrity). */
enum class Stream : uint32_t {
	plan = 1,     /* the operations of a round (both sides) */
	data = 2,     /* payload of one operation (both sides) */
	local = 3,    /* requester-only choices: SGEs, inline, signalling */
	receive = 4,  /* responder-only choices: receive SGEs */
	words = 5,    /* initial values of the atomic words of a round */
	err_data = 6, /* payloads of the error cases */
};

inline uint64_t stream_key(uint64_t seed, Stream what, uint32_t a, uint32_t b = 0)
{
	uint64_t s = seed;
	uint64_t k = splitmix64(&s);

	s = k ^ (uint64_t(what) << 56) ^ (uint64_t(a) << 20) ^ b;
	return splitmix64(&s);
}

/* xoshiro256**: fast, good enough for test data, identical everywhere. */
class Rng
{
      public:
	explicit Rng(uint64_t key)
	{
		for (uint64_t &w : s_)
			w = splitmix64(&key);
	}

	uint64_t next()
	{
		const uint64_t result = rotl(s_[1] * 5, 7) * 9;
		const uint64_t t = s_[1] << 17;

		s_[2] ^= s_[0];
		s_[3] ^= s_[1];
		s_[1] ^= s_[2];
		s_[0] ^= s_[3];
		s_[2] ^= t;
		s_[3] = rotl(s_[3], 45);
		return result;
	}

	/* Uniform in [0, n); 0 when n is 0. */
	uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }

	/* Uniform in [lo, hi]. */
	uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }

	bool chance(unsigned percent) { return below(100) < percent; }

	void fill(uint8_t *p, size_t n)
	{
		while (n >= 8) {
			const uint64_t v = next();

			std::memcpy(p, &v, 8);
			p += 8;
			n -= 8;
		}
		if (n) {
			const uint64_t v = next();

			std::memcpy(p, &v, n);
		}
	}

      private:
	static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

	uint64_t s_[4];
};

/*
 * The byte every untouched position of a buffer holds during a round:
 * a cheap function of the position and a per-round salt, so guard bytes
 * are checked without keeping a copy.
 */
inline uint8_t poison_byte(size_t off, uint32_t salt)
{
	uint32_t x = uint32_t(off) * 2654435761u + salt * 40503u + 0x2545f491u;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return uint8_t(x >> 8);
}

inline void fill_poison(uint8_t *base, size_t from, size_t to, uint32_t salt)
{
	for (size_t i = from; i < to; i++)
		base[i] = poison_byte(i, salt);
}

/* First position in [from, to) that does not hold its poison byte, or to. */
inline size_t find_unpoisoned(const uint8_t *base, size_t from, size_t to, uint32_t salt)
{
	for (size_t i = from; i < to; i++)
		if (base[i] != poison_byte(i, salt))
			return i;
	return to;
}

} // namespace sroce_tools
