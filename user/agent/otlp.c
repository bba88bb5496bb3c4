// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* OpenTelemetry's profiles request from an interval's pprof (otlp.h): the pprof's tables
 * become the request's dictionary (their indices shifted by the zero entry each table starts
 * with), its samples are grouped by their pid label into one resource each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "agent/otlp.h"
#include "otlp.pb-c.h"
#include "profile.pb-c.h"

#define OT(x) Opentelemetry__Proto__Profiles__V1development__##x
#define OT_INIT(x) opentelemetry__proto__profiles__v1development__##x##__init
#define OT_ENUM(x) OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__##x

typedef Perftools__Profiles__Profile Pprof;
/* the resource attributes of one process: host, service, pid, executable, container */
#define RES_ATTRS 5

/* one process's samples: a run of the samples sorted by pid */
struct group {
	s64 pid;		/* -1: no pid label */
	const char *comm, *container;
	size_t first, nr;	/* in the sorted samples */
	size_t nr_locs;		/* their location ids */
	char container_id[128];
};

struct enc {
	Pprof *pp;
	s64 pid_key, comm_key, container_key;
	size_t *order;		/* sample indices by pid */
	struct group *groups;
	size_t nr_groups;
	/* the dictionary */
	OT(Mapping) *maps, **map_ptrs;
	OT(Location) *locs, **loc_ptrs;
	OT(Line) *lines, **line_ptrs;
	OT(Function) *funcs, **func_ptrs;
	OT(KeyValue) *attrs, **attr_ptrs;
	OT(AnyValue) *attr_vals;
	size_t nr_attrs;
	int32_t *map_attr;
	OT(Link) zero_link, *link_ptrs[1];
	u64 *map_ids, *loc_ids, *func_ids;
	/* per process */
	OT(ResourceProfiles) *rps, **rp_ptrs;
	OT(Resource) *res;
	OT(KeyValue) *res_kv, **res_kv_ptrs;
	OT(AnyValue) *res_vals;
	OT(ScopeProfiles) *sps, **sp_ptrs;
	OT(Profile) *profs, **prof_ptrs;
	OT(ValueType) sample_type, period_type;
	OT(InstrumentationScope) scope;
	OT(Sample) *samples, **sample_ptrs;
	int32_t *loc_indices;
	int64_t *values;
	u8 *ids;		/* 16 bytes a profile */
};

static u8 *gunzip(const u8 *in, size_t len, size_t *out_len)
{
	z_stream z = { .next_in = (u8 *)in, .avail_in = len };
	size_t cap = len * 4 + 4096;
	u8 *out = malloc(cap), *grown;
	int rc = Z_OK;

	if (!out || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(out);
		return NULL;
	}
	while (rc == Z_OK) {
		if (z.total_out == cap) {
			grown = realloc(out, cap * 2);
			if (!grown)
				break;
			out = grown;
			cap *= 2;
		}
		z.next_out = out + z.total_out;
		z.avail_out = cap - z.total_out;
		rc = inflate(&z, Z_NO_FLUSH);
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*out_len = z.total_out;
	return out;
}

/* the dictionary index of a pprof id: its position + 1 (0 is the zero entry), 0 if unknown */
static int32_t index_of(const u64 *ids, size_t n, u64 id)
{
	if (id >= 1 && id <= n && ids[id - 1] == id)
		return (int32_t)id;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return (int32_t)(i + 1);
	return 0;
}

static s64 string_key(const Pprof *pp, const char *s)
{
	for (size_t i = 1; i < pp->n_string_table; i++)
		if (!strcmp(pp->string_table[i], s))
			return (s64)i;
	return -1;
}

static const Perftools__Profiles__Label *label(const struct enc *e, size_t sample, s64 key)
{
	const Perftools__Profiles__Sample *s = e->pp->sample[sample];

	for (size_t i = 0; key > 0 && i < s->n_label; i++)
		if (s->label[i]->key == key)
			return s->label[i];
	return NULL;
}

static s64 sample_pid(const struct enc *e, size_t sample)
{
	const Perftools__Profiles__Label *l = label(e, sample, e->pid_key);

	return l ? l->num : -1;
}

static const struct enc *sort_enc;

static int by_pid(const void *a, const void *b)
{
	s64 pa = sample_pid(sort_enc, *(const size_t *)a), pb = sample_pid(sort_enc, *(const size_t *)b);

	return pa < pb ? -1 : pa > pb;
}

static const char *label_str(const struct enc *e, size_t sample, s64 key)
{
	const Perftools__Profiles__Label *l = label(e, sample, key);

	return l && l->str > 0 && (size_t)l->str < e->pp->n_string_table ? e->pp->string_table[l->str] : NULL;
}

const char *otlp__container_id(const char *label, char *buf, size_t size)
{
	const char *last;

	if (!label || !*label || !strncmp(label, "unit ", 5))
		return NULL;
	last = strrchr(label, ' ');
	snprintf(buf, size, "%s", last ? last + 1 : label);
	return buf;
}

/* the samples sorted by pid and cut into processes */
static int make_groups(struct enc *e)
{
	size_t n = e->pp->n_sample;

	e->order = calloc(n + 1, sizeof(*e->order));
	e->groups = calloc(n + 1, sizeof(*e->groups));
	if (!e->order || !e->groups)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e->order[i] = i;
	sort_enc = e;
	qsort(e->order, n, sizeof(*e->order), by_pid);
	for (size_t i = 0; i < n; i++) {
		size_t s = e->order[i];
		s64 pid = sample_pid(e, s);
		struct group *g = e->nr_groups ? &e->groups[e->nr_groups - 1] : NULL;

		if (!g || g->pid != pid) {
			g = &e->groups[e->nr_groups++];
			g->pid = pid;
			g->first = i;
		}
		g->nr++;
		g->nr_locs += e->pp->sample[s]->n_location_id;
		if (!g->comm)
			g->comm = label_str(e, s, e->comm_key);
		if (!g->container)
			g->container = otlp__container_id(label_str(e, s, e->container_key),
							  g->container_id, sizeof(g->container_id));
	}
	return 0;
}

static void set_string_attr(OT(KeyValue) *kv, OT(AnyValue) *v, const char *key, const char *val)
{
	OT_INIT(key_value)(kv);
	OT_INIT(any_value)(v);
	kv->key = (char *)key;
	v->value_case = OT_ENUM(ANY_VALUE__VALUE_STRING_VALUE);
	v->string_value = (char *)val;
	kv->value = v;
}

static int alloc_dictionary(struct enc *e)
{
	const Pprof *pp = e->pp;
	size_t nr_lines = 0, nm = pp->n_mapping + 1, nl = pp->n_location + 1, nf = pp->n_function + 1;

	for (size_t i = 0; i < pp->n_location; i++)
		nr_lines += pp->location[i]->n_line;
	e->maps = calloc(nm, sizeof(*e->maps));
	e->map_ptrs = calloc(nm, sizeof(*e->map_ptrs));
	e->map_ids = calloc(nm, sizeof(*e->map_ids));
	e->map_attr = calloc(nm, sizeof(*e->map_attr));
	e->attrs = calloc(nm, sizeof(*e->attrs));
	e->attr_ptrs = calloc(nm, sizeof(*e->attr_ptrs));
	e->attr_vals = calloc(nm, sizeof(*e->attr_vals));
	e->locs = calloc(nl, sizeof(*e->locs));
	e->loc_ptrs = calloc(nl, sizeof(*e->loc_ptrs));
	e->loc_ids = calloc(nl, sizeof(*e->loc_ids));
	e->funcs = calloc(nf, sizeof(*e->funcs));
	e->func_ptrs = calloc(nf, sizeof(*e->func_ptrs));
	e->func_ids = calloc(nf, sizeof(*e->func_ids));
	e->lines = calloc(nr_lines + 1, sizeof(*e->lines));
	e->line_ptrs = calloc(nr_lines + 1, sizeof(*e->line_ptrs));
	if (!e->maps || !e->map_ptrs || !e->map_ids || !e->map_attr || !e->attrs || !e->attr_ptrs ||
	    !e->attr_vals || !e->locs || !e->loc_ptrs || !e->loc_ids || !e->funcs || !e->func_ptrs ||
	    !e->func_ids || !e->lines || !e->line_ptrs)
		return -ENOMEM;
	return 0;
}

/* mappings (their build-ids as attributes), locations and functions */
static int make_dictionary(struct enc *e)
{
	const Pprof *pp = e->pp;
	size_t li = 0;
	int err = alloc_dictionary(e);

	if (err)
		return err;
	OT_INIT(mapping)(&e->maps[0]);
	e->map_ptrs[0] = &e->maps[0];
	for (size_t i = 0; i < pp->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pp->mapping[i];
		OT(Mapping) *o = &e->maps[i + 1];

		OT_INIT(mapping)(o);
		e->map_ids[i] = m->id;
		o->memory_start = m->memory_start;
		o->memory_limit = m->memory_limit;
		o->file_offset = m->file_offset;
		o->filename_strindex = (int32_t)m->filename;
		if (m->build_id > 0 && (size_t)m->build_id < pp->n_string_table) {
			size_t a = e->nr_attrs++;

			set_string_attr(&e->attrs[a], &e->attr_vals[a], "process.executable.build_id.gnu",
					pp->string_table[m->build_id]);
			e->attr_ptrs[a] = &e->attrs[a];
			e->map_attr[i] = (int32_t)a;
			o->n_attribute_indices = 1;
			o->attribute_indices = &e->map_attr[i];
		}
		e->map_ptrs[i + 1] = o;
	}
	OT_INIT(function)(&e->funcs[0]);
	e->func_ptrs[0] = &e->funcs[0];
	for (size_t i = 0; i < pp->n_function; i++) {
		const Perftools__Profiles__Function *f = pp->function[i];
		OT(Function) *o = &e->funcs[i + 1];

		OT_INIT(function)(o);
		e->func_ids[i] = f->id;
		o->name_strindex = (int32_t)f->name;
		o->system_name_strindex = (int32_t)f->system_name;
		o->filename_strindex = (int32_t)f->filename;
		o->start_line = f->start_line;
		e->func_ptrs[i + 1] = o;
	}
	OT_INIT(location)(&e->locs[0]);
	e->loc_ptrs[0] = &e->locs[0];
	for (size_t i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];
		OT(Location) *o = &e->locs[i + 1];

		OT_INIT(location)(o);
		e->loc_ids[i] = l->id;
		o->mapping_index = index_of(e->map_ids, pp->n_mapping, l->mapping_id);
		o->address = l->address;
		o->is_folded = l->is_folded;
		o->n_line = l->n_line;
		o->line = &e->line_ptrs[li];
		for (size_t j = 0; j < l->n_line; j++, li++) {
			OT_INIT(line)(&e->lines[li]);
			e->lines[li].function_index = index_of(e->func_ids, pp->n_function,
							       l->line[j]->function_id);
			e->lines[li].line = l->line[j]->line;
			e->lines[li].column = l->line[j]->column;
			e->line_ptrs[li] = &e->lines[li];
		}
		e->loc_ptrs[i + 1] = o;
	}
	OT_INIT(link)(&e->zero_link);
	e->link_ptrs[0] = &e->zero_link;
	return 0;
}

static int alloc_resources(struct enc *e, size_t per)
{
	size_t n = e->nr_groups + 1, nr_samples = e->pp->n_sample + 1, total_locs = 1;

	for (size_t g = 0; g < e->nr_groups; g++)
		total_locs += e->groups[g].nr_locs;
	e->rps = calloc(n, sizeof(*e->rps));
	e->rp_ptrs = calloc(n, sizeof(*e->rp_ptrs));
	e->res = calloc(n, sizeof(*e->res));
	e->res_kv = calloc(n * per, sizeof(*e->res_kv));
	e->res_kv_ptrs = calloc(n * per, sizeof(*e->res_kv_ptrs));
	e->res_vals = calloc(n * per, sizeof(*e->res_vals));
	e->sps = calloc(n, sizeof(*e->sps));
	e->sp_ptrs = calloc(n, sizeof(*e->sp_ptrs));
	e->profs = calloc(n, sizeof(*e->profs));
	e->prof_ptrs = calloc(n, sizeof(*e->prof_ptrs));
	e->ids = calloc(n, 16);
	e->samples = calloc(nr_samples, sizeof(*e->samples));
	e->sample_ptrs = calloc(nr_samples, sizeof(*e->sample_ptrs));
	e->values = calloc(nr_samples, sizeof(*e->values));
	e->loc_indices = calloc(total_locs, sizeof(*e->loc_indices));
	if (!e->rps || !e->rp_ptrs || !e->res || !e->res_kv || !e->res_kv_ptrs || !e->res_vals ||
	    !e->sps || !e->sp_ptrs || !e->profs || !e->prof_ptrs || !e->ids || !e->samples ||
	    !e->sample_ptrs || !e->values || !e->loc_indices)
		return -ENOMEM;
	return 0;
}

/* process g's resource attributes: host, service, pid, executable, container, labels */
static void make_resource(struct enc *e, const struct otlp_resource *r, size_t g, size_t per)
{
	const struct group *gr = &e->groups[g];
	OT(KeyValue) *kv = &e->res_kv[g * per], **kvp = &e->res_kv_ptrs[g * per];
	OT(AnyValue) *v = &e->res_vals[g * per];
	size_t n = 0;

	set_string_attr(&kv[n], &v[n], "host.name", r->host ? r->host : "");
	n++;
	set_string_attr(&kv[n], &v[n], "service.name", r->service ? r->service : "");
	n++;
	if (gr->pid >= 0) {
		set_string_attr(&kv[n], &v[n], "process.pid", "");
		v[n].value_case = OT_ENUM(ANY_VALUE__VALUE_INT_VALUE);
		v[n++].int_value = gr->pid;
	}
	if (gr->comm) {
		set_string_attr(&kv[n], &v[n], "process.executable.name", gr->comm);
		n++;
	}
	if (gr->container) {
		set_string_attr(&kv[n], &v[n], "container.id", gr->container);
		n++;
	}
	for (size_t i = 0; i < r->nr_labels; i++, n++)
		set_string_attr(&kv[n], &v[n], r->labels[i].name, r->labels[i].value);
	for (size_t i = 0; i < n; i++)
		kvp[i] = &kv[i];
	OT_INIT(resource)(&e->res[g]);
	e->res[g].n_attributes = n;
	e->res[g].attributes = kvp;
}

/* process g's profile: its samples, their stacks from *li on in the location indices */
static void make_profile(struct enc *e, size_t g, size_t *li)
{
	const Pprof *pp = e->pp;
	const struct group *gr = &e->groups[g];
	OT(Profile) *prof = &e->profs[g];
	size_t start = *li;

	OT_INIT(profile)(prof);
	prof->sample_type = &e->sample_type;
	prof->period_type = &e->period_type;
	prof->period = pp->period;
	prof->time_nanos = (u64)pp->time_nanos;
	prof->duration_nanos = (u64)pp->duration_nanos;
	for (size_t b = 0; b < 16; b++)
		e->ids[g * 16 + b] = (u8)random();
	prof->profile_id.data = &e->ids[g * 16];
	prof->profile_id.len = 16;
	prof->n_sample = gr->nr;
	prof->sample = &e->sample_ptrs[gr->first];
	for (size_t k = gr->first; k < gr->first + gr->nr; k++) {
		const Perftools__Profiles__Sample *ps = pp->sample[e->order[k]];
		OT(Sample) *s = &e->samples[k];

		OT_INIT(sample)(s);
		s->locations_start_index = (int32_t)(*li - start);
		s->locations_length = (int32_t)ps->n_location_id;
		for (size_t j = 0; j < ps->n_location_id; j++)
			e->loc_indices[(*li)++] = index_of(e->loc_ids, pp->n_location, ps->location_id[j]);
		e->values[k] = ps->n_value ? ps->value[0] : 0;
		s->n_values = 1;
		s->values = &e->values[k];
		e->sample_ptrs[k] = s;
	}
	prof->n_location_indices = *li - start;
	prof->location_indices = &e->loc_indices[start];
	e->prof_ptrs[g] = prof;
}

/* one resource, scope and profile per process */
static int make_resources(struct enc *e, const struct otlp_resource *r)
{
	const Pprof *pp = e->pp;
	size_t per = RES_ATTRS + r->nr_labels, li = 0;
	int err = alloc_resources(e, per);

	if (err)
		return err;
	OT_INIT(instrumentation_scope)(&e->scope);
	e->scope.name = "hsbpf";
	e->scope.version = HSBPF_VERSION;
	OT_INIT(value_type)(&e->sample_type);
	OT_INIT(value_type)(&e->period_type);
	if (pp->n_sample_type) {
		e->sample_type.type_strindex = (int32_t)pp->sample_type[0]->type;
		e->sample_type.unit_strindex = (int32_t)pp->sample_type[0]->unit;
	}
	e->sample_type.aggregation_temporality = OT_ENUM(AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_DELTA);
	if (pp->period_type) {
		e->period_type.type_strindex = (int32_t)pp->period_type->type;
		e->period_type.unit_strindex = (int32_t)pp->period_type->unit;
	}
	for (size_t g = 0; g < e->nr_groups; g++) {
		make_resource(e, r, g, per);
		make_profile(e, g, &li);
		OT_INIT(scope_profiles)(&e->sps[g]);
		e->sps[g].scope = &e->scope;
		e->sps[g].n_profiles = 1;
		e->sps[g].profiles = &e->prof_ptrs[g];
		e->sp_ptrs[g] = &e->sps[g];
		OT_INIT(resource_profiles)(&e->rps[g]);
		e->rps[g].resource = &e->res[g];
		e->rps[g].n_scope_profiles = 1;
		e->rps[g].scope_profiles = &e->sp_ptrs[g];
		e->rp_ptrs[g] = &e->rps[g];
	}
	return 0;
}

static void enc_free(struct enc *e)
{
	void *all[] = {
		e->order, e->groups, e->maps, e->map_ptrs, e->locs, e->loc_ptrs, e->lines,
		e->line_ptrs, e->funcs, e->func_ptrs, e->attrs, e->attr_ptrs, e->attr_vals,
		e->map_attr, e->map_ids, e->loc_ids, e->func_ids, e->rps, e->rp_ptrs, e->res,
		e->res_kv, e->res_kv_ptrs, e->res_vals, e->sps, e->sp_ptrs, e->profs, e->prof_ptrs,
		e->samples, e->sample_ptrs, e->loc_indices, e->values, e->ids,
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
	if (e->pp)
		perftools__profiles__profile__free_unpacked(e->pp, NULL);
}

int otlp__encode(const u8 *pprof_gz, size_t len, const struct otlp_resource *res, u8 **out,
		 size_t *out_len)
{
	OT(ExportProfilesServiceRequest) req;
	OT(ProfilesDictionary) dict;
	struct enc e = {};
	size_t plen = 0;
	u8 *pb = gunzip(pprof_gz, len, &plen);
	int err = 0;

	*out = NULL;
	if (pb)
		e.pp = perftools__profiles__profile__unpack(NULL, plen, pb);
	free(pb);
	if (!e.pp) {
		err = fail(-EINVAL, "cannot convert the profile for OTLP: not a gzipped pprof");
		goto cleanup;
	}
	e.pid_key = string_key(e.pp, "pid");
	e.comm_key = string_key(e.pp, "comm");
	e.container_key = string_key(e.pp, "container");
	err = make_groups(&e);
	if (!err)
		err = make_dictionary(&e);
	if (!err)
		err = make_resources(&e, res);
	if (err)
		goto nomem;
	OT_INIT(profiles_dictionary)(&dict);
	dict.n_mapping_table = e.pp->n_mapping + 1;
	dict.mapping_table = e.map_ptrs;
	dict.n_location_table = e.pp->n_location + 1;
	dict.location_table = e.loc_ptrs;
	dict.n_function_table = e.pp->n_function + 1;
	dict.function_table = e.func_ptrs;
	dict.n_link_table = 1;
	dict.link_table = e.link_ptrs;
	dict.n_string_table = e.pp->n_string_table;
	dict.string_table = e.pp->string_table;
	dict.n_attribute_table = e.nr_attrs;
	dict.attribute_table = e.attr_ptrs;
	OT_INIT(export_profiles_service_request)(&req);
	req.n_resource_profiles = e.nr_groups;
	req.resource_profiles = e.rp_ptrs;
	req.dictionary = &dict;
	*out_len = opentelemetry__proto__profiles__v1development__export_profiles_service_request__get_packed_size(&req);
	*out = malloc(*out_len + 1);
	if (!*out)
		goto nomem;
	opentelemetry__proto__profiles__v1development__export_profiles_service_request__pack(&req, *out);
	goto cleanup;
nomem:
	err = fail(-ENOMEM, "cannot encode an OTLP request: %s", strerror(ENOMEM));
cleanup:
	enc_free(&e);
	return err;
}
