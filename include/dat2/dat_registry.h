/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 2.0: registry interface used by providers (not by consumers). */

#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#if !defined(_UDAT_H_) && !defined(_KDAT_H_)
#include <dat2/udat.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_UDAT_H_)
#include <dat2/udat_redirection.h>
#else
#include <dat2/kdat_redirection.h>
#endif

/* Register / unregister a provider's dispatch table under info->ia_name. */
extern DAT_RETURN DAT_API dat_registry_add_provider(const DAT_PROVIDER *,
                                                    const DAT_PROVIDER_INFO *);

extern DAT_RETURN DAT_API
dat_registry_remove_provider(const DAT_PROVIDER *, const DAT_PROVIDER_INFO *);

/*
 * Entry points a dynamically loaded provider library exports; the registry
 * calls init after dlopen() (with the dat.conf instance data) and fini before
 * dlclose().
 */
#define DAT_PROVIDER_INIT_FUNC_NAME dat_provider_init
#define DAT_PROVIDER_FINI_FUNC_NAME dat_provider_fini

#define DAT_PROVIDER_INIT_FUNC_STR  "dat_provider_init"
#define DAT_PROVIDER_FINI_FUNC_STR  "dat_provider_fini"

typedef void(DAT_API *DAT_PROVIDER_INIT_FUNC)(const DAT_PROVIDER_INFO *,
                                              const char *);

typedef void(DAT_API *DAT_PROVIDER_FINI_FUNC)(const DAT_PROVIDER_INFO *);

/* High-availability relationship between two IAs. */
typedef enum dat_ha_relationship {
	DAT_HA_FALSE,
	DAT_HA_TRUE,
	DAT_HA_UNKNOWN,
	DAT_HA_CONFLICTING, /* the two IAs disagree */
	DAT_HA_EXTENSION_BASE
} DAT_HA_RELATIONSHIP;

extern DAT_RETURN DAT_API dat_registry_providers_related(const DAT_NAME_PTR,
                                                         const DAT_NAME_PTR,
                                                         DAT_HA_RELATIONSHIP *);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
