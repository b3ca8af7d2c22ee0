// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check fusehang MOUNTPOINT: a FUSE file system that never
 * answers a read. It mounts itself at MOUNTPOINT (as root, through
 * /dev/fuse, no libfuse) with one file, "data", of 1 MiB, and answers
 * what a lookup, stat, open and close need; a READ request is read from
 * the device, logged ("read OFFSET SIZE") and never replied to, so the
 * thread that faulted a page of the file in waits in the kernel until
 * this process dies (its connection is then aborted and the read fails).
 * That is memory whose backing never answers: selftests/odp_fuse.sh puts
 * an ODP region over a mapping of "data".
 *
 * Prints "mounted" once the kernel's INIT is answered. Runs until killed,
 * unmounted, or the kernel sends DESTROY.
 */
#include "commands.h"

#include <linux/fuse.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint64_t kRootIno = FUSE_ROOT_ID;
constexpr uint64_t kFileIno = 2;
constexpr uint64_t kFileSize = 1 << 20;
constexpr const char *kFileName = "data";

class Server
{
      public:
	explicit Server(int fd) : fd_(fd) {}
	/* Serves until the device goes away; the exit status. */
	int run();

      private:
	void reply(const fuse_in_header &in, int error, const void *body, size_t len);
	void attr(uint64_t ino, fuse_attr *a);
	void init(const fuse_in_header &in, const uint8_t *arg);
	void lookup(const fuse_in_header &in, const char *name);

	int fd_;
};

void Server::reply(const fuse_in_header &in, int error, const void *body, size_t len)
{
	std::vector<uint8_t> out(sizeof(fuse_out_header) + (error ? 0 : len));
	fuse_out_header h{};

	h.len = uint32_t(out.size());
	h.error = error;
	h.unique = in.unique;
	std::memcpy(out.data(), &h, sizeof(h));
	if (!error && len)
		std::memcpy(out.data() + sizeof(h), body, len);
	if (write(fd_, out.data(), out.size()) < 0 && errno != ENOENT)
		std::fprintf(stderr, "fusehang: reply to opcode %u: %s\n", in.opcode,
		             std::strerror(errno));
}

void Server::attr(uint64_t ino, fuse_attr *a)
{
	*a = fuse_attr{};
	a->ino = ino;
	a->blksize = 4096;
	if (ino == kRootIno) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0644;
		a->nlink = 1;
		a->size = kFileSize;
		a->blocks = kFileSize / 512;
	}
}

void Server::init(const fuse_in_header &in, const uint8_t *arg)
{
	fuse_init_in ii{};
	fuse_init_out io{};

	std::memcpy(&ii, arg, std::min<size_t>(sizeof(ii), in.len - sizeof(in)));
	io.major = FUSE_KERNEL_VERSION;
	io.minor = std::min<uint32_t>(ii.minor, FUSE_KERNEL_MINOR_VERSION);
	io.max_readahead = ii.max_readahead;
	io.max_background = 16;
	io.congestion_threshold = 12;
	io.max_write = 128 << 10;
	io.time_gran = 1;
	reply(in, 0, &io, sizeof(io));
	std::printf("mounted\n");
	std::fflush(stdout);
}

void Server::lookup(const fuse_in_header &in, const char *name)
{
	fuse_entry_out e{};

	if (in.nodeid != kRootIno || std::strcmp(name, kFileName) != 0) {
		reply(in, -ENOENT, nullptr, 0);
		return;
	}
	e.nodeid = kFileIno;
	e.generation = 1;
	e.entry_valid = 3600;
	e.attr_valid = 3600;
	attr(kFileIno, &e.attr);
	reply(in, 0, &e, sizeof(e));
}

int Server::run()
{
	/* At least FUSE_MIN_READ_BUFFER, and room for a write of max_write. */
	std::vector<uint8_t> buf((128 << 10) + 4096);

	for (;;) {
		ssize_t n = read(fd_, buf.data(), buf.size());
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			/* ENODEV: unmounted. */
			std::printf("device closed: %s\n", std::strerror(errno));
			return errno == ENODEV ? 0 : 1;
		}
		if (size_t(n) < sizeof(fuse_in_header))
			continue;
		fuse_in_header in;
		std::memcpy(&in, buf.data(), sizeof(in));
		const uint8_t *arg = buf.data() + sizeof(in);

		switch (in.opcode) {
		case FUSE_INIT:
			init(in, arg);
			break;
		case FUSE_LOOKUP:
			lookup(in, reinterpret_cast<const char *>(arg));
			break;
		case FUSE_GETATTR: {
			fuse_attr_out ao{};
			ao.attr_valid = 3600;
			attr(in.nodeid == kRootIno ? kRootIno : kFileIno, &ao.attr);
			reply(in, 0, &ao, sizeof(ao));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			fuse_open_out oo{};
			oo.fh = 1;
			reply(in, 0, &oo, sizeof(oo));
			break;
		}
		case FUSE_READ: {
			fuse_read_in ri{};
			std::memcpy(&ri, arg, sizeof(ri));
			/* Never answered: the faulting thread waits. */
			std::printf("read %llu %u\n", (unsigned long long)ri.offset, ri.size);
			std::fflush(stdout);
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
			reply(in, 0, nullptr, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break; /* no reply */
		case FUSE_DESTROY:
			reply(in, 0, nullptr, 0);
			return 0;
		default:
			reply(in, -ENOSYS, nullptr, 0);
			break;
		}
	}
}

} /* namespace */

int cmd_fusehang(int argc, char **argv)
{
	if (argc != 1)
		return usage_error("fusehang", "want a mount point");
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		std::fprintf(stderr, "fusehang: /dev/fuse: %s\n", std::strerror(errno));
		return 1;
	}
	std::string opts = "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0";
	if (mount("sroce-fusehang", argv[0], "fuse", MS_NOSUID | MS_NODEV, opts.c_str())) {
		std::fprintf(stderr, "fusehang: mount %s: %s\n", argv[0], std::strerror(errno));
		return 1;
	}
	return Server(fd).run();
}

} /* namespace vc */
