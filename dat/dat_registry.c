/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The registry: dat.conf read once, providers registered by name, provider
 * libraries dlopen()ed on the first open of a name and dlclose()d after its
 * last close.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datr.h"
#include "dof/log.h"

/* A provider that called dat_registry_add_provider. */
typedef struct datr_provider_reg {
	DAT_PROVIDER_INFO info;
	const DAT_PROVIDER *provider;
} datr_provider_reg_t;

static struct {
	pthread_once_t once;
	pthread_mutex_t lock; /* recursive: init calls add_provider */
	datr_conf_t conf;
	datr_provider_reg_t *regs;
	size_t nregs;
	size_t capregs;
} datr_registry = {
        .once = PTHREAD_ONCE_INIT,
};

static void datr_registry_init(void)
{
	pthread_mutexattr_t attr;
	const char *path;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&datr_registry.lock, &attr);
	pthread_mutexattr_destroy(&attr);

	dof_log_init();
	path = datr_conf_choose_path();
	if (path != NULL) {
		dof_info(DATR_LOG, "reading %s", path);
		(void)datr_conf_load_file(&datr_registry.conf, path);
	} else {
		dof_info(DATR_LOG,
		         "no dat.conf (DAT_OVERRIDE unset, no %s, no "
		         "/etc/dat.conf): built-in entries only",
		         DAT_SYSCONF_PATH);
	}
	if (datr_conf_add_builtins(&datr_registry.conf) != DOF_OK)
		dof_error(DATR_LOG, "out of memory adding built-in entries");
}

datr_conf_t *datr_registry_conf(void)
{
	pthread_once(&datr_registry.once, datr_registry_init);
	return &datr_registry.conf;
}

void datr_registry_lock(void)
{
	pthread_once(&datr_registry.once, datr_registry_init);
	pthread_mutex_lock(&datr_registry.lock);
}

void datr_registry_unlock(void)
{
	pthread_mutex_unlock(&datr_registry.lock);
}

static datr_provider_reg_t *datr_reg_find(const char *ia_name)
{
	size_t i;

	for (i = 0; i < datr_registry.nregs; i++)
		if (strncmp(datr_registry.regs[i].info.ia_name, ia_name,
		            DAT_NAME_MAX_LENGTH) == 0)
			return &datr_registry.regs[i];
	return NULL;
}

const DAT_PROVIDER *datr_provider_find(const char *ia_name)
{
	datr_provider_reg_t *reg = datr_reg_find(ia_name);

	return reg ? reg->provider : NULL;
}

static int datr_info_ok(const DAT_PROVIDER_INFO *info)
{
	return memchr(info->ia_name, '\0', DAT_NAME_MAX_LENGTH) != NULL &&
	       info->ia_name[0] != '\0';
}

DAT_RETURN DAT_API dat_registry_add_provider(const DAT_PROVIDER *provider,
                                             const DAT_PROVIDER_INFO *info)
{
	DAT_RETURN ret = DAT_SUCCESS;

	if (provider == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (info == NULL || !datr_info_ok(info))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);

	datr_registry_lock();
	if (datr_reg_find(info->ia_name) != NULL) {
		dof_warn(DATR_LOG, "provider for IA '%s' is already registered",
		         info->ia_name);
		ret = DAT_ERROR(DAT_PROVIDER_ALREADY_REGISTERED, 0);
		goto out;
	}
	if (datr_registry.nregs == datr_registry.capregs) {
		size_t cap =
		        datr_registry.capregs ? datr_registry.capregs * 2 : 8;
		datr_provider_reg_t *tmp;

		tmp = realloc(datr_registry.regs, cap * sizeof(*tmp));
		if (tmp == NULL) {
			ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                DAT_RESOURCE_MEMORY);
			goto out;
		}
		datr_registry.regs = tmp;
		datr_registry.capregs = cap;
	}
	datr_registry.regs[datr_registry.nregs].info = *info;
	datr_registry.regs[datr_registry.nregs].provider = provider;
	datr_registry.nregs++;
	dof_info(DATR_LOG, "provider registered for IA '%s' (%s)",
	         info->ia_name,
	         provider->device_name ? provider->device_name : "?");
out:
	datr_registry_unlock();
	return ret;
}

DAT_RETURN DAT_API dat_registry_remove_provider(const DAT_PROVIDER *provider,
                                                const DAT_PROVIDER_INFO *info)
{
	datr_provider_reg_t *reg;
	DAT_RETURN ret = DAT_SUCCESS;

	if (provider == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (info == NULL || !datr_info_ok(info))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);

	datr_registry_lock();
	reg = datr_reg_find(info->ia_name);
	if (reg == NULL || reg->provider != provider) {
		dof_warn(DATR_LOG,
		         "remove_provider: no such provider registered for "
		         "IA '%s'",
		         info->ia_name);
		ret = DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                DAT_NAME_NOT_REGISTERED);
		goto out;
	}
	if (datr_handle_provider_busy(provider)) {
		dof_warn(DATR_LOG,
		         "remove_provider: IA '%s' still has open IA handles",
		         info->ia_name);
		ret = DAT_ERROR(DAT_PROVIDER_IN_USE, 0);
		goto out;
	}
	*reg = datr_registry.regs[--datr_registry.nregs];
	dof_info(DATR_LOG, "provider for IA '%s' removed", info->ia_name);
out:
	datr_registry_unlock();
	return ret;
}

/* Log the IA names that do exist, for a name that does not. */
static void datr_log_not_found(const char *ia_name)
{
	datr_conf_t *conf = &datr_registry.conf;
	char names[768];
	size_t i, used = 0;

	names[0] = '\0';
	for (i = 0; i < conf->count && used < sizeof(names); i++) {
		if (conf->entries[i].shadowed)
			continue;
		used += (size_t)snprintf(names + used, sizeof(names) - used,
		                         "%s%s", used ? ", " : "",
		                         conf->entries[i].ia_name);
	}
	dof_warn(DATR_LOG,
	         "IA name '%s' not found in %s or the built-ins; "
	         "known names: %s",
	         ia_name, conf->path ? conf->path : "(no dat.conf)", names);
}

/* dlopen the entry's library and run its init. Registry lock held. */
static DAT_RETURN datr_entry_load(datr_conf_entry_t *entry)
{
	DAT_PROVIDER_INIT_FUNC init;
	DAT_PROVIDER_INFO info;
	char *err1 = NULL;
	void *dl;

	dl = dlopen(entry->lib_path, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL && strchr(entry->lib_path, '/') == NULL) {
		/* Not on the search path: try where we were installed. */
		char alt[DATR_FIELD_MAX + sizeof(DAT_LIBDIR) + 2];
		const char *e = dlerror();

		err1 = strdup(e ? e : "?");
		snprintf(alt, sizeof(alt), "%s/%s", DAT_LIBDIR,
		         entry->lib_path);
		dl = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
	}
	if (dl == NULL) {
		const char *e = dlerror();

		char where[DATR_FIELD_MAX + 16];

		datr_conf_entry_where(entry, where, sizeof(where));
		dof_warn(DATR_LOG,
		         "IA '%s' (%s): cannot load provider library: %s%s%s",
		         entry->ia_name, where, err1 ? err1 : "",
		         err1 ? "; " : "", e ? e : "?");
		free(err1);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                 DAT_NAME_NOT_REGISTERED);
	}
	free(err1);
	*(void **)&init = dlsym(dl, DAT_PROVIDER_INIT_FUNC_STR);
	*(void **)&entry->fini = dlsym(dl, DAT_PROVIDER_FINI_FUNC_STR);
	if (init == NULL) {
		dof_warn(DATR_LOG, "IA '%s': %s has no %s; not a DAT provider",
		         entry->ia_name, entry->lib_path,
		         DAT_PROVIDER_INIT_FUNC_STR);
		goto err_close;
	}

	memset(&info, 0, sizeof(info));
	snprintf(info.ia_name, sizeof(info.ia_name), "%s", entry->ia_name);
	info.dapl_version_major = entry->api_major;
	info.dapl_version_minor = entry->api_minor;
	info.is_thread_safe = entry->threadsafe;
	dof_info(DATR_LOG, "IA '%s': %s loaded, calling %s(\"%s\")",
	         entry->ia_name, entry->lib_path, DAT_PROVIDER_INIT_FUNC_STR,
	         entry->ia_params);
	init(&info, entry->ia_params);
	if (datr_reg_find(entry->ia_name) == NULL) {
		dof_warn(DATR_LOG,
		         "IA '%s': %s did not register a provider for it "
		         "(instance data \"%s\")",
		         entry->ia_name, entry->lib_path, entry->ia_params);
		if (entry->fini != NULL)
			entry->fini(&info);
		goto err_close;
	}
	entry->dl_handle = dl;
	return DAT_SUCCESS;

err_close:
	dlclose(dl);
	entry->fini = NULL;
	return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
}

DAT_RETURN datr_provider_get(const char *ia_name, DAT_UINT32 major,
                             DAT_UINT32 minor, const DAT_PROVIDER **provider,
                             datr_conf_entry_t **entry_out)
{
	datr_conf_entry_t *entry;
	const DAT_PROVIDER *prov;
	DAT_RETURN ret = DAT_SUCCESS;

	datr_registry_lock();
	entry = datr_conf_find(&datr_registry.conf, ia_name);
	if (entry != NULL &&
	    (entry->api_major != major || entry->api_minor < minor)) {
		char where[DATR_FIELD_MAX + 16];

		datr_conf_entry_where(entry, where, sizeof(where));
		dof_warn(DATR_LOG,
		         "IA '%s' (%s) offers DAT %u.%u; the consumer asks "
		         "for %u.%u",
		         ia_name, where, entry->api_major, entry->api_minor,
		         major, minor);
		ret = DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                entry->api_major != major
		                        ? DAT_MAJOR_NOT_FOUND
		                        : DAT_MINOR_NOT_FOUND);
		goto out;
	}
	prov = datr_provider_find(ia_name);
	if (prov == NULL && entry == NULL) {
		datr_log_not_found(ia_name);
		ret = DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                DAT_NAME_NOT_REGISTERED);
		goto out;
	}
	if (prov == NULL) {
		ret = datr_entry_load(entry);
		if (ret != DAT_SUCCESS)
			goto out;
		prov = datr_provider_find(ia_name);
	} else if (entry != NULL && entry->dl_handle == NULL) {
		/* Registered by someone else (linked in): not ours to load. */
		entry = NULL;
	}
	if (entry != NULL)
		entry->refcnt++;
	*provider = prov;
	*entry_out = entry;
out:
	datr_registry_unlock();
	return ret;
}

void datr_provider_put(datr_conf_entry_t *entry)
{
	DAT_PROVIDER_INFO info;

	if (entry == NULL)
		return;
	datr_registry_lock();
	if (--entry->refcnt > 0 || entry->dl_handle == NULL)
		goto out;
	memset(&info, 0, sizeof(info));
	snprintf(info.ia_name, sizeof(info.ia_name), "%s", entry->ia_name);
	info.dapl_version_major = entry->api_major;
	info.dapl_version_minor = entry->api_minor;
	info.is_thread_safe = entry->threadsafe;
	if (entry->fini != NULL)
		entry->fini(&info);
	if (datr_reg_find(entry->ia_name) != NULL)
		dof_warn(DATR_LOG,
		         "IA '%s': %s did not remove its provider in %s",
		         entry->ia_name, entry->lib_path,
		         DAT_PROVIDER_FINI_FUNC_STR);
	dlclose(entry->dl_handle);
	entry->dl_handle = NULL;
	entry->fini = NULL;
	dof_info(DATR_LOG, "IA '%s': last close, %s unloaded", entry->ia_name,
	         entry->lib_path);
out:
	datr_registry_unlock();
}

DAT_RETURN DAT_API dat_registry_list_providers(
        DAT_COUNT max_to_return, DAT_COUNT *entries_returned,
        DAT_PROVIDER_INFO *(dat_provider_list[]))
{
	datr_conf_t *conf;
	DAT_COUNT n = 0;
	size_t i;

	if (max_to_return < 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (entries_returned == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (max_to_return > 0 && dat_provider_list == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);

	conf = datr_registry_conf();
	datr_registry_lock();
	for (i = 0; i < conf->count; i++) {
		const datr_conf_entry_t *e = &conf->entries[i];
		DAT_PROVIDER_INFO *out;

		if (e->shadowed)
			continue;
		if (max_to_return == 0) {
			n++; /* only counting */
			continue;
		}
		if (n == max_to_return)
			break;
		out = dat_provider_list[n];
		if (out == NULL) {
			datr_registry_unlock();
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG3);
		}
		memset(out, 0, sizeof(*out));
		snprintf(out->ia_name, sizeof(out->ia_name), "%s", e->ia_name);
		out->dapl_version_major = e->api_major;
		out->dapl_version_minor = e->api_minor;
		out->is_thread_safe = e->threadsafe;
		n++;
	}
	datr_registry_unlock();
	*entries_returned = n;
	/* The spec (and OFED) answer a count-only call with an error. */
	if (max_to_return == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	return DAT_SUCCESS;
}
