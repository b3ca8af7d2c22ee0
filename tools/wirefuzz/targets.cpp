// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-wirefuzz: the target QPs, from the command line or from the output
 * of `rdma resource show qp` on the target host, e.g.
 *
 *   link sroce0/1 lqpn 17 rqpn 18 type RC state RTS rq-psn 16777000
 *       sq-psn 1234 path-mig-state MIGRATED pdn 3 pid 211 comm sroce-integrity
 *
 * (one line per QP; rq-psn and sq-psn are the initial PSNs of the QP's
 * attributes, which is what the safety rule anchors on).
 */
#include "wirefuzz.h"

#include "number.h"

#include <sstream>

namespace wirefuzz
{

using sroce_tools::parse_uint_into;

namespace
{

bool type_of(const std::string &s, QpType *out)
{
	static const struct {
		const char *name;
		QpType type;
	} types[] = {
	    {"RC", QpType::rc},   {"UC", QpType::uc},   {"UD", QpType::ud},
	    {"GSI", QpType::gsi}, {"rc", QpType::rc},   {"uc", QpType::uc},
	    {"ud", QpType::ud},   {"gsi", QpType::gsi}, {"unknown", QpType::unknown},
	};

	for (const auto &t : types) {
		if (s == t.name) {
			*out = t.type;
			return true;
		}
	}
	*out = QpType::unknown; /* XRC, SMI, driver types: no assumptions */
	return false;
}

} // namespace

bool parse_qp_listing(const std::string &text, std::vector<Target> *out, std::string *why)
{
	std::istringstream lines(text);
	std::string line;

	while (std::getline(lines, line)) {
		std::istringstream words(line);
		std::vector<std::string> w;
		std::string s;
		Target t;
		bool have_qpn = false;

		while (words >> s)
			w.push_back(s);
		for (size_t i = 0; i + 1 < w.size(); i++) {
			const std::string &key = w[i], &val = w[i + 1];
			bool ok = true;

			if (key == "lqpn") {
				ok = parse_uint_into(val.c_str(), 0, SROCE_QPN_MASK, &t.qpn);
				have_qpn = ok;
			} else if (key == "rqpn") {
				ok = t.has_rqpn =
				    parse_uint_into(val.c_str(), 0, SROCE_QPN_MASK, &t.rqpn);
			} else if (key == "type") {
				type_of(val, &t.type);
			} else if (key == "state") {
				t.state = val;
			} else if (key == "rq-psn") {
				ok = t.has_rq_psn =
				    parse_uint_into(val.c_str(), 0, SROCE_PSN_MASK, &t.rq_psn);
			} else if (key == "sq-psn") {
				ok = t.has_sq_psn =
				    parse_uint_into(val.c_str(), 0, SROCE_PSN_MASK, &t.sq_psn);
			} else {
				continue;
			}
			if (!ok) {
				*why = "bad " + key + " in: " + line;
				return false;
			}
			i++;
		}
		if (have_qpn)
			out->push_back(t);
	}
	return true;
}

bool parse_qp_spec(const std::string &spec, Target *out)
{
	std::vector<std::string> parts;
	std::string part;
	std::istringstream in(spec);
	Target t;

	while (std::getline(in, part, ':'))
		parts.push_back(part);
	if (parts.empty() || parts.size() > 4 ||
	    !parse_uint_into(parts[0].c_str(), 0, SROCE_QPN_MASK, &t.qpn))
		return false;
	if (parts.size() > 1 && !type_of(parts[1], &t.type))
		return false;
	if (parts.size() > 2 && !parts[2].empty()) {
		if (!parse_uint_into(parts[2].c_str(), 0, SROCE_PSN_MASK, &t.rq_psn))
			return false;
		t.has_rq_psn = true;
	}
	if (parts.size() > 3 && !parts[3].empty()) {
		if (!parse_uint_into(parts[3].c_str(), 0, SROCE_PSN_MASK, &t.sq_psn))
			return false;
		t.has_sq_psn = true;
	}
	*out = t;
	return true;
}

} // namespace wirefuzz
