/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Subcommands of sroce-verbs-check. Each gets the arguments after its name
 * and returns the process exit status: 0 when every check passed, 1 when one
 * failed, 2 for a usage error.
 */
#ifndef SROCE_VERBS_CHECK_COMMANDS_H
#define SROCE_VERBS_CHECK_COMMANDS_H

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace vc
{

int cmd_devinfo(int argc, char **argv);
int cmd_objects(int argc, char **argv);
int cmd_invalid(int argc, char **argv);
int cmd_hold(int argc, char **argv);
int cmd_srq(int argc, char **argv);
int cmd_qkey(int argc, char **argv);
int cmd_ring(int argc, char **argv);
int cmd_cqex(int argc, char **argv);
int cmd_domains(int argc, char **argv);
int cmd_dm(int argc, char **argv);
int cmd_odp(int argc, char **argv);
int cmd_xrc(int argc, char **argv);
int cmd_isolation(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmd_msgsize(int argc, char **argv);
int cmd_resporder(int argc, char **argv);
int cmd_stress(int argc, char **argv);
int cmd_memcg(int argc, char **argv);
int cmd_bound(int argc, char **argv);
int cmd_resdetails(int argc, char **argv);
int cmd_congestion(int argc, char **argv);
int cmd_cqrace(int argc, char **argv);
int cmd_odpcharge(int argc, char **argv);
int cmd_spoof(int argc, char **argv);
int cmd_mwreuse(int argc, char **argv);
int cmd_odpstall(int argc, char **argv);
int cmd_fusehang(int argc, char **argv);

struct OptionSpec {
	const char *name; /* without the leading "--" */
	bool has_value;
};

/* Command line of one subcommand: positional arguments and --options. */
class Args
{
      public:
	/* False (with a message in @why) on an unknown or incomplete option. */
	bool parse(int argc, char **argv, std::initializer_list<OptionSpec> specs,
	           std::string *why);

	const char *positional(size_t n) const;
	size_t num_positional() const { return positional_.size(); }
	bool has(const char *name) const { return values_.count(name) != 0; }
	/* Value of --@name, or @def if absent. */
	const char *value(const char *name, const char *def = nullptr) const;
	/*
	 * --@name as an integer in [@min, @max]; @def if absent. False (with a
	 * message in @why) if malformed or out of range.
	 */
	bool number(const char *name, long def, long min, long max, long *out,
	            std::string *why) const;

      private:
	std::vector<const char *> positional_;
	std::map<std::string, std::string> values_;
};

/* Prints "sroce-verbs-check COMMAND: MESSAGE" and the usage; returns 2. */
int usage_error(const char *command, const std::string &message);

} /* namespace vc */

#endif /* SROCE_VERBS_CHECK_COMMANDS_H */
