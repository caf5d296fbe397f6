/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the release, as modinfo shows it.  dkms.conf and debian/changelog
 * carry the same number; scripts/lint.sh checks that all three agree.
 */
#ifndef SHCA_VERSION_H
#define SHCA_VERSION_H

#define SHCA_VERSION "0.9.0"

#endif /* SHCA_VERSION_H */
