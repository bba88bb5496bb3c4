// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's OTLP message (user/agent/otlp.c): a known pprof of two processes becomes a
 * request of two resources with their attributes, the pprof's tables as the dictionary, each
 * sample's stack and value kept. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "agent/otlp.h"
#include "otlp.pb-c.h"
#include "profile.pb-c.h"

typedef Opentelemetry__Proto__Profiles__V1development__ExportProfilesServiceRequest Request;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles Resource;
typedef Opentelemetry__Proto__Profiles__V1development__Profile OtProfile;

static u8 *gzip(const u8 *in, size_t len, size_t *out_len)
{
	z_stream z = {};
	size_t cap = len + 1024;
	u8 *out = malloc(cap);

	cr_assert(out);
	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (u8 *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

enum { S_EMPTY, S_SAMPLES, S_COUNT, S_CPU, S_NS, S_PID, S_COMM, S_MAIN, S_BIN, S_BUILD_ID,
       S_CONTAINER, S_DOCKER, S_WORK, S_X, NR_S };

/* two processes: pid 10 (comm x) with two samples of main -> work, pid 20 in a container
 * with one of main */
static u8 *known_pprof(size_t *len)
{
	static char *strings[NR_S] = { "", "samples", "count", "cpu", "nanoseconds", "pid", "comm",
				       "main", "/bin/x", "abc123", "container", "docker 0123abcd",
				       "work", "x" };
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2], *vtp[2] = { &vt[0], &vt[1] }, period;
	Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT, *mp[1] = { &m };
	Perftools__Profiles__Function f[2], *fp[2] = { &f[0], &f[1] };
	Perftools__Profiles__Line ln[2], *lnp[2] = { &ln[0], &ln[1] };
	Perftools__Profiles__Location loc[2], *locp[2] = { &loc[0], &loc[1] };
	Perftools__Profiles__Label lab[4], *l1[1] = { &lab[0] }, *l2[2] = { &lab[1], &lab[2] },
				       *l3[2] = { &lab[0], &lab[3] };
	Perftools__Profiles__Sample s[3], *sp[3] = { &s[0], &s[1], &s[2] };
	uint64_t stack[2] = { 1, 2 }, leaf_main[1] = { 2 };
	int64_t v[3][2] = { { 3, 3000 }, { 2, 2000 }, { 4, 4000 } };
	size_t plen;
	u8 *pb, *gz;

	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		perftools__profiles__function__init(&f[i]);
		perftools__profiles__line__init(&ln[i]);
		perftools__profiles__location__init(&loc[i]);
	}
	vt[0].type = S_SAMPLES, vt[0].unit = S_COUNT;
	vt[1].type = S_CPU, vt[1].unit = S_NS;
	perftools__profiles__value_type__init(&period);
	period.type = S_CPU, period.unit = S_NS;
	m.id = 1, m.memory_start = 0x1000, m.memory_limit = 0x2000, m.filename = S_BIN,
	m.build_id = S_BUILD_ID;
	f[0].id = 1, f[0].name = f[0].system_name = S_MAIN;
	f[1].id = 2, f[1].name = f[1].system_name = S_WORK;
	/* location 1: work, location 2: main */
	ln[0].function_id = 2, ln[0].line = 7;
	ln[1].function_id = 1;
	loc[0].id = 1, loc[0].mapping_id = 1, loc[0].address = 0x1100, loc[0].n_line = 1,
	loc[0].line = &lnp[0];
	loc[1].id = 2, loc[1].mapping_id = 1, loc[1].address = 0x1200, loc[1].n_line = 1,
	loc[1].line = &lnp[1];
	for (int i = 0; i < 4; i++)
		perftools__profiles__label__init(&lab[i]);
	lab[0].key = S_PID, lab[0].num = 10;
	lab[1].key = S_PID, lab[1].num = 20;
	lab[2].key = S_CONTAINER, lab[2].str = S_DOCKER;
	lab[3].key = S_COMM, lab[3].str = S_X;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__sample__init(&s[i]);
		s[i].n_value = 2;
		s[i].value = v[i];
	}
	s[0].n_location_id = 2, s[0].location_id = stack, s[0].n_label = 1, s[0].label = l1;
	s[1].n_location_id = 1, s[1].location_id = leaf_main, s[1].n_label = 2, s[1].label = l2;
	s[2].n_location_id = 2, s[2].location_id = stack, s[2].n_label = 2, s[2].label = l3;
	p.n_sample_type = 2, p.sample_type = vtp;
	p.n_sample = 3, p.sample = sp;
	p.n_mapping = 1, p.mapping = mp;
	p.n_location = 2, p.location = locp;
	p.n_function = 2, p.function = fp;
	p.n_string_table = NR_S, p.string_table = strings;
	p.time_nanos = 1795768530000000000ll, p.duration_nanos = 10000000000ll;
	p.period_type = &period, p.period = 52631578;
	plen = perftools__profiles__profile__get_packed_size(&p);
	pb = malloc(plen);
	cr_assert(pb);
	perftools__profiles__profile__pack(&p, pb);
	gz = gzip(pb, plen, len);
	free(pb);
	return gz;
}

/* the resource's attribute key's value as text ("10" for an int) */
static const char *attr(const Resource *r, const char *key, char *buf, size_t size)
{
	for (size_t i = 0; i < r->resource->n_attributes; i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValue *kv = r->resource->attributes[i];

		if (strcmp(kv->key, key))
			continue;
		if (kv->value->value_case == OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__ANY_VALUE__VALUE_INT_VALUE)
			snprintf(buf, size, "%lld", (long long)kv->value->int_value);
		else
			snprintf(buf, size, "%s", kv->value->string_value);
		return buf;
	}
	return NULL;
}

Test(otlp, a_known_pprof_becomes_one_resource_per_process)
{
	struct push_label labels[1] = { { "env", "prod" } };
	struct otlp_resource res = { .host = "node1", .service = "web", .labels = labels, .nr_labels = 1 };
	const Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d;
	size_t gz_len, len;
	u8 *gz = known_pprof(&gz_len), *buf;
	const Resource *r10, *r20;
	const OtProfile *p;
	char text[64];
	Request *req;
	int64_t sum = 0;

	cr_assert_eq(otlp__encode(gz, gz_len, &res, &buf, &len), 0);
	req = opentelemetry__proto__profiles__v1development__export_profiles_service_request__unpack(NULL, len, buf);
	cr_assert(req);
	cr_assert_eq(req->n_resource_profiles, 2);
	r10 = req->resource_profiles[0];
	r20 = req->resource_profiles[1];
	cr_expect_str_eq(attr(r10, "host.name", text, sizeof(text)), "node1");
	cr_expect_str_eq(attr(r10, "service.name", text, sizeof(text)), "web");
	cr_expect_str_eq(attr(r10, "process.pid", text, sizeof(text)), "10");
	cr_expect_str_eq(attr(r10, "process.executable.name", text, sizeof(text)), "x");
	cr_expect_str_eq(attr(r10, "env", text, sizeof(text)), "prod");
	cr_expect_null(attr(r10, "container.id", text, sizeof(text)));
	cr_expect_str_eq(attr(r20, "process.pid", text, sizeof(text)), "20");
	cr_expect_str_eq(attr(r20, "container.id", text, sizeof(text)), "0123abcd");
	d = req->dictionary;
	cr_assert(d);
	cr_assert_eq(d->n_string_table, NR_S);
	cr_assert_eq(d->n_mapping_table, 2, "the zero mapping and the pprof's");
	cr_expect_eq(d->mapping_table[0]->memory_start, 0);
	cr_expect_eq(d->mapping_table[1]->memory_start, 0x1000);
	cr_expect_eq(d->mapping_table[1]->filename_strindex, S_BIN);
	cr_assert_eq(d->mapping_table[1]->n_attribute_indices, 1);
	cr_expect_str_eq(d->attribute_table[d->mapping_table[1]->attribute_indices[0]]->key,
			 "process.executable.build_id.gnu");
	cr_expect_str_eq(d->attribute_table[d->mapping_table[1]->attribute_indices[0]]->value->string_value,
			 "abc123");
	cr_assert_eq(d->n_location_table, 3);
	cr_assert_eq(d->location_table[1]->n_line, 1);
	cr_expect_eq(d->location_table[1]->address, 0x1100);
	cr_expect_eq(d->location_table[1]->mapping_index, 1);
	cr_expect_eq(d->location_table[1]->line[0]->line, 7);
	cr_expect_str_eq(d->string_table[d->function_table[d->location_table[1]->line[0]->function_index]->name_strindex],
			 "work");
	cr_expect_str_eq(d->string_table[d->function_table[d->location_table[2]->line[0]->function_index]->name_strindex],
			 "main");
	cr_assert_geq(d->n_link_table, 1);
	/* pid 10: two samples of work <- main, 3 + 4 */
	cr_assert_eq(r10->n_scope_profiles, 1);
	cr_expect_str_eq(r10->scope_profiles[0]->scope->name, "hsbpf");
	cr_assert_eq(r10->scope_profiles[0]->n_profiles, 1);
	p = r10->scope_profiles[0]->profiles[0];
	cr_expect_str_eq(d->string_table[p->sample_type->type_strindex], "samples");
	cr_expect_str_eq(d->string_table[p->sample_type->unit_strindex], "count");
	cr_expect_str_eq(d->string_table[p->period_type->type_strindex], "cpu");
	cr_expect_eq(p->period, 52631578);
	cr_expect_eq(p->time_nanos, 1795768530000000000ull);
	cr_expect_eq(p->duration_nanos, 10000000000ull);
	cr_expect_eq(p->profile_id.len, 16);
	cr_assert_eq(p->n_sample, 2);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Sample *s = p->sample[i];

		cr_assert_eq(s->n_values, 1);
		sum += s->values[0];
		cr_assert_eq(s->locations_length, 2);
		cr_expect_eq(p->location_indices[s->locations_start_index], 1, "the leaf first: work");
		cr_expect_eq(p->location_indices[s->locations_start_index + 1], 2);
	}
	cr_expect_eq(sum, 7);
	p = r20->scope_profiles[0]->profiles[0];
	cr_assert_eq(p->n_sample, 1);
	cr_expect_eq(p->sample[0]->values[0], 2);
	cr_assert_eq(p->n_location_indices, 1);
	cr_expect_eq(p->location_indices[0], 2);
	opentelemetry__proto__profiles__v1development__export_profiles_service_request__free_unpacked(req, NULL);
	free(buf);
	free(gz);
}

Test(otlp, what_is_not_a_gzipped_pprof_is_refused)
{
	static const u8 junk[] = "not gzip";
	struct otlp_resource res = { .host = "h", .service = "s" };
	size_t len;
	u8 *buf;

	cr_expect_eq(otlp__encode(junk, sizeof(junk), &res, &buf, &len), -EINVAL);
	cr_expect_null(buf);
}

Test(otlp, the_container_id_is_the_labels_last_word)
{
	char buf[64];

	cr_expect_str_eq(otlp__container_id("docker 0123abcd", buf, sizeof(buf)), "0123abcd");
	cr_expect_str_eq(otlp__container_id("pod 01234567 crio 89ab", buf, sizeof(buf)), "89ab");
	cr_expect_null(otlp__container_id("unit ssh.service", buf, sizeof(buf)));
	cr_expect_null(otlp__container_id(NULL, buf, sizeof(buf)));
}
