// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Event lists for counting: names split at the commas outside braces, groups, modifiers
 * shared by a group's events, and the default set. */
#include <stdlib.h>
#include <string.h>
#include "stat/stat_events.h"

/* name plus the group's modifiers (mods, without the colon; "" for none) */
static int add_event(struct stat_events *evs, const char *list, const char *name, size_t len,
		     const char *mods, int group, bool leader)
{
	char buf[sizeof(evs->v->spec.name) + 16];
	struct stat_event *e;
	int n;

	if (!len)
		return fail(-EINVAL, "invalid event list '%s': an empty event name", list);
	if (evs->n >= STAT_MAX_EVENTS)
		return fail(-EINVAL, "too many events: at most %d", STAT_MAX_EVENTS);
	n = snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	if (n < 0 || (size_t)n >= sizeof(buf) - 16)
		return fail(-EINVAL, "invalid event name '%.*s'", (int)len, name);
	/* the group's modifiers that the event does not have already */
	for (const char *m = mods; *m; m++) {
		const char *colon = strchr(buf, ':');

		if (colon && strchr(colon, *m))
			continue;
		if (!colon)
			buf[n++] = ':';
		buf[n++] = *m;
		buf[n] = 0;
	}
	if (array__reserve((void **)&evs->v, &evs->cap, evs->n + 1, sizeof(*evs->v)))
		return fail(-ENOMEM, "cannot parse events: %s", strerror(ENOMEM));
	e = &evs->v[evs->n];
	memset(e, 0, sizeof(*e));
	if (event__parse(buf, &e->spec))
		return -EINVAL;
	if (e->spec.precise)
		return fail(-EINVAL, "invalid event '%s': precise levels are for sampling", buf);
	if (e->spec.branch_stack)
		return fail(-EINVAL, "invalid event '%s': branch stacks are for sampling", buf);
	e->group = group;
	e->leader = leader;
	evs->n++;
	return 0;
}

/* one {a,b}[:mods] at s, whose '{' is s[0]; *end is set past it */
static int parse_group(struct stat_events *evs, const char *list, const char *s, const char **end)
{
	const char *close = s + 1 + strcspn(s + 1, "{}"), *mods, *after;
	char modbuf[16];
	int group = evs->nr_groups, err;
	bool first = true;

	if (*close != '}')
		return fail(-EINVAL, "invalid event group in '%s': %s", list,
			    *close == '{' ? "groups do not nest" : "no closing '}'");
	if (close == s + 1)
		return fail(-EINVAL, "invalid event group in '%s': an empty group", list);
	mods = "";
	after = close + 1;
	if (*after == ':') {
		size_t n = strcspn(after + 1, ",");

		if (!n || n >= sizeof(modbuf))
			return fail(-EINVAL, "invalid event group in '%s': bad modifiers after '}'", list);
		memcpy(modbuf, after + 1, n);
		modbuf[n] = 0;
		mods = modbuf;
		after += 1 + n;
	}
	if (*after && *after != ',')
		return fail(-EINVAL, "invalid event group in '%s': '%c' after '}'", list, *after);
	for (const char *p = s + 1; p < close; ) {
		size_t len = strcspn(p, ",}");

		err = add_event(evs, list, p, len, mods, group, first);
		if (err)
			return err;
		first = false;
		p += len;
		if (*p == ',')
			p++;
		if (p == close && p[-1] == ',')
			return fail(-EINVAL, "invalid event list '%s': an empty event name", list);
	}
	evs->nr_groups++;
	*end = after;
	return 0;
}

int stat_events__parse(struct stat_events *evs, const char *list)
{
	const char *s = list;
	int err;

	if (!*s)
		return fail(-EINVAL, "invalid event list '': an empty event name");
	for (;;) {
		if (*s == '{') {
			err = parse_group(evs, list, s, &s);
		} else {
			size_t len = strcspn(s, ",{}");

			if (s[len] == '{' || s[len] == '}')
				return fail(-EINVAL, "invalid event group in '%s': unexpected '%c'", list,
					    s[len]);
			err = add_event(evs, list, s, len, "", evs->nr_groups, true);
			if (!err)
				evs->nr_groups++;
			s += len;
		}
		if (err)
			return err;
		if (!*s)
			return 0;
		s++;	/* the comma */
		if (!*s)
			return fail(-EINVAL, "invalid event list '%s': an empty event name", list);
	}
}

int stat_events__add_default(struct stat_events *evs)
{
	return stat_events__parse(evs, "task-clock,context-switches,cpu-migrations,page-faults,"
				  "cycles,instructions,branches,branch-misses");
}

int stat_events__find(const struct stat_events *evs, u32 type, u64 config,
		      const struct event_spec *like)
{
	for (int i = 0; i < evs->n; i++) {
		const struct event_spec *e = &evs->v[i].spec;

		if (e->type == type && e->config == config && e->exclude_user == like->exclude_user &&
		    e->exclude_kernel == like->exclude_kernel)
			return i;
	}
	return -1;
}

void stat_events__free(struct stat_events *evs)
{
	free(evs->v);
	memset(evs, 0, sizeof(*evs));
}
