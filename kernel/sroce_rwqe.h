/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the responder's receive WQEs (sroce_rwqe.c), for the request
 * execution above them (sroce_resp.c).
 */
#ifndef SROCE_RWQE_H
#define SROCE_RWQE_H

#include "sroce_qp.h"

int sroce_rwqe_get(struct sroce_qp *qp);
void sroce_rwqe_complete(struct sroce_qp *qp, struct sroce_cqe *cqe,
			 bool solicited);
void sroce_rwqe_complete_err(struct sroce_qp *qp, int status);

#endif /* SROCE_RWQE_H */
